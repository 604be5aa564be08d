"""Registration of the sequence kit's components (lazy "module:attr" paths only)."""

from __future__ import annotations

from typing import Any

_P = "quadriga_std.sequences"


def register(registry: Any) -> None:
    """Add the enumerable sequence-space task and its exact evaluator."""
    registry.add(
        "target",
        "sequence-space",
        f"{_P}.space:SequenceSpace",
        summary="All V^L sequences, a random bigram or tabular base model a, a feature phi with a moment",
        paper="Khalifa et al. 2021 (GDC), arXiv 2012.11635, sec. 2",
        tags=("discrete-state", "exact-target"),
    )
    registry.add(
        "evaluator",
        "sequence-divergence",
        f"{_P}.evaluators:SequenceDivergence",
        summary="Exact KL(p||pi), KL(pi||a), moment error and mode coverage of sequence policies",
        paper="Khalifa et al. 2021 (GDC), sec. 3.1",
        tags=("exact-target",),
    )
