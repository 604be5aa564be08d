"""Likelihood-ratio regularized quantile regression (LR-QR) for conformal sets under covariate shift.

Given scores ``S = |y - mu(x)|`` on labeled source data, unlabeled target covariates, and a
threshold class ``h_theta(x) = theta . phi(x)`` (``phi(x) = [1, x]``), LR-QR solves

    min_{theta, beta}  E1[ l_{1-alpha}(h(X), S) ] + lam * ( beta^2/2 * E1[h(X)^2] - beta * E2[h(X)] )

(``E1``: empirical mean over source points, ``E2``: over target covariates, ``l_tau`` the pinball
loss). The regulariser equals ``lam/2 * E1[(beta h - r)^2]`` up to a constant because
``E1[r h] = E2[h]`` for ``r = dP2/dP1``, so it pulls ``beta h`` towards the likelihood ratio
without estimating it. For fixed ``h`` the optimal ``beta = E2[h] / E1[h^2]`` (closed form, used
at every step), and the gradient in ``theta`` is taken by full-batch Adam with a cosine-decayed
step size, started from the unweighted ``1 - alpha`` score quantile.

The prediction set is ``C(x) = {y : |y - mu(x)| <= h(x)} = [mu(x) - h(x), mu(x) + h(x)]``
(empty when ``h(x) < 0``).

Source: Joshi, Kiyani, Pappas, Dobriban, Hassani 2025, "Likelihood-Ratio Regularized Quantile
Regression: Adapting Conformal Prediction to High-Dimensional Covariate Shifts", arXiv 2502.13030,
the LR-QR objective (sec. 3).
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

import numpy as np
import torch

from quadriga.threads import single_thread

__all__ = ["features", "fit_lrqr", "select_and_fit"]


def features(X: np.ndarray | torch.Tensor) -> torch.Tensor:
    """Feature map ``phi(x) = [1, x]``: ``[n, p] -> Tensor[n, p + 1]`` (float64)."""
    X = torch.as_tensor(np.asarray(X), dtype=torch.float64)
    return torch.cat([torch.ones(X.shape[0], 1, dtype=X.dtype), X], dim=1)


def _pinball(h: torch.Tensor, s: torch.Tensor, tau: float) -> torch.Tensor:
    diff = s - h
    return torch.maximum(tau * diff, (tau - 1.0) * diff)


def fit_lrqr(
    phi1: torch.Tensor,
    s1: torch.Tensor,
    phi2: torch.Tensor,
    alpha: float,
    lam: torch.Tensor,
    *,
    steps: int = 1500,
    lr: float = 0.05,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Solve the LR-QR problem for a batch of independent problems.

    Args:
        phi1: ``Tensor[B, n1, k]`` source features; s1: ``Tensor[B, n1]`` source scores (units of y).
        phi2: ``Tensor[B, n2, k]`` target features (unlabeled).
        alpha: miscoverage in (0, 1); the pinball level is ``tau = 1 - alpha``.
        lam: ``Tensor[B]`` regularisation strengths ``lambda >= 0`` (units of the score).
        steps: Adam iterations; lr: initial Adam step size (units of theta).

    Returns:
        ``(theta: Tensor[B, k], beta: Tensor[B])``; ``h(x) = phi(x) @ theta``.

    Source: Joshi et al. 2025, arXiv 2502.13030, LR-QR objective (sec. 3); ``beta`` eliminated in
    closed form (``beta* = E2[h]/E1[h^2]``).
    """
    small = phi1.numel() + phi2.numel() < 5_000_000
    # tiny matmuls: intra-op threads only add synchronisation cost (large on a busy machine)
    with single_thread() if small else contextlib.nullcontext():
        return _fit(phi1, s1, phi2, alpha, lam, steps, lr)


def _fit(phi1, s1, phi2, alpha, lam, steps, lr):
    tau = 1.0 - alpha
    B, _, k = phi1.shape
    theta = torch.zeros(B, k, dtype=torch.float64)
    theta[:, 0] = torch.quantile(s1, tau, dim=1)
    theta.requires_grad_(True)
    opt = torch.optim.Adam([theta], lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps, eta_min=lr * 1e-3)
    scale = s1.abs().mean(dim=1).clamp_min(1e-12)  # keep step sizes unit-free
    lam = lam.to(torch.float64)
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        h1 = torch.einsum("bnk,bk->bn", phi1, theta)
        h2 = torch.einsum("bnk,bk->bn", phi2, theta)
        m11, m2 = h1.square().mean(1), h2.mean(1)
        with torch.no_grad():
            beta = m2 / m11.clamp_min(1e-12)
        loss = _pinball(h1, s1, tau).mean(1) + lam * (0.5 * beta.square() * m11 - beta * m2)
        (loss / scale).sum().backward()
        opt.step()
        sched.step()
    theta = theta.detach()
    h1 = torch.einsum("bnk,bk->bn", phi1, theta)
    h2 = torch.einsum("bnk,bk->bn", phi2, theta)
    return theta, h2.mean(1) / h1.square().mean(1).clamp_min(1e-12)


