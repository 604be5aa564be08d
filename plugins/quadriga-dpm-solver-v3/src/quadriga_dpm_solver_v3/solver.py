"""DPM-Solver-v3: the multistep predictor-corrector in lambda on the empirical model statistics.

With the statistics l, s, b of :mod:`quadriga_dpm_solver_v3.ems`, S = int s and B = int e^{-S} b
(from the grid's start), the model enters only through

    f(lambda) = e^{-S(lambda)} N(x_lambda, lambda) - B(lambda),   N = (sigma eps_hat - l x) / alpha,

which the statistics make as close to constant in lambda as a first-order fit allows. The exact
solution of dy / d lambda = -l y - N (y = x / alpha) from lambda_s to lambda_t is then
(paper eq. 12-14, with L(lambda) = int_{lambda_s}^{lambda} l)

    x_t = alpha_t e^{-L_t} [ x_s / alpha_s - int e^{L + S} B dlambda - int e^{L + S} f dlambda ],

and the solver replaces f by its Taylor polynomial at lambda_s, sum_k f^(k) (lambda - lambda_s)^k / k!,
whose coefficients come from the values of f at the last ``order`` steps (the multistep predictor,
paper eq. 15), so the step is

    x_t = alpha_t e^{-L_t} [ x_s / alpha_s - I_B - sum_k f^(k) C_k ],
    C_k = int e^{L + S} (lambda - lambda_s)^k / k!.

Corrector (paper sec. 3.3, UniPC-style): after the model is evaluated at the predicted x_t (which
the next step needs anyway), the step is redone with that value added to the fit (one order more,
no extra evaluation); the last step has no corrector (it would cost an evaluation). With l = 1,
s = b = 0 and no corrector this is DPM-Solver++ (multistep, exact phi functions): order 1 is DDIM.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from quadriga_ddpm.noise_schedule import NoiseSchedule

from quadriga.errors import ConfigError
from quadriga_dpm_solver_v3.ems import EMS, _g

__all__ = ["dpm_solver_v3"]


def _taylor(lams: list[float], fs: list[np.ndarray], lam_s: float) -> np.ndarray:
    """Taylor coefficients ``[p, n, d]`` at ``lam_s`` of the polynomial through (lams, fs: p x ``[n, d]``)."""
    p = len(lams)
    v = np.array([[(lj - lam_s) ** k / math.factorial(k) for k in range(p)] for lj in lams])
    stacked = np.stack(fs)
    return np.linalg.solve(v, stacked.reshape(p, -1)).reshape(stacked.shape)


def dpm_solver_v3(
    model: Any,
    schedule: NoiseSchedule,
    ems: EMS,
    x_T: torch.Tensor,
    lambdas: Any,
    *,
    order: int = 3,
    corrector: bool = True,
) -> torch.Tensor:
    """Run DPM-Solver-v3 from ``x_T`` at ``lambdas[0]`` to ``lambdas[-1]`` (M steps, M evaluations).

    Args:
        model: a score model; schedule: its noise schedule; ems: the statistics (their grid must
            cover the lambdas).
        x_T: ``Tensor[n, d]``; lambdas: ``[M + 1]`` increasing half log-SNRs.
        order: predictor order 1-3 (lower in the first steps, as their history allows).
        corrector: use the corrector (see the module docstring).

    Returns:
        ``Tensor[n, d]`` float64.

    Raises:
        ConfigError: order outside 1-3, lambdas outside the EMS grid, a dimension mismatch.

    Source: Zheng, Lu, Chen & Zhu 2023, "DPM-Solver-v3", arXiv 2310.13268, eq. 12-15, sec. 3.3.
    """
    if order not in (1, 2, 3):
        raise ConfigError(f"order must be 1, 2 or 3, got {order}.", key="order")
    lam = [float(v) for v in torch.as_tensor(lambdas, dtype=torch.float64)]
    if lam[0] < ems.lam[0] - 1e-9 or lam[-1] > ems.lam[-1] + 1e-9:
        raise ConfigError(
            f"the steps span lambda [{lam[0]:.4g}, {lam[-1]:.4g}] but the statistics cover "
            f"[{ems.lam[0]:.4g}, {ems.lam[-1]:.4g}].",
            key="t_end",
        )
    if int(x_T.shape[1]) != ems.dim:
        raise ConfigError(f"x_T has {x_T.shape[1]} coordinates, the statistics {ems.dim}.", key="target")
    lam_arr = np.asarray(lam)
    big_s = ems.integral(ems.s, lam_arr)
    big_b = ems.big_b(lam_arr)
    l_at = ems.value(ems.l, lam_arr)
    a_t, _ = schedule.alpha_sigma_of_lambda(torch.tensor(lam, dtype=torch.float64))
    alpha = a_t.tolist()

    def f_of(x: torch.Tensor, i: int) -> np.ndarray:
        """f at step point i from one model evaluation, ``[n, d]``."""
        g = _g(model, schedule, x, lam[i]).numpy()
        nn = (g - l_at[i] * x.numpy()) / alpha[i]
        return np.exp(-big_s[i]) * nn - big_b[i]

    def step(x_s: np.ndarray, i: int, pts: list[int], fs: list[np.ndarray]) -> np.ndarray:
        """x at lam[i] from x_s at lam[i - 1], with the Taylor fit through the points ``pts``."""
        q = ems.quadrature(lam[i - 1], lam[i], len(pts))
        coef = _taylor([lam[j] for j in pts], fs, lam[i - 1])  # [p, n, d]
        inner = x_s / alpha[i - 1] - q["I_B"] - np.einsum("kd,knd->nd", q["C"], coef)
        return alpha[i] * np.exp(-q["L_t"]) * inner

    x = x_T.to(torch.float64).numpy()
    hist: list[tuple[int, np.ndarray]] = [(0, f_of(torch.from_numpy(x), 0))]
    for i in range(1, len(lam)):
        p = min(order, len(hist))
        pts = [j for j, _ in hist[-p:]][::-1]
        fs = [fj for _, fj in hist[-p:]][::-1]
        x_pred = step(x, i, pts, fs)
        if i == len(lam) - 1:
            x = x_pred
            break
        f_new = f_of(torch.from_numpy(x_pred), i)
        if corrector:
            x = step(x, i, [i, *pts], [f_new, *fs])
        else:
            x = x_pred
        hist.append((i, f_new))
        hist = hist[-3:]
    return torch.from_numpy(np.ascontiguousarray(x))
