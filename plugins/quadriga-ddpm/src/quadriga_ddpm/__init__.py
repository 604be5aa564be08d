"""quadriga-ddpm: DDPM / DDIM sampling from a score model, with the dimension-free schedule.

Source: Ho, Jain & Abbeel 2020 (DDPM); Song, Meng & Ermon 2021 (DDIM); Nichol & Dhariwal
2021 (cosine schedule); Li, Cai & Wei 2025, "Dimension-free convergence of diffusion models
for approximate Gaussian mixtures" (arXiv 2504.05300).
"""

from quadriga.versions import version_of

__version__ = version_of("quadriga-ddpm")
