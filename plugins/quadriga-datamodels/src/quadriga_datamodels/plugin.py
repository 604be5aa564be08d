"""Registration of quadriga-datamodels' estimator, pipelines and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_PAPER = "Ilyas, Park, Engstrom, Leclerc, Madry 2022, arXiv 2202.00622"


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the datamodels estimator, its pipelines and its claims."""
    registry.add(
        "estimator",
        "datamodels",
        "quadriga_datamodels.datamodels:Datamodels",
        summary="Per-target lasso from random-subset masks to margins, lambda chosen on held-out models",
        paper=f"{_PAPER}, eq. (2)",
        tags=("attribution",),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "datamodels-lds",
        "quadriga_datamodels.claims:lds_claim",
        summary="Logistic regression on breast cancer, m = 2000, alpha = 0.5: mean LDS over targets > 0.75",
        paper=f"{_PAPER}, sec. 3",
    )
    registry.add_claim(
        "datamodels-vs-influence",
        "quadriga_datamodels.claims:vs_influence_claim",
        summary="Datamodels' LDS exceeds tuned exact-Hessian influence functions' by more than 0.05",
        paper=f"{_PAPER}, sec. 3",
    )
    registry.add_claim(
        "datamodels-removal",
        "quadriga_datamodels.claims:removal_claim",
        summary="Top-10 datamodel points removed drop a target's margin more than 10 random ones, by > 0.5",
        paper=f"{_PAPER}, sec. 4.1",
    )
