"""Data-attribution kit: a deterministic weighted training map, subset zoos cached on disk, the
linear datamodeling score, retrain-after-removal ground truth, and the influence-function and
TracIn baselines.

The convention shared by every attribution estimate: ``Estimate.value`` is ``tau: [n, k]``, the
effect of *including* training point i on target t's correct-class margin, so that training on a
subset S predicts the margin ``sum_{i in S} tau[i, t]`` (plus a per-target constant) and removing
a set R changes it by about ``-sum_{i in R} tau[i, t]``.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> module (imported on first use: the package itself imports neither torch nor scipy)
_WHERE = {
    "InfluenceFunctions": "baselines",
    "TracIn": "baselines",
    "influence_scores": "baselines",
    "tracin_scores": "baselines",
    "LDS": "datamodeling",
    "attribution_matrix": "datamodeling",
    "lds_scores": "datamodeling",
    "lds_interval": "datamodeling",
    "predicted_margins": "datamodeling",
    "RemovalEffect": "removal",
    "removal_drops": "removal",
    "top_k_weights": "removal",
    "CLASSIFICATION_SETS": "task",
    "AttributionTask": "task",
    "ACTIVATIONS": "training",
    "TrainingMap": "training",
    "SubsetZoo": "zoo",
    "default_cache_dir": "zoo",
    "load_or_build_zoo": "zoo",
    "random_masks": "zoo",
}


def __getattr__(name: str) -> Any:
    """Import the module defining ``name`` on first use."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)


__all__ = [
    "ACTIVATIONS",
    "CLASSIFICATION_SETS",
    "LDS",
    "AttributionTask",
    "InfluenceFunctions",
    "RemovalEffect",
    "SubsetZoo",
    "TracIn",
    "TrainingMap",
    "attribution_matrix",
    "default_cache_dir",
    "influence_scores",
    "lds_interval",
    "lds_scores",
    "load_or_build_zoo",
    "predicted_margins",
    "random_masks",
    "removal_drops",
    "top_k_weights",
    "tracin_scores",
]
