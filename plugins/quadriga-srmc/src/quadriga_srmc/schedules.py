"""Step-size and repellence schedules of Score-Repellent Monte Carlo (pure Python, no state).

Source: Hu et al. 2026, "Score-Repellent Monte Carlo", arXiv 2604.22948, Sec. 3
(the stochastic-approximation recursion for theta) and the official code's
``_current_alpha`` (fixed, warm-up and adaptive repellence).
"""

from __future__ import annotations

__all__ = ["ALPHA_SCHEDULES", "alpha_at", "theta_gain"]

ALPHA_SCHEDULES = ("fixed", "warmup", "adaptive")


def alpha_at(n: int, *, alpha: float, schedule: str, warmup: int = 1000, scale: float = 100.0) -> float:
    """Repellence strength alpha_n used by the n-th transition.

    Args:
        n: 1-based iteration index (the transition from X_{n-1} to X_n).
        alpha: the target strength alpha >= 0 (dimensionless).
        schedule: ``"fixed"`` (alpha_n = alpha), ``"warmup"`` (alpha min(1, n / warmup))
            or ``"adaptive"`` (alpha_n = n / (scale + n / alpha), which rises from 0 to alpha).
        warmup: W, iterations of the linear warm-up (``"warmup"`` only).
        scale: C, the half-way point of the adaptive schedule in iterations (``"adaptive"`` only).

    Returns:
        alpha_n as a float (0 when alpha is 0).

    Raises:
        ValueError: an unknown schedule or n < 1.
    """
    if n < 1:
        raise ValueError(f"iteration index n must be >= 1, got {n}")
    if alpha == 0.0:
        return 0.0
    if schedule == "fixed":
        return float(alpha)
    if schedule == "warmup":
        return float(alpha) * min(1.0, n / float(warmup))
    if schedule == "adaptive":
        return n / (float(scale) + n / float(alpha))
    raise ValueError(f"unknown alpha schedule '{schedule}'; use one of {', '.join(ALPHA_SCHEDULES)}")


def theta_gain(n: int, *, theta_step: float, rho: float) -> float:
    """Gain gamma_n = theta_step * n^(-rho) of the n-th history update.

    The update is theta_n = theta_{n-1} + gamma_n (s(X_n) - theta_{n-1}) with theta_0 = 0,
    so with ``theta_step = 1`` theta_1 = s(X_1).

    Args:
        n: 1-based update index.
        theta_step: c > 0, the gain's scale (dimensionless).
        rho: the decay exponent, in (1/2, 1] for the a.s. convergence of theta_n to 0.

    Returns:
        gamma_n as a float.

    Raises:
        ValueError: n < 1.
    """
    if n < 1:
        raise ValueError(f"update index n must be >= 1, got {n}")
    return float(theta_step) * float(n) ** (-float(rho))
