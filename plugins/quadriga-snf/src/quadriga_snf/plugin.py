"""Registration of quadriga-snf's components, pipelines and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_P = "quadriga_snf"
_PAPER = "Wu, Koehler & Noe 2020, Stochastic Normalizing Flows, NeurIPS (arXiv 2002.06707)"


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the two learners, the sampler, the evaluator, three pipelines and the claims."""
    registry.add(
        "learner",
        "snf",
        f"{_P}.components:SNF",
        summary=(
            "stochastic normalizing flow (normflows RealNVP couplings + Metropolis blocks) trained on the "
            "path KL from the unnormalised target density"
        ),
        paper=f"{_PAPER}, eqs. 9-10",
        tags=("generative", "needs-log-prob", "produces-weights", "trains-network"),
    )
    registry.add(
        "learner",
        "nf",
        f"{_P}.components:NF",
        summary="the same RealNVP flow without stochastic blocks (same parameters), trained by reverse KL",
        paper=f"Dinh et al. 2017 (RealNVP); {_PAPER} (RNVP baseline)",
        tags=("generative", "needs-log-prob", "produces-weights", "trains-network"),
    )
    registry.add(
        "sampler",
        "snf-sample",
        f"{_P}.components:SNFSample",
        summary="draws of a trained (stochastic) flow with exact path importance weights",
        paper=f"{_PAPER}, eq. 9",
        tags=("generative", "produces-weights"),
    )
    registry.add(
        "evaluator",
        "snf-diagnostics",
        f"{_P}.components:SNFDiagnostics",
        summary="Kish ESS, path KL, energy distance (raw and reweighted), double-well mode-probability error",
        paper=f"{_PAPER}",
        tags=("exact-target", "produces-weights", "two-sample"),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "snf-beats-nf",
        f"{_P}.claims:BEATS_NF",
        summary="double well: SNF's reweighted energy distance to the target is below the pure flow's",
        paper=f"{_PAPER}",
    )
    registry.add_claim(
        "snf-beats-mcmc",
        f"{_P}.claims:BEATS_MCMC",
        summary="double well: SNF's reweighted energy distance is below RWM's at equal steps",
        paper=f"{_PAPER}",
    )
    registry.add_claim(
        "snf-ess",
        f"{_P}.claims:ESS",
        summary="double well: SNF's Kish ESS fraction exceeds the pure flow's",
        paper=f"{_PAPER}",
    )
    registry.add_claim(
        "snf-free-energy",
        f"{_P}.claims:FREE_ENERGY",
        summary="double well: SNF's reweighted free-energy profile error (kT) is at least 30 % below the "
        "pure flow's",
        paper=f"{_PAPER}",
    )
    registry.add_claim(
        "snf-convergence",
        f"{_P}.claims:CONVERGENCE",
        summary="double well: SNF's reweighted mode-probability error falls at the Monte Carlo rate "
        "(slope -1/2 +- 0.25)",
        paper=f"{_PAPER}",
    )
