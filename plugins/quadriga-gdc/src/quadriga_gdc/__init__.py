"""quadriga-gdc: GDC, distributional control of autoregressive models (Khalifa, Elsahar, Dymetman 2021).

Distributional policy gradient towards the minimal-KL distribution p ∝ a exp(lambda phi) that
meets a moment constraint, on quadriga-std's enumerable sequence space, against REINFORCE on the
reward lambda phi. Importing this package imports no torch.
"""

from quadriga.versions import version_of

__version__ = version_of("quadriga-gdc")
