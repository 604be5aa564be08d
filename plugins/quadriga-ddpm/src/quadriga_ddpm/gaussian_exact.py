"""Exact output law of the DDPM / DDIM chain for one isotropic Gaussian target, and KL / TV.

For the target N(mu, sigma^2 I) the noised score is affine,
s_t(x) = (sqrt(ab_t) mu - x) / v_t with v_t = ab_t sigma^2 + 1 - ab_t, so every step of the
chain maps a law N(m mu, s^2 I) to another one of the same form. Starting from
Y_T ~ N(0, I) (m = 0, s^2 = 1) the recursion over (m, s^2) gives the exact output law
N(m_0 mu, s_0^2 I). At sigma = 1 the DDPM step keeps s^2 = 1 exactly and m_0 = 1 - ab_T:
only the initialisation error remains.

KL is in closed form. TV between N(a, s^2 I_d) and N(b, r^2 I_d) has none; it is reduced
exactly to a one-dimensional integral: rotate so that b - a lies on the first axis; the
log-likelihood ratio depends on x_1 and on rho = |x_{2:d}|^2, which is s^2 chi^2_{d-1} under P,
so {p > q} is, for each x_1, an interval of rho whose probability is a chi-square CDF
(regularised incomplete gamma). The remaining integral over x_1 is done by adaptive
Gauss-Kronrod quadrature (``scipy.integrate.quad``) on TV = P(A) - Q(A), A = {p > q}, split at
the points where A changes; absolute tolerance 1e-12.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from scipy import integrate, special

from quadriga_ddpm.noise_schedule import DiscreteSchedule

__all__ = ["kl_isotropic", "output_law", "tv_isotropic"]


def output_law(
    betas: torch.Tensor | DiscreteSchedule,
    sigma2: float,
    *,
    method: str = "ddpm",
    variance: str = "beta",
    eta: float = 0.0,
) -> tuple[float, float]:
    """Exact law of Y_0 for the target N(mu, sigma2 I): Y_0 ~ N(m mu, s2 I).

    Args:
        betas: ``Tensor[T]`` beta table or a :class:`DiscreteSchedule`.
        sigma2: target variance sigma^2 per coordinate (units of x squared).
        method, variance, eta: as in :func:`quadriga_ddpm.sampler.run_chain`.

    Returns:
        ``(m, s2)``: the mean coefficient (dimensionless) and the per-coordinate variance.

    Source: DDPM update of Ho et al. 2020 (Algorithm 2) / DDIM (Song et al. 2021, eq. 12)
    applied to an affine score; derived here.
    """
    from quadriga_ddpm.sampler import _sigmas

    sched = DiscreteSchedule.from_betas(betas)
    b = sched.betas
    ab = sched.alpha_bars.tolist()
    sig = _sigmas(sched, method, variance, eta).tolist()
    m, s2 = 0.0, 1.0
    for i in range(len(ab) - 1, -1, -1):
        a, bt = ab[i], float(b[i])
        v = a * sigma2 + 1 - a
        # Y + c s(Y) with s(Y) = (sqrt(a) mu - Y) / v: coefficient on Y and on mu
        if method == "ddpm":
            k, c = (1 - bt / v) / math.sqrt(1 - bt), bt * math.sqrt(a) / v / math.sqrt(1 - bt)
        else:
            ap = ab[i - 1] if i > 0 else 1.0
            e = math.sqrt(max(1 - ap - sig[i] ** 2, 0.0))
            # x0 = (Y + (1 - a) s) / sqrt(a);  eps = -sqrt(1 - a) s
            kx0, cx0 = (1 - (1 - a) / v) / math.sqrt(a), (1 - a) / v
            keps, ceps = math.sqrt(1 - a) / v, -math.sqrt(1 - a) * math.sqrt(a) / v
            k = math.sqrt(ap) * kx0 + e * keps
            c = math.sqrt(ap) * cx0 + e * ceps
        m, s2 = k * m + c, k * k * s2 + sig[i] ** 2
    return m, s2


def kl_isotropic(mean_gap: float, s2: float, r2: float, dim: int) -> float:
    """KL( N(a, s2 I_d) || N(b, r2 I_d) ) with |a - b| = ``mean_gap`` (nats).

    Args:
        mean_gap: Euclidean distance between the means (units of x).
        s2, r2: per-coordinate variances of P and Q (> 0).
        dim: d.

    Returns:
        0.5 (d s2 / r2 - d + gap^2 / r2 + d log(r2 / s2)), computed stably with log1p/expm1.
    """
    ratio = s2 / r2
    lr = math.log(ratio)
    # ratio - 1 - log(ratio), stable for ratio near 1
    core = math.expm1(lr) - lr
    return 0.5 * (dim * core + mean_gap**2 / r2)


def tv_isotropic(mean_gap: float, s2: float, r2: float, dim: int) -> float:
    """Total variation between N(a, s2 I_d) and N(b, r2 I_d), |a - b| = ``mean_gap``.

    Args:
        mean_gap: distance between the means (units of x), >= 0.
        s2, r2: per-coordinate variances (> 0).
        dim: d >= 1.

    Returns:
        TV in [0, 1] (exact up to quadrature error ~1e-10; see the module docstring).
    """
    s, r, g, d = math.sqrt(s2), math.sqrt(r2), float(mean_gap), int(dim)
    if g == 0 and s2 == r2:
        return 0.0
    c = 1.0 / s2 - 1.0 / r2  # log p/q = h(x1) - (c / 2) rho

    def h(x1: float) -> float:
        return -0.5 * x1 * x1 / s2 + 0.5 * (x1 - g) ** 2 / r2 - d * math.log(s / r)

    def prob_a(x1: float, var: float) -> float:
        """P(log p/q > 0 | x1) when rho ~ var chi^2_{d-1}."""
        hx = h(x1)
        if d == 1 or c == 0:
            return 1.0 if hx > 0 else 0.0
        thr = 2 * hx / c  # condition: rho < thr (c > 0) or rho > thr (c < 0)
        if c > 0:
            return 0.0 if thr <= 0 else float(special.gammainc((d - 1) / 2, thr / (2 * var)))
        return 1.0 if thr <= 0 else float(special.gammaincc((d - 1) / 2, thr / (2 * var)))

    def integrand(x1: float) -> float:
        p = math.exp(-0.5 * x1 * x1 / s2) / (s * math.sqrt(2 * math.pi)) * prob_a(x1, s2)
        q = math.exp(-0.5 * (x1 - g) ** 2 / r2) / (r * math.sqrt(2 * math.pi)) * prob_a(x1, r2)
        return p - q

    lo = min(-12 * s, g - 12 * r)
    hi = max(12 * s, g + 12 * r)
    # breakpoints: roots of h (where the x1-only condition flips) and the means
    qa, qb, qc = 0.5 / r2 - 0.5 / s2, -g / r2, 0.5 * g * g / r2 - d * math.log(s / r)
    pts = [0.0, g]
    if abs(qa) > 1e-300:
        disc = qb * qb - 4 * qa * qc
        if disc >= 0:
            pts += [(-qb - math.sqrt(disc)) / (2 * qa), (-qb + math.sqrt(disc)) / (2 * qa)]
    elif qb != 0:
        pts.append(-qc / qb)
    pts = sorted({p for p in pts if lo < p < hi})
    val, _ = integrate.quad(integrand, lo, hi, points=pts or None, epsabs=1e-13, epsrel=1e-10, limit=400)
    return float(np.clip(abs(val), 0.0, 1.0))
