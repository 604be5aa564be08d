"""Fixed-grid integrators of a flow-matching velocity: the ODE, the marginal-preserving SDE, resampling.

Time runs from noise (``t = 0``, ``x0 ~ N(0, I)``) to data (``t = 1``) on the path
``x_t = t x1 + (1 - t) x0``. The probability-flow ODE is ``dx = v(x, t) dt``. For any ``g >= 0`` the SDE

    ``dX = [v(X, t) + (g^2 / 2) s(X, t)] dt + g dW``,  ``s(x, t) = (t v(x, t) - x) / (1 - t)``,

has the same one-time marginals ``p_t`` (Fokker-Planck: the extra drift ``(g^2/2) s`` and the
diffusion ``g^2/2 Δ`` cancel, Song et al. 2021, eq. 6 / Appendix D.1; the score-from-velocity
identity follows from Tweedie's formula, ``E[x0 | x_t] = x - t v``). ``s`` is singular at ``t = 1``,
so stochastic steps are only taken on ``t < 1``.

Integrators are fixed-step (Euler, or Heun / stochastic Heun with the same Gaussian increment
in both stages, Kloeden & Platen 1992, sec. 15.1) so that the number of velocity evaluations is
exact and the same for every sampler compared; every step reports how many it used.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

__all__ = ["SOLVERS", "Velocity", "effective_sample_size", "ode_step", "sde_step", "systematic_resample"]

SOLVERS = ("euler", "heun")
Velocity = Callable[[torch.Tensor, float], torch.Tensor]


def score_from_velocity(v: torch.Tensor, x: torch.Tensor, t: float) -> torch.Tensor:
    """``grad log p_t(x) = (t v - x) / (1 - t)``, ``Tensor[n, d]`` (Tweedie; valid for t < 1).

    Raises:
        ValueError: ``t >= 1`` (the formula is singular there).
    """
    if t >= 1.0:
        raise ValueError(
            f"the score from the velocity is singular at t = {t}; keep stochastic steps below t = 1"
        )
    return (t * v - x) / (1.0 - t)


def ode_step(
    velocity: Velocity, x: torch.Tensor, t: float, h: float, v_x: torch.Tensor, solver: str
) -> tuple[torch.Tensor, int]:
    """One step of ``dx = v dt`` from ``t`` to ``t + h`` given ``v_x = v(x, t)``.

    Returns ``(x_next: Tensor[n, d], extra velocity evaluations per particle)``: 0 for Euler, 1 for Heun.

    Source: Euler's method; Heun's method (explicit trapezoid), Süli & Mayers 2003, sec. 12.
    """
    if solver == "euler":
        return x + h * v_x, 0
    x_pred = x + h * v_x
    return x + 0.5 * h * (v_x + velocity(x_pred, t + h)), 1


def sde_step(
    velocity: Velocity,
    x: torch.Tensor,
    t: float,
    h: float,
    v_x: torch.Tensor,
    noise: float,
    solver: str,
    generator: torch.Generator,
) -> tuple[torch.Tensor, int]:
    """One step of the marginal-preserving SDE (module docstring) from ``t`` to ``t + h < 1``.

    Args:
        velocity: ``v(x: Tensor[n, d], t: float) -> Tensor[n, d]``.
        x: ``Tensor[n, d]``; v_x: ``v(x, t)``.
        noise: ``g >= 0`` (units of x per sqrt(time)).
        solver: ``"euler"`` (Euler-Maruyama) or ``"heun"`` (stochastic Heun, one Gaussian increment).
        generator: source of the increment ``N(0, h I)``.

    Returns:
        ``(x_next: Tensor[n, d], extra velocity evaluations per particle)``.

    Source: Kloeden & Platen 1992, "Numerical solution of SDEs", sec. 9.1 (Euler-Maruyama), sec. 15.1 (Heun).
    """
    g2 = float(noise) ** 2
    drift = v_x + 0.5 * g2 * score_from_velocity(v_x, x, t)
    dw = (g2 * h) ** 0.5 * torch.randn(x.shape, generator=generator, dtype=x.dtype, device=x.device)
    if solver == "euler":
        return x + h * drift + dw, 0
    x_pred = x + h * drift + dw
    v_pred = velocity(x_pred, t + h)
    drift_pred = v_pred + 0.5 * g2 * score_from_velocity(v_pred, x_pred, t + h)
    return x + 0.5 * h * (drift + drift_pred) + dw, 1


def effective_sample_size(log_weights: torch.Tensor) -> float:
    """Kish's ESS ``(sum w)^2 / sum w^2`` of ``log_weights: Tensor[n]`` (a count in [1, n]).

    Source: Kong, Liu & Wong 1994, JASA 89, eq. 3 (the usual approximation ``n / (1 + cv^2)``).
    """
    lw = log_weights.to(torch.float64)
    return float(torch.exp(2 * torch.logsumexp(lw, 0) - torch.logsumexp(2 * lw, 0)))


def systematic_resample(log_weights: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Systematic resampling: ``n`` ancestor indices ``Tensor[n]`` (int64) for normalised weights ``W``.

    One uniform ``U ~ U[0, 1)``; index ``i`` is chosen for each point ``(U + j) / n`` that falls in
    ``(sum_{l<i} W_l, sum_{l<=i} W_l]``. Unbiased: the expected number of copies of ``i`` is ``n W_i``.

    Source: Carpenter, Clifford & Fearnhead 1999; Douc & Cappé 2005, sec. 2.3 ("systematic").
    """
    n = log_weights.shape[0]
    w = torch.softmax(log_weights.to(torch.float64), 0)
    cdf = torch.cumsum(w, 0)
    cdf[-1] = 1.0
    u = (
        torch.rand((), generator=generator, dtype=torch.float64, device=w.device)
        + torch.arange(n, dtype=torch.float64, device=w.device)
    ) / n
    return torch.searchsorted(cdf, u, right=True).clamp(max=n - 1)
