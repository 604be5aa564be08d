"""Registration of quadriga-iso-merging's components, pipeline and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_PAPER = "Marczak et al. 2025, arXiv 2502.04959"
_TAGS = ("real-data", "supervised", "trains-network", "weight-space")


@quadriga.hookimpl
def quadriga_register(registry):
    """Register Iso-C, Iso-CTS, the subspace-alignment evaluator, the pipeline and the claims."""
    registry.add(
        "learner",
        "iso-c",
        "quadriga_iso_merging.iso:IsoC",
        summary="Merge task fine-tunes with the flattened spectrum of their summed task matrices (Iso-C)",
        paper=f"{_PAPER}, eq. 3-4",
        tags=_TAGS,
    )
    registry.add(
        "learner",
        "iso-cts",
        "quadriga_iso_merging.iso:IsoCTS",
        summary="Iso-C on a common plus task-specific subspaces (Iso-CTS)",
        paper=f"{_PAPER}, Algorithm 1",
        tags=_TAGS,
    )
    registry.add(
        "evaluator",
        "subspace-alignment",
        "quadriga_iso_merging.iso:SubspaceAlignment",
        summary="Per-task alignment of task matrices with the summed update's top subspace",
        paper=f"{_PAPER}, eq. 5-6",
        tags=_TAGS,
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "iso-beats-task-arithmetic",
        "quadriga_iso_merging.claims:beats_task_arithmetic",
        summary="Iso-C's normalized accuracy exceeds task arithmetic's by at least 3 points (paired)",
        paper=f"{_PAPER}, Table 1",
    )
    registry.add_claim(
        "iso-alignment-gain",
        "quadriga_iso_merging.claims:alignment_gain",
        summary="Tasks better aligned with the merged subspace gain more: Spearman rho above 0.3",
        paper=f"{_PAPER}, sec. 3, Fig. 3a",
    )
