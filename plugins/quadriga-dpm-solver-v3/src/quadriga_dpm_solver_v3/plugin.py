"""Registration of quadriga-dpm-solver-v3's sampler, pipeline and claim (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_PAPER = "Zheng, Lu, Chen & Zhu 2023, DPM-Solver-v3, NeurIPS (arXiv 2310.13268)"


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the dpm-solver-v3 sampler, the NFE pipeline and the claim against DPM-Solver++."""
    registry.add(
        "sampler",
        "dpm-solver-v3",
        "quadriga_dpm_solver_v3.sampler:DPMSolverV3",
        summary="Diffusion ODE solver on empirical model statistics computed from the model",
        paper=f"{_PAPER}, sec. 3, eq. 9-15",
        tags=("generative", "noised-score"),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "dpm-solver-v3-fewer-steps",
        "quadriga_dpm_solver_v3.claims:few_step_error",
        summary=(
            "At 5, 6 and 8 NFE the RMS error to the reference flow solve is at most 0.8 x DPM-Solver++'s "
            "(2M and 3M), random 16-D Gaussian mixtures, same x_T"
        ),
        paper=f"{_PAPER}, sec. 5 (Table 1-2)",
    )
