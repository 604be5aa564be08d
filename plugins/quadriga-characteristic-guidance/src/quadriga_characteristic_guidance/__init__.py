"""quadriga-characteristic-guidance: the non-linear correction of classifier-free guidance.

Source: Zheng & Lan 2024, "Characteristic Guidance: Non-linear Correction for Diffusion Model at
Large Guidance Scale", ICML 2024, arXiv 2312.07586.
"""

from quadriga.versions import version_of

__version__ = version_of("quadriga-characteristic-guidance")
