"""Spectra of spectral risk measures and the chi^2-smoothed sample weights.

A spectrum ``sigma`` is a vector ``0 <= sigma_1 <= ... <= sigma_n`` with ``sum sigma = 1``; the
spectral risk of losses ``l`` is ``R_sigma(l) = sum_i sigma_i l_(i)`` with ``l_(1) <= ... <= l_(n)``
the sorted losses, i.e. the largest weights go on the largest losses. Equivalently
``R_sigma(l) = max_{q in P(sigma)} q . l`` over the permutahedron ``P(sigma)`` (the convex hull of
the permutations of ``sigma``).

With the chi^2 penalty of the paper the weights become a smooth function of the losses:

    q(l) = argmax_{q in P(sigma)}  q . l - (nu / 2) ||q - 1/n||^2,      nu = n * shift_cost,

which is the Euclidean projection of ``1/n + l / nu`` onto ``P(sigma)``, computed in
``O(n log n)`` by sorting and one isotonic regression (pool adjacent violators).

Source: Mehta, Roulet, Pillutla, Harchaoui, "Distributionally Robust Optimization with Bias and
Variance Reduction", ICLR 2024, sec. 2 (spectral risk measures, the penalized objective) and
the projection onto the permutahedron (their App. on the "smoothed" weights; official code
ronakdm/prospect ``src/optim/smoothing.py`` and ``src/optim/objectives.py``); the projection by
isotonic regression is Negrinho & Martins 2014 / Blondel et al. 2020, Prop. 3.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import isotonic_regression

from quadriga.errors import ConfigError

__all__ = [
    "SPECTRA",
    "esrm_spectrum",
    "extremile_spectrum",
    "make_spectrum",
    "penalized_risk",
    "smooth_weights",
    "spectral_risk",
    "superquantile_spectrum",
    "uniform_spectrum",
]


def uniform_spectrum(n: int) -> np.ndarray:
    """The empirical mean: ``sigma_i = 1/n``. Returns ``ndarray[n]`` float64."""
    return np.full(n, 1.0 / n)


def superquantile_spectrum(n: int, q: float) -> np.ndarray:
    """The superquantile (CVaR) at level ``q``: mass ``1 / (n (1 - q))`` on the top ``n (1 - q)`` losses.

    Args:
        n: number of losses.
        q: level in ``[0, 1)``; ``q = 0`` is the mean, ``q -> 1`` the maximum.

    Returns:
        ``ndarray[n]``, non-decreasing, summing to 1. When ``n (1 - q)`` is not an integer the
        loss at rank ``floor(n q)`` gets the fractional remainder.

    Source: Mehta et al. 2024, sec. 2 (superquantile spectrum); ``get_superquantile_weights``
    in the official code.
    """
    sigma = np.zeros(n)
    idx = math.floor(n * q)
    frac = 1.0 - (n - idx - 1) / (n * (1.0 - q))
    if frac > 1e-12:
        sigma[idx] = frac
        sigma[idx + 1 :] = 1.0 / (n * (1.0 - q))
    else:
        sigma[idx:] = 1.0 / (n - idx)
    return sigma


def extremile_spectrum(n: int, r: float) -> np.ndarray:
    """The extremile of order ``r``: ``sigma_i = (i^r - (i - 1)^r) / n^r``, ``i = 1..n``.

    ``r = 1`` is the mean; ``r = 2`` the expected maximum of two draws. Returns ``ndarray[n]``.

    Source: Mehta et al. 2024, sec. 2 (extremile, Daouia et al. 2019).
    """
    i = np.arange(n, dtype=np.float64)
    return ((i + 1.0) ** r - i**r) / float(n) ** r


def esrm_spectrum(n: int, rho: float) -> np.ndarray:
    """The exponential spectral risk measure: ``sigma_i propto exp(rho i / n)`` integrated over bins.

    ``sigma_i = e^{-rho} (e^{rho i / n} - e^{rho (i - 1) / n}) / (1 - e^{-rho})``, ``i = 1..n``.
    Returns ``ndarray[n]``.

    Source: Mehta et al. 2024, sec. 2 (ESRM, Cotter & Dowd 2006).
    """
    i = np.arange(n, dtype=np.float64)
    upper, lower = np.exp(rho * (i + 1.0) / n), np.exp(rho * i / n)
    return math.exp(-rho) * (upper - lower) / (1.0 - math.exp(-rho))


SPECTRA = ("superquantile", "extremile", "esrm", "uniform")


def make_spectrum(name: str, n: int, *, q: float = 0.5, r: float = 2.0, rho: float = 1.0) -> np.ndarray:
    """The spectrum ``name`` for ``n`` losses (``q``, ``r``, ``rho`` as in the functions above).

    Raises:
        ConfigError: an unknown name (key ``spectrum``).
    """
    if name == "superquantile":
        return superquantile_spectrum(n, q)
    if name == "extremile":
        return extremile_spectrum(n, r)
    if name == "esrm":
        return esrm_spectrum(n, rho)
    if name == "uniform":
        return uniform_spectrum(n)
    raise ConfigError(f"unknown spectrum '{name}'; choose one of {', '.join(SPECTRA)}.", key="spectrum")


def spectral_risk(losses: np.ndarray, sigma: np.ndarray) -> float:
    """``R_sigma(l) = sum_i sigma_i l_(i)`` (sorted ascending): the unpenalized spectral risk.

    Args:
        losses: ``ndarray[n]`` (units of the loss).
        sigma: ``ndarray[n]`` non-decreasing spectrum.

    Returns:
        A float in the units of the loss.
    """
    return float(np.dot(sigma, np.sort(losses)))


def smooth_weights(losses: np.ndarray, sigma: np.ndarray, nu: float) -> np.ndarray:
    """``q(l)``: the maximizing weights of the chi^2-penalized spectral risk, in the order of ``losses``.

    ``q(l) = Proj_{P(sigma)}(1/n + l / nu)``, computed as ``z - iso(z_sorted - sigma) `` with
    ``z = 1/n + l / nu``, where ``iso`` is the non-decreasing isotonic regression
    (``scipy.optimize.isotonic_regression``). With ``nu <= 1e-16`` the weights are
    ``sigma`` assigned by rank (no smoothing).

    Args:
        losses: ``ndarray[n]``.
        sigma: ``ndarray[n]`` non-decreasing spectrum summing to 1.
        nu: the penalty coefficient ``nu = n * shift_cost`` (units: loss).

    Returns:
        ``ndarray[n]``, a point of ``P(sigma)``: non-negative, summing to 1, and ordered like the losses.

    Source: Mehta et al. 2024, the penalized objective and its maximizer (official code
    ``get_smooth_weights``, "l2" smoothing).
    """
    order = np.argsort(losses, kind="stable")
    if nu < 1e-16:
        q = np.empty_like(sigma)
        q[order] = sigma
        return q
    n = losses.shape[0]
    z = losses[order] / nu + 1.0 / n
    fit = isotonic_regression(z - sigma, increasing=True).x
    q = np.empty(n)
    q[order] = z - fit
    return q


def penalized_risk(losses: np.ndarray, sigma: np.ndarray, nu: float) -> tuple[float, np.ndarray]:
    """``max_{q in P(sigma)} q . l - (nu/2) ||q - 1/n||^2`` and its maximizer ``q(l)``.

    Returns:
        ``(value, q)``: the value (units of the loss) and ``ndarray[n]``. By Danskin's theorem
        the gradient of the value with respect to ``l`` is ``q``.
    """
    q = smooth_weights(losses, sigma, nu)
    n = losses.shape[0]
    return float(q @ losses - 0.5 * nu * np.sum((q - 1.0 / n) ** 2)), q
