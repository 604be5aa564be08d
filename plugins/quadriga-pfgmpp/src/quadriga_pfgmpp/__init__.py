"""quadriga-pfgmpp: PFGM++ sampling and training with augmentation dimension D, on the diffusion kit.

Source: Xu, Liu, Tian, Tong, Tegmark & Jaakkola 2023, "PFGM++: Unlocking the potential of
physics-inspired generative models" (ICML, arXiv 2302.04265).
"""

from quadriga.versions import version_of

__version__ = version_of("quadriga-pfgmpp")
