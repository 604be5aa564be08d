"""Regression-target noise of DSM, TSM and their mixture: Gaussian closed form, Monte Carlo otherwise.

For a regression target T whose conditional mean given X_t is the noised score s_t = grad log p_t,
the quantity a score network has to average out is

    N(sigma) = E | T - s_t(X_t) |^2 = E|T|^2 - E|s_t(X_t)|^2        (units 1 / x^2, summed over d)

(the second form because E[T | X_t] = s_t). It is what De Bortoli et al. 2024 compare between the
DSM and TSM targets (sec. 1.2 and their Gaussian-mixture experiments, sec. 5). For the VP
noising x_t = alpha x_0 + sigma z of a Gaussian pi = N(mu, s^2 I_d), with v = alpha^2 s^2 + sigma^2:

    DSM:          d / sigma^2          - d / v
    TSM:          d / (alpha^2 s^2)    - d / v
    alpha2-mix:   d (alpha^2 / s^2 + sigma^2) - d / v        (target alpha grad log pi(x_0) - sigma z)

so DSM and TSM cross where sigma = alpha s, i.e. sigma* = s / sqrt(1 + s^2) (0.447 for s = 0.5), and
the mixture's noise vanishes for s = 1. On any target with exact draws, score and noised score,
:func:`target_noise_mc` estimates N(sigma) by its sample mean with the standard error of that mean.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from quadriga.seeding import child_generator
from quadriga_target_score_matching.tsm import dsm_target, mixture_target, tsm_target

__all__ = ["crossover_sigma", "gaussian_target_noise", "target_noise_mc"]


def gaussian_target_noise(sigma: float, scale: float, dim: int = 1) -> dict[str, float]:
    """Closed-form N(sigma) of the DSM, TSM and alpha2-mixture targets for pi = N(mu, scale^2 I_dim) (VP).

    Args:
        sigma: VP noise level in (0, 1); scale: the Gaussian's standard deviation (> 0); dim: d.

    Returns:
        ``{"dsm": ..., "tsm": ..., "mixture": ...}`` in 1 / x^2 (module docstring).

    Raises:
        ValueError: sigma outside (0, 1) or scale <= 0.
    """
    if not 0.0 < sigma < 1.0 or scale <= 0:
        raise ValueError(f"need 0 < sigma < 1 and scale > 0, got sigma={sigma}, scale={scale}")
    a2, s2 = 1.0 - sigma * sigma, scale * scale
    fisher_t = dim / (a2 * s2 + sigma * sigma)
    return {
        "dsm": dim / sigma**2 - fisher_t,
        "tsm": dim / (a2 * s2) - fisher_t,
        "mixture": dim * (a2 / s2 + sigma * sigma) - fisher_t,
    }


def target_noise_mc(
    target: Any,
    sigma: float,
    num_samples: int,
    *,
    generator: torch.Generator,
    mixture_weight: str = "alpha2",
    sigma_switch: float = 0.4,
) -> dict[str, tuple[float, float]]:
    """Monte Carlo N(sigma) with its standard error for the DSM, TSM and mixture targets, same draws.

    Args:
        target: exact ``sample(n, generator=)``, ``score(x)`` and ``noised_score(x, alpha_bar)``
            (std's ``gaussian-mixture``); sigma: VP noise level in (0, 1); num_samples: n >= 2;
        generator: draws x_0 (stream ``"x0"``) and z (stream ``"z"``); mixture_weight, sigma_switch: as
            the ``target-score-matching`` learner.

    Returns:
        ``{"dsm" | "tsm" | "mixture": (mean, standard error of the mean)}`` in 1 / x^2.

    Raises:
        ValueError: sigma outside (0, 1) or num_samples < 2.
    """
    if not 0.0 < sigma < 1.0 or num_samples < 2:
        raise ValueError(f"need 0 < sigma < 1 and num_samples >= 2, got {sigma}, {num_samples}")
    x0 = torch.as_tensor(
        target.sample(int(num_samples), generator=child_generator(generator, "x0")), dtype=torch.float64
    )
    z = torch.randn(x0.shape, generator=child_generator(generator, "z"), dtype=torch.float64)
    alpha = math.sqrt(1.0 - sigma * sigma)
    xt = alpha * x0 + sigma * z
    truth = torch.as_tensor(target.noised_score(xt, alpha * alpha), dtype=torch.float64)
    score0 = torch.as_tensor(target.score(x0), dtype=torch.float64)
    targets = {
        "dsm": dsm_target(z, sigma),
        "tsm": tsm_target(score0, alpha),
        "mixture": mixture_target(score0, z, alpha, sigma, mixture_weight, sigma_switch),
    }
    out = {}
    for name, t in targets.items():
        err = (t - truth).square().sum(-1)
        out[name] = (float(err.mean()), float(err.std() / math.sqrt(err.shape[0])))
    return out


def crossover_sigma(sigmas: list[float], dsm: list[float], tsm: list[float]) -> float:
    """The noise level where TSM's target noise overtakes DSM's: log-linear interpolation of log(tsm / dsm).

    Args:
        sigmas: increasing noise levels; dsm, tsm: N(sigma) at them (positive).

    Returns:
        The first crossing of log(tsm / dsm) through 0, interpolated linearly in log sigma; ``nan`` if
        the ratio never crosses 1 on the grid.
    """
    r = [math.log(t / d) for t, d in zip(tsm, dsm, strict=True)]
    for i in range(len(r) - 1):
        if r[i] < 0 <= r[i + 1]:
            w = -r[i] / (r[i + 1] - r[i])
            return math.exp(math.log(sigmas[i]) + w * (math.log(sigmas[i + 1]) - math.log(sigmas[i])))
    return math.nan
