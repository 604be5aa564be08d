"""Registration of quadriga-lame's components, pipelines and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_PAPER = "Boudiaf, Mueller, Ben Ayed & Bertinetto 2022, CVPR, arXiv 2201.05718"


@quadriga.hookimpl
def quadriga_register(registry):
    """Register LAME, the TENT and pseudo-labelling baselines, the pipelines and the claims."""
    registry.add(
        "learner",
        "lame",
        "quadriga_lame.lame:LAME",
        summary="LAME: Laplacian-adjusted maximum likelihood on a frozen classifier's batch outputs",
        paper=f"{_PAPER}, sec. 3",
        tags=("covariate-shift", "supervised", "streaming"),
    )
    registry.add(
        "learner",
        "tent",
        "quadriga_lame.baselines:Tent",
        summary="TENT: online entropy minimisation of BatchNorm affine parameters",
        paper="Wang, Shelhamer, Liu, Olshausen & Darrell 2021, ICLR, sec. 3",
        tags=("covariate-shift", "supervised", "streaming"),
    )
    registry.add(
        "learner",
        "pseudo-label",
        "quadriga_lame.baselines:PseudoLabel",
        summary="Online pseudo-labelling of BatchNorm affine parameters (confident argmax labels)",
        paper="Lee 2013, ICML workshop",
        tags=("covariate-shift", "supervised", "streaming"),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "lame-no-worse",
        "quadriga_lame.claims:NO_WORSE",
        summary=(
            "LAME's worst case over k is never more than 1 point below the non-adapted model, in each of six "
            "digits scenarios"
        ),
        paper=f"{_PAPER}, sec. 5",
    )
    registry.add_claim(
        "lame-beats-tent-non-iid",
        "quadriga_lame.claims:NON_IID",
        summary="On class-sorted and Dirichlet streams LAME's worst case beats TENT's by at least 5 points",
        paper=f"{_PAPER}, sec. 5",
    )
