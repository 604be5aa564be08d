"""The mathematics of Feasible Learning: per-sample losses, the dual step and the resilient slack.

Feasible Learning (FL) replaces the average-loss objective of ERM by one constraint per
training sample,

    find theta  such that  l_i(theta) <= eps  for i = 1..n                      (FL, eq. 1)

solved through the Lagrangian ``L(theta, lam) = sum_i lam_i (l_i(theta) - eps)`` with
``lam >= 0`` by alternating dual-then-primal gradient descent-ascent on mini-batches B
(Ramirez et al. 2025, Algorithm 1):

    lam_B   <- [ lam_B + eta_lam (l_B(theta_t) - eps) ]_+                       (dual step)
    theta   <- optimizer step on  sum_{i in B} lam_i l_i(theta_t)              (primal step)

Resilient FL (RFL) relaxes the constraints with slacks ``u >= 0`` of minimal norm,

    min_{theta, u >= 0}  (alpha / 2) ||u||^2   s.t.  l_i(theta) <= eps + u_i    (RFL, eq. 4)

whose optimal slack for given multipliers is ``u = lam / alpha`` and whose dual function is
``sum_i lam_i (l_i - eps) - ||lam||^2 / (2 alpha)``. RFL is therefore FL with weight decay
``1 / alpha`` on the multipliers' ascent step, :func:`dual_step` with ``alpha`` finite. At a
fixed loss vector the projected ascent converges to ``lam* = alpha relu(l - eps)`` and
``u* = relu(l - eps)`` (:func:`minimal_slack`), the smallest slack that makes every
constraint hold.

Source: J. Ramirez, I. Hounie, J. Elenter, J. Gallego-Posada, M. Hashemizadeh, A. Ribeiro,
S. Lacoste-Julien, "Feasible Learning", AISTATS 2025, arXiv 2501.14912 (sec. 3, eq. 1-4,
Algorithm 1); official code juan43ramirez/feasible-learning @864a585.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import torch

__all__ = [
    "CLASSIFICATION",
    "REGRESSION",
    "dual_step",
    "epsilon_from_probability",
    "loss_summary",
    "make_mlp",
    "minimal_slack",
    "sample_losses",
]

CLASSIFICATION = "classification"
REGRESSION = "regression"


def epsilon_from_probability(p_min: float) -> float:
    """Cross-entropy threshold ``eps = log(1 / p_min)``: ``l_i <= eps`` iff ``p(y_i | x_i) >= p_min``.

    Units: nats. ``p_min = 0.6`` (the paper's default) gives 0.5108.

    Raises:
        ValueError: ``p_min`` outside (0, 1].

    Source: Ramirez et al. 2025, sec. 5 (``probability_to_cross_entropy_loss`` in the official code).
    """
    if not 0.0 < p_min <= 1.0:
        raise ValueError(f"p_min must be in (0, 1], got {p_min!r}")
    return -math.log(p_min)


def sample_losses(outputs: torch.Tensor, y: torch.Tensor, task_type: str) -> torch.Tensor:
    """Per-sample losses ``l_i``: cross-entropy of logits, or the squared error.

    Shapes:
        classification: ``outputs`` ``Tensor[n, K]`` logits, ``y`` ``Tensor[n]`` (int64 class index);
        regression: ``outputs`` ``Tensor[n]`` or ``Tensor[n, 1]``, ``y`` ``Tensor[n]``. Returns ``Tensor[n]``.

    Units: nats (classification); squared target units (regression).

    Raises:
        ValueError: an unknown ``task_type``.

    Source: Ramirez et al. 2025, sec. 3 (``l_i`` is the per-sample training loss).
    """
    if task_type == CLASSIFICATION:
        return torch.nn.functional.cross_entropy(outputs, y, reduction="none")
    if task_type == REGRESSION:
        return (outputs.reshape(-1) - y.reshape(-1)) ** 2
    raise ValueError(f"task_type must be '{CLASSIFICATION}' or '{REGRESSION}', got {task_type!r}")


def dual_step(
    multipliers: torch.Tensor,
    losses: torch.Tensor,
    epsilon: float,
    lr: float,
    alpha: float = math.inf,
) -> torch.Tensor:
    """One projected gradient-ascent step on the per-sample multipliers (returns a new tensor).

    ``lam <- [ lam + lr * (l - eps - lam / alpha) ]_+``; ``alpha = inf`` is plain FL, a finite
    ``alpha`` is the resilient relaxation (weight decay ``1 / alpha`` on the multipliers).

    Shapes:
        ``multipliers`` and ``losses``: ``Tensor[b]`` (the batch's entries); returns ``Tensor[b]``.

    Units: multipliers are dimensionless weights on losses; ``lr`` is per unit of loss.

    Raises:
        ValueError: shapes differ, or ``lr``/``alpha`` not positive.

    Source: Ramirez et al. 2025, Algorithm 1 (dual step of FL) and eq. 4-5 (RFL dual with
    ``- ||lam||^2 / (2 alpha)``).
    """
    if multipliers.shape != losses.shape:
        raise ValueError(f"multipliers {tuple(multipliers.shape)} and losses {tuple(losses.shape)} differ")
    if not lr > 0 or not alpha > 0:
        raise ValueError(f"lr and alpha must be > 0, got lr={lr!r}, alpha={alpha!r}")
    grad = losses - epsilon
    if math.isfinite(alpha):
        grad = grad - multipliers / alpha
    return torch.clamp(multipliers + lr * grad, min=0.0)


def minimal_slack(losses: torch.Tensor, epsilon: float, alpha: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Closed-form RFL solution at a fixed loss vector: ``(u*, lam*) = (relu(l - eps), alpha relu(l - eps))``.

    ``u*`` is the minimal-norm slack making ``l_i <= eps + u_i`` hold; ``lam*`` the fixed point of
    :func:`dual_step` with the same ``alpha``.

    Shapes:
        ``losses``: ``Tensor[n]``; returns two ``Tensor[n]``.

    Units: ``u`` in loss units; ``lam`` dimensionless.

    Raises:
        ValueError: ``alpha`` not positive and finite.

    Source: Ramirez et al. 2025, eq. 4 and its KKT conditions (``alpha u_i = lam_i``).
    """
    if not (alpha > 0 and math.isfinite(alpha)):
        raise ValueError(f"alpha must be positive and finite, got {alpha!r}")
    u = torch.relu(losses - epsilon)
    return u, alpha * u


def make_mlp(
    in_dim: int, hidden: list[int], out_dim: int, *, generator: torch.Generator
) -> torch.nn.Sequential:
    """A ReLU MLP ``in_dim -> hidden... -> out_dim`` initialised from ``generator`` (PyTorch's scheme).

    Weights and biases are drawn ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` (the law of
    ``torch.nn.Linear``'s default initialisation) from ``generator`` only.

    Shapes:
        the module maps ``Tensor[n, in_dim]`` to ``Tensor[n, out_dim]`` (float32).

    Units: inputs in standard deviations (z-scored features).

    Raises:
        ValueError: a width below 1.

    Source: the model family of Ramirez et al. 2025, sec. 5 (MLPs on two moons).
    """
    widths = [int(in_dim), *(int(h) for h in hidden), int(out_dim)]
    if min(widths) < 1:
        raise ValueError(f"layer widths must be >= 1, got {widths}")
    layers: list[torch.nn.Module] = []
    for i, (a, b) in enumerate(itertools.pairwise(widths)):
        lin = torch.nn.Linear(a, b)
        bound = 1.0 / math.sqrt(a)
        with torch.no_grad():
            lin.weight.copy_(
                torch.rand(b, a, generator=generator, device=generator.device) * 2 * bound - bound
            )
            lin.bias.copy_(torch.rand(b, generator=generator, device=generator.device) * 2 * bound - bound)
        layers.append(lin)
        if i < len(widths) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers).to(generator.device)


def loss_summary(
    losses: Any, epsilon: float, quantiles: tuple[float, ...] = (0.5, 0.9, 0.95, 0.99), cvar: float = 0.1
) -> dict[str, float]:
    """Statistics of a per-sample loss distribution.

    Returns ``{"mean", "max", "q50", "q90", "q95", "q99", "cvar10", "feasible_fraction"}``:
    quantiles with linear interpolation (numpy's default), ``cvarK`` the mean of the largest
    ``ceil(cvar n)`` losses (the upper tail's mean), ``feasible_fraction`` the share of samples
    with ``l_i <= eps``.

    Shapes:
        ``losses``: ``Tensor[n]`` or ``ndarray[n]`` with ``n >= 1``.

    Units: those of the losses; fractions in [0, 1].

    Raises:
        ValueError: an empty loss vector.

    Source: the loss-distribution statistics of Ramirez et al. 2025, sec. 5 (Fig. 1, Tab. 1).
    """
    import numpy as np

    x = np.asarray(losses.detach().cpu() if isinstance(losses, torch.Tensor) else losses, dtype=np.float64)
    if x.size == 0:
        raise ValueError("loss_summary needs at least one loss")
    out = {"mean": float(x.mean()), "max": float(x.max())}
    for q in quantiles:
        out[f"q{round(q * 100):d}"] = float(np.quantile(x, q))
    k = max(1, math.ceil(cvar * x.size))
    out[f"cvar{round(cvar * 100):d}"] = float(np.sort(x)[-k:].mean())
    out["feasible_fraction"] = float((x <= epsilon).mean())
    return out
