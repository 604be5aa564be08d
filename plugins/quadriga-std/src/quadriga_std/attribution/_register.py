"""Registrations of the data-attribution kit (lazy "module:attr" paths; imports nothing heavy)."""

from __future__ import annotations

from typing import Any

_P = "quadriga_std.attribution"


def register(registry: Any) -> None:
    """Add the attribution task, the LDS and removal evaluators and the IF / TracIn baselines."""
    registry.add(
        "dataset",
        "attribution-task",
        f"{_P}.task:AttributionTask",
        summary="Bundled classification set, deterministic full-batch training map, cached subset zoos",
        paper="Ilyas et al. 2022, arXiv 2202.00622, sec. 2",
        tags=("attribution", "supervised"),
    )
    registry.add(
        "evaluator",
        "lds",
        f"{_P}.datamodeling:LDS",
        summary="Linear datamodeling score: Spearman of predicted vs retrained margins on fresh subsets",
        paper="Park et al. 2023, arXiv 2303.14186, Def. 2.3",
        tags=("attribution",),
    )
    registry.add(
        "evaluator",
        "removal-effect",
        f"{_P}.removal:RemovalEffect",
        summary="Margin drop after retraining without the top-k attributed points vs k random points",
        paper="Ilyas et al. 2022, arXiv 2202.00622, sec. 4.1",
        tags=("attribution",),
    )
    registry.add(
        "estimator",
        "influence-function",
        f"{_P}.baselines:InfluenceFunctions",
        summary="Influence functions with the exact Hessian (damping tuned on validation subsets)",
        paper="Koh & Liang 2017, arXiv 1703.04730, eq. (2)-(3)",
        tags=("attribution",),
    )
    registry.add(
        "estimator",
        "tracin",
        f"{_P}.baselines:TracIn",
        summary="TracIn-CP: gradient inner products summed over checkpoints of the training run",
        paper="Pruthi et al. 2020, arXiv 2002.08484, eq. (3)",
        tags=("attribution",),
    )
