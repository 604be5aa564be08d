"""Registration of quadriga-git-rebasin's learners, pipelines and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_PAPER = "Ainsworth, Hayase, Srinivasa 2023, arXiv 2209.04836"
_TAGS = ("real-data", "supervised", "trains-network", "weight-space")


@quadriga.hookimpl
def quadriga_register(registry):
    """Register weight matching, activation matching, the re-basin pipelines and their claims."""
    registry.add(
        "learner",
        "weight-matching",
        "quadriga_git_rebasin.matching:WeightMatching",
        summary="Permute a network's hidden units onto another's by matching weights (coordinate descent)",
        paper=f"{_PAPER}, Algorithm 1",
        tags=_TAGS,
    )
    registry.add(
        "learner",
        "activation-matching",
        "quadriga_git_rebasin.matching:ActivationMatching",
        summary="Permute a network's hidden units onto another's by matching activations",
        paper=f"{_PAPER}, sec. 3.1",
        tags=_TAGS,
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "rebasin-barrier-drop",
        "quadriga_git_rebasin.claims:barrier_drop",
        summary="After weight matching the loss barrier is below 0.1 x the naive one (width 128, paired)",
        paper=f"{_PAPER}, sec. 5.1, Fig. 2",
    )
    registry.add_claim(
        "rebasin-width-slope",
        "quadriga_git_rebasin.claims:width_slope",
        summary="The matched barrier falls with width: log-log slope below -0.5 over widths 16 to 512",
        paper=f"{_PAPER}, sec. 5.3, Fig. 4",
    )
