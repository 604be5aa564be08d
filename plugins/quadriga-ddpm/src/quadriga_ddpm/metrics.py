"""Sample-based diagnostics of a Gaussian-mixture fit that stay meaningful in high dimension.

All three use the posterior responsibilities r_k(x) = P(component k | x) of the target (the
soft Bayes assignment), for which E_x[r_k(x) f(x, k)] = E_{k, x}[f(x, k)] holds exactly under
the target, whatever the overlap between components:

* ``weight_error``: 0.5 sum_k |mean_i r_k(x_i) - pi_k| (TV between the weight vectors);
* ``radial_error``: |(1/n) sum_i sum_k r_k(x_i) |x_i - mu_k|^2 / d - sbar^2| / sbar^2, where
  sbar^2 = sum_k pi_k tr(Sigma_k) / d (sigma^2 for isotropic components): the relative error
  of the per-coordinate spread;
* ``direction_w1``: the mean over k of the 1-D Wasserstein-1 distance between the samples
  projected on u_k = mu_k / |mu_k| and the exact projected mixture sum_j pi_j
  N(u_k . mu_j, u_k^T Sigma_j u_k), computed as the integral of |F_n - F| on a fine grid
  (units of x).

Each has a Monte-Carlo floor of order n^(-1/2): compare with the same metric on exact samples.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from scipy import special

__all__ = [
    "direction_w1",
    "loglog_fit",
    "loglog_slope",
    "mixture_metrics",
    "radial_error",
    "responsibilities",
    "weight_error",
]

METRICS = ("weight_error", "radial_error", "direction_w1")


def responsibilities(target: Any, x: torch.Tensor) -> torch.Tensor:
    """Posterior component probabilities ``Tensor[n, K]`` float64 for ``x: Tensor[n, d]``."""
    return torch.softmax(target.component_log_probs(x.to(torch.float64)), -1)


def weight_error(target: Any, x: torch.Tensor, resp: torch.Tensor | None = None) -> float:
    """TV between the estimated and true mixture weights, in [0, 1] (see module docstring)."""
    r = responsibilities(target, x) if resp is None else resp
    return 0.5 * float((r.mean(0) - target.mixture_weights).abs().sum())


def radial_error(target: Any, x: torch.Tensor, resp: torch.Tensor | None = None) -> float:
    """Relative error of the responsibility-weighted |x - mu_k|^2 / d against its exact value."""
    x = x.to(torch.float64)
    r = responsibilities(target, x) if resp is None else resp
    mu = target.component_means
    sq = (x * x).sum(-1, keepdim=True) - 2 * x @ mu.T + (mu * mu).sum(-1)  # [n, K]
    stat = float((r * sq).sum(-1).mean()) / x.shape[1]
    cov = target.component_covariances
    ref = float((target.mixture_weights * torch.diagonal(cov, dim1=-2, dim2=-1).sum(-1)).sum()) / x.shape[1]
    return abs(stat - ref) / ref


def direction_w1(target: Any, x: torch.Tensor, *, grid_points: int = 20001) -> float:
    """Mean over components k of W1(projection of x on mu_k/|mu_k|, exact projected law).

    Args:
        target: a mixture with ``mixture_weights``, ``component_means``, ``component_covariances``.
        x: ``Tensor[n, d]``.
        grid_points: resolution of the integral of |F_n - F| (trapezoid rule).

    Returns:
        The mean W1 (units of x); components with a zero mean are skipped (NaN if all are).
    """
    x = x.to(torch.float64)
    w = target.mixture_weights.numpy()
    mu = target.component_means
    cov = target.component_covariances
    norms = mu.norm(dim=-1)
    out = []
    for k in range(mu.shape[0]):
        if float(norms[k]) == 0.0:
            continue
        u = mu[k] / norms[k]
        y = np.sort((x @ u).numpy())
        m = (mu @ u).numpy()
        sd = torch.sqrt(torch.einsum("i,kij,j->k", u, cov, u)).numpy()
        lo = min(y[0], float((m - 10 * sd).min()))
        hi = max(y[-1], float((m + 10 * sd).max()))
        grid = np.linspace(lo, hi, grid_points)
        f_emp = np.searchsorted(y, grid, side="right") / y.size
        f_true = (w[None, :] * special.ndtr((grid[:, None] - m[None, :]) / sd[None, :])).sum(-1)
        out.append(float(np.trapezoid(np.abs(f_emp - f_true), grid)))
    return float(np.mean(out)) if out else math.nan


def mixture_metrics(target: Any, x: torch.Tensor) -> dict[str, float]:
    """``{"weight_error", "radial_error", "direction_w1"}`` for samples ``x: Tensor[n, d]``."""
    r = responsibilities(target, x)
    return {
        "weight_error": weight_error(target, x, r),
        "radial_error": radial_error(target, x, r),
        "direction_w1": direction_w1(target, x),
    }


def loglog_fit(
    steps: list[float], errors: list[float], floors: list[float] | None = None, *, floor_factor: float = 2.0
) -> tuple[float, float, int]:
    """Least-squares slope of log(error) against log(T) and its standard error, above the floor.

    Args:
        steps: T values; errors: the metric at each T (> 0 to be used).
        floors: the metric of exact samples at each T (or None: use every positive point).
        floor_factor: a point is used only when error > floor_factor * floor.

    Returns:
        ``(slope, standard_error, points_used)`` (dimensionless). The slope is NaN with fewer than
        2 usable points; the standard error (ordinary least squares, from the residual variance
        with points_used - 2 degrees of freedom) is NaN with fewer than 3.

    Source: ordinary least squares; the floor rule is this plugin's test design.
    """
    pts = [
        (math.log(t), math.log(e))
        for i, (t, e) in enumerate(zip(steps, errors, strict=False))
        if e > 0 and math.isfinite(e) and (floors is None or e > floor_factor * floors[i])
    ]
    if len(pts) < 2:
        return math.nan, math.nan, len(pts)
    a = np.array(pts)
    (slope, icept) = np.polyfit(a[:, 0], a[:, 1], 1)
    if len(pts) < 3:
        return float(slope), math.nan, len(pts)
    resid = a[:, 1] - (slope * a[:, 0] + icept)
    sxx = float(((a[:, 0] - a[:, 0].mean()) ** 2).sum())
    se = math.sqrt(float((resid**2).sum()) / (len(pts) - 2) / sxx)
    return float(slope), se, len(pts)


def loglog_slope(
    steps: list[float], errors: list[float], floors: list[float] | None = None, *, floor_factor: float = 2.0
) -> tuple[float, int]:
    """Least-squares slope of log(error) against log(T), above the Monte-Carlo floor.

    Args: as :func:`loglog_fit`.

    Returns:
        ``(slope, points_used)``; the slope is NaN with fewer than 2 usable points.
    """
    slope, _, used = loglog_fit(steps, errors, floors, floor_factor=floor_factor)
    return slope, used
