"""quadriga-srmc: Score-Repellent Monte Carlo (Hu et al. 2026, arXiv 2604.22948).

A wrapper sampler that runs any MCMC kernel of quadriga-std on the history-dependent
surrogate pi_theta(x) proportional to pi(x) exp(-alpha theta^T s(x)), where theta is the
running average of the scores s(X_n) along each chain. Importing this package imports no torch.
"""

from quadriga.versions import version_of

__version__ = version_of("quadriga-srmc")
