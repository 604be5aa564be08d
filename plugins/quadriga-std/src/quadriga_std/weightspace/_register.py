"""Registrations of the weight-space kit (lazy "module:attr" paths; imports nothing heavy)."""

from __future__ import annotations

from typing import Any

_P = "quadriga_std.weightspace"


def register(registry: Any) -> None:
    """Add the zoo task, the pair and merging learners and the two evaluators to ``registry``."""
    registry.add(
        "dataset",
        "mlp-zoo",
        f"{_P}.zoo:MLPZoo",
        summary="load_digits with small MLPs trained on demand (seed pairs, halves, task fine-tunes), cached",
        paper="Ainsworth et al. 2023, sec. 5.1; Ilharco et al. 2023, sec. 2",
        tags=("real-data", "supervised", "trains-network", "weight-space"),
    )
    registry.add(
        "learner",
        "zoo-pair",
        f"{_P}.barrier:ZooPair",
        summary="Two zoo members from independent seeds, unaligned (the naive endpoints)",
        paper="Frankle et al. 2020, sec. 3",
        tags=("real-data", "supervised", "trains-network", "weight-space"),
    )
    registry.add(
        "evaluator",
        "interpolation-barrier",
        f"{_P}.barrier:InterpolationBarrier",
        summary="Loss and accuracy barriers along the linear path between two networks",
        paper="Ainsworth et al. 2023, eq. 1",
        tags=("real-data", "supervised", "trains-network", "weight-space"),
    )
    registry.add(
        "learner",
        "weight-averaging",
        f"{_P}.merging:WeightAveraging",
        summary="Merge task fine-tunes by averaging their weights",
        paper="Wortsman et al. 2022, eq. 1",
        tags=("real-data", "supervised", "trains-network", "weight-space"),
    )
    registry.add(
        "learner",
        "task-arithmetic",
        f"{_P}.merging:TaskArithmetic",
        summary="Merge task fine-tunes by adding scaled task vectors (scaling tuned on validation)",
        paper="Ilharco et al. 2023, sec. 2",
        tags=("real-data", "supervised", "trains-network", "weight-space"),
    )
    registry.add(
        "learner",
        "ties-merging",
        f"{_P}.merging:Ties",
        summary="Merge task fine-tunes by trimming, electing signs and a disjoint mean (TIES)",
        paper="Yadav et al. 2023, Algorithm 1",
        tags=("real-data", "supervised", "trains-network", "weight-space"),
    )
    registry.add(
        "evaluator",
        "normalized-accuracy",
        f"{_P}.accuracy:NormalizedAccuracy",
        summary="Accuracy of a merged multi-task model relative to each task's fine-tune",
        paper="Ilharco et al. 2023, sec. 4",
        tags=("real-data", "supervised", "trains-network", "weight-space"),
    )
