"""Registration of quadriga-magic's estimator, pipelines and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_PAPER = "Ilyas & Engstrom 2025, arXiv 2504.16430"


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the MAGIC estimator, its pipelines and its claims."""
    registry.add(
        "estimator",
        "magic",
        "quadriga_magic.magic:MAGIC",
        summary="Exact data attribution by metagradients through a deterministic training run",
        paper=f"{_PAPER}, eq. (3)",
        tags=("attribution", "trains-network"),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "magic-lds",
        "quadriga_magic.claims:lds_claim",
        summary="Digits MLP, 1 % random removals: MAGIC's mean LDS over targets is near 0.9 (> 0.85)",
        paper=f"{_PAPER}, sec. 4",
    )
    registry.add_claim(
        "magic-vs-baselines",
        "quadriga_magic.claims:vs_baselines_claim",
        summary="MAGIC's LDS exceeds influence functions' and equal-compute datamodels' by more than 0.2",
        paper=f"{_PAPER}, sec. 4",
    )
