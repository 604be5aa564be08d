"""Noise schedules beta_1..beta_T of the variance-preserving forward process.

The forward chain is x_t = sqrt(1 - beta_t) x_{t-1} + sqrt(beta_t) eps_t, so that
x_t = sqrt(alpha_bar_t) x_0 + sqrt(1 - alpha_bar_t) eps with alpha_t = 1 - beta_t and
alpha_bar_t = prod_{s <= t} alpha_s (Ho et al. 2020, eq. 4). Every schedule here is built
for exactly ``num_steps`` = T steps: the sampler never skips timesteps. The schedule object over a
table (alpha_bar_t, alpha_t, sigma_t, lambda_t at the integer steps, the posterior variance) is
:class:`quadriga_ddpm.noise_schedule.DiscreteSchedule`, which the ``ddpm`` / ``ddim`` samplers read.
"""

from __future__ import annotations

import math

import torch

from quadriga.errors import ConfigError

__all__ = ["SCHEDULES", "alpha_bars", "cosine_betas", "linear_betas", "make_betas", "theory_betas"]

SCHEDULES = ("theory", "linear", "cosine")
MAX_BETA = 0.999


def linear_betas(num_steps: int, *, beta_start: float = 1e-4, beta_end: float = 0.02) -> torch.Tensor:
    """Linear schedule of Ho et al. 2020 (sec. 4), rescaled to T steps.

    Ho et al. use beta from 1e-4 to 0.02 over 1000 steps; for T steps both ends are
    multiplied by 1000 / T (as in Nichol & Dhariwal 2021, ``get_named_beta_schedule``), so the
    total noise sum_t beta_t stays the same, and clipped at 0.999.

    Args:
        num_steps: T >= 1.
        beta_start, beta_end: the 1000-step end points (dimensionless).

    Returns:
        ``Tensor[T]`` float64 in (0, 0.999].
    """
    scale = 1000.0 / num_steps
    betas = torch.linspace(beta_start * scale, beta_end * scale, num_steps, dtype=torch.float64)
    return betas.clamp(max=MAX_BETA)


def cosine_betas(num_steps: int, *, offset: float = 0.008) -> torch.Tensor:
    """Cosine schedule of Nichol & Dhariwal 2021 (eq. 17).

    alpha_bar(t) = f(t) / f(0), f(t) = cos^2(((t / T + s) / (1 + s)) pi / 2), and
    beta_t = min(1 - alpha_bar(t) / alpha_bar(t - 1), 0.999).

    Args:
        num_steps: T >= 1.
        offset: s (dimensionless), 0.008 in the paper.

    Returns:
        ``Tensor[T]`` float64 in (0, 0.999].
    """
    t = torch.arange(num_steps + 1, dtype=torch.float64) / num_steps
    f = torch.cos((t + offset) / (1 + offset) * math.pi / 2) ** 2
    ab = f / f[0]
    return (1 - ab[1:] / ab[:-1]).clamp(min=1e-12, max=MAX_BETA)


def theory_betas(num_steps: int, *, c0: float = 2.0, c1: float = 4.0) -> torch.Tensor:
    """Schedule of the dimension-free analysis (Li, Cai & Wei 2025; Li, Wei, Chen & Chi 2024).

    beta_1 = T^(-c0) and beta_{t+1} = (c1 log T / T) * min{beta_1 (1 + c1 log T / T)^t, 1}:
    geometric growth from T^(-c0) up to the plateau c1 log T / T (clipped at 0.999 for tiny T).
    With c1 > c0 the final alpha_bar_T is about T^(-(c1 - c0)).

    Args:
        num_steps: T >= 2 (log T must be positive).
        c0: exponent of the first step size (> 0).
        c1: growth / plateau constant (> 0).

    Returns:
        ``Tensor[T]`` float64 in (0, 0.999].

    Raises:
        ConfigError: T < 2.
    """
    if num_steps < 2:
        raise ConfigError("the theory schedule needs num_steps >= 2 (it uses log T).", key="num_steps")
    T = float(num_steps)
    rate = c1 * math.log(T) / T
    b1 = T ** (-c0)
    t = torch.arange(1, num_steps, dtype=torch.float64)
    rest = rate * torch.minimum(b1 * (1 + rate) ** t, torch.ones_like(t))
    betas = torch.cat([torch.tensor([b1], dtype=torch.float64), rest])
    return betas.clamp(max=MAX_BETA)


def make_betas(schedule: str, num_steps: int, **kwargs: float) -> torch.Tensor:
    """Dispatch to a named schedule.

    Args:
        schedule: one of ``SCHEDULES`` (``theory``, ``linear``, ``cosine``).
        num_steps: T.
        **kwargs: the schedule's own constants (``c0``, ``c1`` for ``theory``).

    Returns:
        ``Tensor[T]`` float64 betas.

    Raises:
        ConfigError: unknown schedule name.
    """
    if schedule == "theory":
        return theory_betas(num_steps, **kwargs)
    if schedule == "linear":
        return linear_betas(num_steps)
    if schedule == "cosine":
        return cosine_betas(num_steps)
    raise ConfigError(f"unknown schedule '{schedule}'; use one of {', '.join(SCHEDULES)}.", key="schedule")


def alpha_bars(betas: torch.Tensor) -> torch.Tensor:
    """Cumulative products alpha_bar_t = prod_{s<=t} (1 - beta_s): ``Tensor[T] -> Tensor[T]``."""
    return torch.cumprod(1 - betas, 0)
