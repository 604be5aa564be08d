"""The PFGM++ perturbation kernel, its prior and the D <-> sigma alignment (Xu et al. 2023).

Data y in R^N are embedded in R^(N + D); the electric field of the data "charges" at augmented
radius r perturbs y with the kernel p_r(x | y) proportional to (||x - y||^2 + r^2)^(-(N + D) / 2)
(Xu et al. 2023, "PFGM++", eq. 4). With the alignment r = sigma sqrt(D) (their Prop. 3.1 / sec. 4)
this kernel is the N-variate Student t with D degrees of freedom and scale sigma:

    x - y = sigma sqrt(D / W) g,  g ~ N(0, I_N),  W ~ chi^2_D,

a Gaussian scale mixture that tends to N(0, sigma^2 I) as D -> infinity (the diffusion / EDM limit).
Its radius R = ||x - y|| satisfies R^2 / r^2 = B / (1 - B) with B ~ Beta(N / 2, D / 2), which is how
the official code draws it (``training/loss.py``: ``np.random.beta(N/2, D/2)``, clipped to
[1e-3, 1 - 1e-3], then R = r sqrt(B / (1 - B)) along a uniform direction).

Two samplers of the kernel live here, equal in law (a test checks R against scipy's beta-prime):
:func:`perturb` is the paper's beta draw, used by the learner; :func:`prior_draw` is the scale-mixture
form with the chi^2 drawn by inverse CDF from a uniform, so that D = inf gives exactly
sigma_max z from the same z (the EDM prior) and finite D couples to it (common random numbers).
All draws are float64 (the official code also keeps r and B in float64).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from scipy import stats

from quadriga.errors import ConfigError

__all__ = ["BETA_CLIP", "check_aug_dim", "perturb", "prior_draw", "r_of_sigma", "radius_ratio_law"]

#: the official code's clipping of B ~ Beta(N / 2, D / 2) (``training/loss.py``)
BETA_CLIP = 1e-3


def check_aug_dim(aug_dim: float, key: str = "aug_dim") -> float:
    """Validate D: a float >= 1 or ``inf`` (the diffusion limit).

    Raises:
        ConfigError: D < 1 or NaN (naming ``key``).
    """
    d = float(aug_dim)
    if math.isnan(d) or d < 1:
        raise ConfigError(
            f"'{key}' (the augmentation dimension D) must be >= 1 or inf, got {aug_dim}.", key=key
        )
    return d


def r_of_sigma(sigma: float | torch.Tensor, aug_dim: float) -> float | torch.Tensor:
    """The alignment r = sigma sqrt(D) (Xu et al. 2023, sec. 4, "D <-> sigma"); units of x.

    Raises:
        ConfigError: D = inf (r is then unbounded; use sigma itself).
    """
    if math.isinf(aug_dim):
        raise ConfigError("r = sigma sqrt(D) is infinite for D = inf; work with sigma.", key="aug_dim")
    return sigma * math.sqrt(aug_dim)


def _uniform(n: int, generator: torch.Generator) -> np.ndarray:
    return torch.rand(n, generator=generator, dtype=torch.float64).clamp(1e-300, 1 - 1e-16).numpy()


def perturb(
    y: torch.Tensor, sigma: torch.Tensor, aug_dim: float, generator: torch.Generator, *, clip: bool = True
) -> torch.Tensor:
    """Draw x ~ p_r(. | y) at r = sigma sqrt(D) the paper's way (``training/loss.py``, pfgmpp branch).

    B ~ Beta(N / 2, D / 2) (inverse CDF of a uniform from ``generator``), clipped to
    [1e-3, 1 - 1e-3] when ``clip`` (as the official code does); R = r sqrt(B / (1 - B)); u uniform on
    the unit sphere of R^N; x = y + R u. For D = inf, x = y + sigma g exactly.

    Args:
        y: ``Tensor[n, N]`` data.
        sigma: ``Tensor[n]`` (or a scalar) noise levels (units of x).
        aug_dim: D >= 1 or inf.
        generator: the random stream.
        clip: apply the official code's clipping of B (it truncates the radius law at both ends).

    Returns:
        ``Tensor[n, N]`` float64.
    """
    d = check_aug_dim(aug_dim)
    n, dim = y.shape
    sig = torch.as_tensor(sigma, dtype=torch.float64).expand(n)
    g = torch.randn(n, dim, generator=generator, dtype=torch.float64)
    if math.isinf(d):
        return y.to(torch.float64) + sig[:, None] * g
    b = stats.beta.ppf(_uniform(n, generator), dim / 2.0, d / 2.0)
    if clip:
        b = np.clip(b, BETA_CLIP, 1 - BETA_CLIP)
    radius = sig * math.sqrt(d) * torch.from_numpy(np.sqrt(b / (1 - b)))
    u = g / g.norm(dim=1, keepdim=True)
    return y.to(torch.float64) + radius[:, None] * u


def prior_draw(
    num: int, dim: int, sigma_max: float, aug_dim: float, generator: torch.Generator
) -> torch.Tensor:
    """The PFGM++ prior x_T ~ p_{r_max}(. | 0) as the scale mixture sigma_max sqrt(D / W) z.

    z ~ N(0, I_N) is drawn first from ``generator`` (so D = inf gives sigma_max z, the EDM prior drawn
    from the same stream), then W = F^{-1}_{chi^2_D}(U) from a uniform U. In law this is the paper's
    prior R_max u with R_max = r_max sqrt(B / (1 - B)), B ~ Beta(N / 2, D / 2) (``generate.py``,
    ``rand_beta_prime``; unclipped).

    Args:
        num: n; dim: N; sigma_max: sigma at the start (units of x); aug_dim: D >= 1 or inf.
        generator: the ``"x_T"`` stream of the stage.

    Returns:
        ``Tensor[n, N]`` float64.
    """
    d = check_aug_dim(aug_dim)
    z = torch.randn(int(num), int(dim), generator=generator, dtype=torch.float64)
    if math.isinf(d):
        return float(sigma_max) * z
    w = stats.chi2.ppf(_uniform(int(num), generator), d)
    return float(sigma_max) * z * torch.from_numpy(np.sqrt(d / w))[:, None]


def radius_ratio_law(dim: int, aug_dim: float) -> stats.rv_continuous:
    """The law of R^2 / r^2 = B / (1 - B): scipy's beta-prime(N / 2, D / 2) (frozen), for tests."""
    return stats.betaprime(dim / 2.0, check_aug_dim(aug_dim) / 2.0)
