"""Registration of quadriga-ddpm's components, pipeline and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_P = "quadriga_ddpm"
_PAPER = (
    "Li, Cai & Wei 2025, Dimension-free convergence of diffusion models for approximate Gaussian mixtures "
    "(arXiv 2504.05300)"
)


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the samplers (ddpm, ddim, dpm-solver-pp, reference-ode), target, evaluators, claim."""
    registry.add(
        "sampler",
        "ddpm",
        f"{_P}.sampler:DDPM",
        summary=(
            "DDPM reverse chain from a score model (analytic target or learned network); theory / linear / "
            "cosine schedules"
        ),
        paper=f"Ho et al. 2020, Algorithm 2; {_PAPER}",
        tags=("generative", "noised-score"),
    )
    registry.add(
        "sampler",
        "ddim",
        f"{_P}.sampler:DDIM",
        summary="DDIM (eta = 0 deterministic, eta > 0 stochastic) from a score model",
        paper="Song, Meng & Ermon 2021, eq. 12",
        tags=("generative", "noised-score"),
    )
    registry.add(
        "target",
        "sphere-mixture",
        f"{_P}.targets:SphereMixture",
        summary="K isotropic Gaussians N(mu_k, sigma^2 I), means on a sphere of radius 6, fast noised score",
        paper=f"{_PAPER}",
        tags=("exact-target", "noised-score"),
    )
    registry.add(
        "evaluator",
        "mixture-diagnostics",
        f"{_P}.evaluate:MixtureDiagnostics",
        summary=(
            "Weight error, 1-D W1 along mean directions, radial spread; exact KL/TV for K = 1; error-vs-T "
            "slopes"
        ),
        paper=f"{_PAPER}",
        tags=("exact-target", "generative"),
    )
    registry.add(
        "sampler",
        "dpm-solver-pp",
        f"{_P}.ode_samplers:DPMSolverPP",
        summary="DPM-Solver++ multistep in lambda (order 1 = DDIM, 2M, 3M), NFE budget, shared x_T",
        paper="Lu et al. 2022, DPM-Solver++ (arXiv 2211.01095), eq. 8, Algorithm 2",
        tags=("generative", "noised-score"),
    )
    registry.add(
        "sampler",
        "reference-ode",
        f"{_P}.ode_samplers:ReferenceODE",
        summary="High-accuracy probability-flow ODE solve (scipy DOP853, rtol 1e-10) from the shared x_T",
        paper="Lu et al. 2022, DPM-Solver (arXiv 2206.00927), eq. 3.3 in lambda",
        tags=("generative", "noised-score"),
    )
    registry.add(
        "evaluator",
        "solver-error",
        f"{_P}.solver_error:SolverError",
        summary="RMS / max distance of ODE-solver endpoints to the reference solve from the same x_T",
        paper="Lu et al. 2022 (sec. 6); Zheng et al. 2023 (DPM-Solver-v3, sec. 5)",
        tags=("generative",),
    )
    registry.add(
        "evaluator",
        "score-error",
        f"{_P}.score_error:ScoreError",
        summary="MSE of a score model (network or target) to the exact noised score, per VP noise level",
        paper="Vincent 2011 (denoising score matching); De Bortoli et al. 2024 (target score matching)",
        tags=("noised-score", "exact-target"),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "ddpm-gmm-dimension-free",
        f"{_P}.claims:dimension_free",
        summary=(
            "DDPM error against T collapses across d and K; log-log slope about -1 with the theory schedule"
        ),
        paper=f"{_PAPER}, Theorem 1",
    )
