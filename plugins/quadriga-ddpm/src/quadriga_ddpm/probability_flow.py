"""The probability-flow ODE in lambda, its high-accuracy reference solve and closed forms.

With x_lambda = alpha x_0 + sigma eps and a model of the score s(x, lambda) = grad log p_lambda(x),
the noise prediction is eps_hat = -sigma s and the data prediction (denoiser) is
x0_hat = (x + sigma^2 s) / alpha (Tweedie). The probability-flow ODE written in the half log-SNR
lambda (Lu et al. 2022, "DPM-Solver", eq. 3.3, with d lambda in place of dt) is

    dx / d lambda = (d log alpha / d lambda) x - sigma eps_hat(x, lambda)
                  = (d log alpha / d lambda) x + sigma^2 s(x, lambda),

integrated from lambda_T (noise) up to lambda_0 (data). :func:`reference_solve` integrates it with
``scipy.integrate.solve_ivp`` (DOP853, rtol 1e-10 by default) on the whole batch at once, so that
the discretization error of any few-step solver can be measured against it from the same x_T.
For one Gaussian N(mu, diag(s^2)) the flow is affine and :func:`gaussian_flow` gives it exactly.

Score models follow :mod:`quadriga_ddpm.score_models` (``model(x, t, alpha_bar)``, variance
preserving); a point (alpha, sigma) of any schedule is reached through the scaling
x' = x / c, c = sqrt(alpha^2 + sigma^2), alpha_bar = alpha^2 / c^2, score(x) = score'(x') / c
(exact: x' is the VP law with that alpha_bar). The step index passed to the model is 0, so a
learned network must take ``time_input = "alpha_bar"``.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import torch
from scipy import integrate

from quadriga_ddpm.noise_schedule import NoiseSchedule

__all__ = [
    "data_prediction",
    "draw_x_T",
    "gaussian_flow",
    "noise_prediction",
    "reference_solve",
    "score_at",
    "x_T_digest",
]


def score_at(model: Any, x: torch.Tensor, alpha: float, sigma: float) -> torch.Tensor:
    """Score ``Tensor[n, d]`` of the law of alpha x_0 + sigma eps at ``x: Tensor[n, d]``.

    Args:
        model: a score model ``model(x, t, alpha_bar)`` (VP), see :mod:`quadriga_ddpm.score_models`.
        x: the state; alpha, sigma: the schedule's coefficients (sigma > 0).

    Returns:
        grad_x log p(x) in units of 1 / x (see the module docstring for the scaling).
    """
    alpha, sigma = float(alpha), float(sigma)
    c2 = alpha * alpha + sigma * sigma
    c = c2**0.5
    return model(x / c, 0, alpha * alpha / c2) / c


def noise_prediction(model: Any, x: torch.Tensor, alpha: float, sigma: float) -> torch.Tensor:
    """eps_hat = -sigma score, ``Tensor[n, d]`` (dimensionless)."""
    return -float(sigma) * score_at(model, x, alpha, sigma)


def data_prediction(model: Any, x: torch.Tensor, alpha: float, sigma: float) -> torch.Tensor:
    """x0_hat = (x + sigma^2 score) / alpha (Tweedie's formula), ``Tensor[n, d]`` in units of x."""
    return (x + float(sigma) ** 2 * score_at(model, x, alpha, sigma)) / float(alpha)


def draw_x_T(schedule: NoiseSchedule, num_samples: int, dim: int, generator: torch.Generator) -> torch.Tensor:
    """x_T = sigma_T z, z ~ N(0, I): ``Tensor[n, d]`` float64 (the prior of Lu et al. 2022, sec. 3).

    The generator should be a named stream (``child_generator(g, "x_T")``) so that every solver of
    one replicate starts from the same x_T.
    """
    z = torch.randn(int(num_samples), int(dim), generator=generator, dtype=torch.float64)
    return float(schedule.sigma(schedule.t_max)) * z


def x_T_digest(x_T: torch.Tensor) -> str:
    """A short hex digest of x_T's float64 bytes: two solves share it exactly when they share x_T."""
    arr = np.ascontiguousarray(x_T.detach().cpu().to(torch.float64).numpy())
    return hashlib.sha1(arr.tobytes() + str(arr.shape).encode()).hexdigest()[:16]


def reference_solve(
    model: Any,
    schedule: NoiseSchedule,
    x_T: torch.Tensor,
    lambdas: Any,
    *,
    rtol: float = 1e-10,
    atol: float = 1e-10,
    method: str = "DOP853",
) -> tuple[torch.Tensor, int]:
    """Solve the probability-flow ODE in lambda to high accuracy from ``x_T``.

    Args:
        model: a score model (see :func:`score_at`).
        schedule: the noise schedule.
        x_T: ``Tensor[n, d]`` at ``lambdas[0]``.
        lambdas: increasing half log-SNRs ``[K + 1]``; the first is the start.
        rtol, atol: tolerances of ``solve_ivp``; method: its method.

    Returns:
        ``(xs, nfe)``: ``xs: Tensor[K + 1, n, d]`` float64 at every lambda (``xs[0] = x_T``) and the
        number of batched model evaluations.

    Raises:
        FloatingPointError: the solver failed (with scipy's message).

    Source: the ODE of Lu et al. 2022, eq. 3.3 in lambda; scipy's DOP853 (Hairer, Norsett & Wanner).
    """
    lam = np.asarray(torch.as_tensor(lambdas, dtype=torch.float64).cpu().numpy(), dtype=float)
    n, d = x_T.shape
    count = [0]

    def rhs(lam_now: float, y: np.ndarray) -> np.ndarray:
        count[0] += 1
        alpha, sigma = schedule.alpha_sigma_of_lambda(lam_now)
        x = torch.from_numpy(y.reshape(n, d))
        s = score_at(model, x, float(alpha), float(sigma))
        drift = float(schedule.dlog_alpha_dlambda(lam_now)) * x + float(sigma) ** 2 * s
        return drift.detach().to(torch.float64).numpy().reshape(-1)

    y0 = x_T.detach().cpu().to(torch.float64).numpy().reshape(-1)
    sol = integrate.solve_ivp(rhs, (lam[0], lam[-1]), y0, method=method, t_eval=lam, rtol=rtol, atol=atol)
    if not sol.success:
        raise FloatingPointError(f"reference probability-flow solve failed: {sol.message}")
    xs = torch.from_numpy(sol.y.T.reshape(len(lam), n, d).copy())
    return xs, count[0]


def gaussian_flow(
    mean: torch.Tensor,
    variances: torch.Tensor,
    schedule: NoiseSchedule,
    x_T: torch.Tensor,
    lam_T: float,
    lam: float,
) -> torch.Tensor:
    """Exact probability-flow map of the target N(mean, diag(variances)) from lam_T to lam.

    The noised law at lambda is N(alpha mean, diag(v)), v = alpha^2 variances + sigma^2; the flow
    keeps (x - alpha mean) / sqrt(v) constant per coordinate (the ODE is linear with a diagonal
    coefficient; derived here from the ODE above).

    Args:
        mean: ``Tensor[d]``; variances: ``Tensor[d]`` (units of x squared); x_T: ``Tensor[n, d]``.
        lam_T, lam: start and end half log-SNR.

    Returns:
        ``Tensor[n, d]`` float64.
    """
    a0, s0 = schedule.alpha_sigma_of_lambda(lam_T)
    a1, s1 = schedule.alpha_sigma_of_lambda(lam)
    m, v = mean.to(torch.float64), variances.to(torch.float64)
    v0, v1 = a0**2 * v + s0**2, a1**2 * v + s1**2
    return a1 * m + (v1 / v0).sqrt() * (x_T.to(torch.float64) - a0 * m)