def _weighted_coverage_gap(theta, beta, phi_v1, s_v1, tau):
    """Validation criterion ``|sum (beta h)_+ 1{S <= h} / sum (beta h)_+ - tau|`` on held-out source data."""
    h = torch.einsum("bnk,bk->bn", phi_v1, theta)
    w = (beta[:, None] * h).clamp_min(0.0)
    cov = (w * (s_v1 <= h)).sum(1) / w.sum(1).clamp_min(1e-12)
    return (cov - tau).abs()


def select_and_fit(
    problems: list[dict[str, Any]],
    alpha: float,
    lambdas: tuple[float, ...],
    *,
    validation_fraction: float = 0.3,
    steps: int = 1500,
    lr: float = 0.05,
) -> list[dict[str, Any]]:
    """Choose ``lambda`` on a validation split, then refit on all data, for many problems at once.

    Each problem holds ``X1: ndarray[n1, p]`` (labeled source covariates), ``s1: ndarray[n1]``
    (their scores) and ``X2: ndarray[n2, p]`` (unlabeled target covariates), and ``perm1``,
    ``perm2`` (random permutations of ``n1`` and ``n2`` that decide the validation parts).

    Lambda selection (documented choice, see README): fit on the first ``1 - validation_fraction``
    of each set for every ``lambda`` in ``lambdas`` (multiplied by the mean fit-part score so the grid
    is unit-free); on the held-out source part compute the coverage weighted by the fitted
    likelihood-ratio surrogate ``(beta h)_+`` (an estimate of target coverage, since ``beta h`` is pulled
    towards ``r``) and keep the ``lambda`` whose estimate is closest to ``1 - alpha``. Then refit on all
    of ``X1``/``X2`` with that ``lambda``.

    Returns:
        one dict per problem: ``theta: Tensor[p + 1]``, ``beta`` (float), ``lam`` (the chosen grid value),
        ``gap`` (its validation criterion).
    """
    L = len(lambdas)
    phi1f, s1f, phi2f, phi1v, s1v, scales = [], [], [], [], [], []
    for pb in problems:
        n1, n2 = len(pb["s1"]), len(pb["X2"])
        c1, c2 = round(n1 * (1 - validation_fraction)), round(n2 * (1 - validation_fraction))
        i1f, i1v, i2f = pb["perm1"][:c1], pb["perm1"][c1:], pb["perm2"][:c2]
        f1, f2 = features(pb["X1"]), features(pb["X2"])
        s1 = torch.as_tensor(np.asarray(pb["s1"]), dtype=torch.float64)
        phi1f.append(f1[i1f]), s1f.append(s1[i1f]), phi2f.append(f2[i2f])
        phi1v.append(f1[i1v]), s1v.append(s1[i1v])
        scales.append(float(s1[i1f].mean()))
    rep = lambda xs: torch.stack(xs).repeat_interleave(L, dim=0)  # noqa: E731
    grid = torch.tensor(lambdas, dtype=torch.float64).repeat(len(problems))
    lam = grid * torch.tensor(scales, dtype=torch.float64).repeat_interleave(L)
    theta, beta = fit_lrqr(rep(phi1f), rep(s1f), rep(phi2f), alpha, lam, steps=steps, lr=lr)
    gap = _weighted_coverage_gap(theta, beta, rep(phi1v), rep(s1v), 1 - alpha).reshape(len(problems), L)
    best = gap.argmin(dim=1)
    chosen = torch.tensor([lambdas[int(b)] for b in best], dtype=torch.float64)
    phi1 = torch.stack([features(pb["X1"]) for pb in problems])
    s1 = torch.stack([torch.as_tensor(np.asarray(pb["s1"]), dtype=torch.float64) for pb in problems])
    phi2 = torch.stack([features(pb["X2"]) for pb in problems])
    theta, beta = fit_lrqr(phi1, s1, phi2, alpha, chosen * s1.abs().mean(1), steps=steps, lr=lr)
    return [
        {"theta": theta[i], "beta": float(beta[i]), "lam": float(chosen[i]), "gap": float(gap[i, best[i]])}
        for i in range(len(problems))
    ]


def check_min_calibration(n: int, alpha: float) -> None:
    """Raise when ``n`` labeled source points cannot support level ``1 - alpha``.

    The pinball fit needs at least ``1/alpha - 1`` points for its ``1 - alpha`` quantile to be
    finite (the split-conformal bound), and more than the number of features.
    """
    from quadriga.errors import ConfigError

    need = math.ceil(1.0 / alpha - 1.0 - 1e-9)
    if n < need:
        raise ConfigError(
            f"{n} calibration points are too few for alpha = {alpha}: LR-QR needs at least "
            f"{need}; enlarge the calibration split or raise alpha.",
            key="alpha",
        )
