"""quadriga-dpm-solver-v3: DPM-Solver-v3 on empirical model statistics computed from the model.

Source: Zheng, Lu, Chen & Zhu 2023, "DPM-Solver-v3: improved diffusion ODE solver with empirical
model statistics", NeurIPS 2023, arXiv 2310.13268.
"""

from quadriga.versions import version_of

__version__ = version_of("quadriga-dpm-solver-v3")
