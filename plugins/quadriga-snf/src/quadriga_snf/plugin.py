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
        summary="stochastic normalizing flow (normflows RealNVP couplings + Metropolis blocks) trained on "
        "the "
        "path KL from the unnormalised target density",
        paper=_PAPER + ", eqs. 9-10",
        tags=("generative", "needs-log-prob", "produces-weights", "trains-network"),
    )
    registry.add(
        "learner",
        "nf",
        f"{_P}.components:NF",
        summary="the same RealNVP flow without stochastic blocks (same parameters), trained by reverse KL",
        paper="Dinh et al. 2017 (RealNVP); " + _PAPER + " (RNVP baseline)",
        tags=("generative", "needs-log-prob", "produces-weights", "trains-network"),
    )
    registry.add(
        "sampler",
        "snf-sample",
        f"{_P}.components:SNFSample",
        summary="draws of a trained (stochastic) flow with exact path importance weights",
        paper=_PAPER + ", eq. 9",
        tags=("generative", "produces-weights"),
    )
    registry.add(
        "evaluator",
        "snf-diagnostics",
        f"{_P}.components:SNFDiagnostics",
        summary="Kish ESS, path KL, energy distance (raw and reweighted), double-well mode-probability error",
        paper=_PAPER,
        tags=("exact-target", "produces-weights", "two-sample"),
    )
    for name, summary in (
        ("snf-double-well", "SNF vs RealNVP vs RWM at equal Metropolis steps on the 2-D double well"),
        ("snf-gmm", "SNF vs RealNVP vs RWM on the 4-mode 2-D Gaussian mixture"),
        ("snf-banana", "SNF vs RealNVP vs RWM on the 2-D banana"),
    ):
        registry.add_pipeline(name, f"{_P}:pipelines/{name}.toml", summary=summary)
    for name, summary in (
        (
            "snf-beats-nf",
            "double well: SNF's reweighted energy distance to the target is below the pure flow's",
        ),
        ("snf-beats-mcmc", "double well: SNF's reweighted energy distance is below RWM's at equal steps"),
        ("snf-ess", "double well: SNF's Kish ESS fraction exceeds the pure flow's"),
        (
            "snf-free-energy",
            "double well: SNF's reweighted free-energy profile error (kT) is at least 30 % below the "
            "pure flow's",
        ),
        (
            "snf-convergence",
            "double well: SNF's reweighted mode-probability error falls at the Monte Carlo rate "
            "(slope -1/2 +- 0.25)",
        ),
    ):
        registry.add_claim(
            name, f"{_P}.claims:{name.upper().replace('-', '_')[4:]}", summary=summary, paper=_PAPER
        )
