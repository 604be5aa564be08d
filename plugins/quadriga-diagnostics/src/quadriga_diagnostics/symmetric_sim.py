"""``diag-symmetric-sim``: escape time from the initial plateau of online SGD for symmetric
single-index targets on power-sum features, by information exponent.

Row 003:115 (Zweig & Bruna 2023, "Symmetric single index learning", ICLR 2024): a symmetric
function of ``n`` inputs is a function of their power sums; a single-index target
``y = sigma(<theta*, p(x)>)`` on the normalised power sums ``p(x)`` is learnt by gradient descent
in a time governed by the information exponent ``k`` of ``sigma`` (the first non-zero Hermite
coefficient), as for Gaussian single-index models (Ben Arous, Gheissari & Jagannath 2021, JMLR):
the overlap ``m = <theta, theta*>`` starts at ``O(d^{-1/2})`` and its escape takes longer the larger ``k``.

Test bed: inputs ``x_j = exp(i phi_j)``, ``phi_j`` uniform, ``j = 1..n``; features
``z_m = Re p_m(x) / sqrt(n / 2)``, ``p_m = sum_j x_j^m``, ``m = 1..d`` (uncorrelated, unit variance,
exactly); target ``y = He_k(z_1) / sqrt(k!)`` (``theta* = e_1``); student ``He_k(<theta, z>) / sqrt(k!)``
on the unit sphere trained by one-pass spherical SGD on the correlation loss
``-y He_k(<theta, z>) / sqrt(k!)`` with step ``lr``; escape time = first step with ``|m| >= 0.5``.
All replicates and all ``k`` share the initial directions and the input stream (paired).
"""

from __future__ import annotations

from math import factorial
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.interfaces import Evaluator
from quadriga.validators import int_at_least, positive

__all__ = ["SymmetricSingleIndex", "escape_times", "hermite", "power_sum_features"]


def hermite(k: int, t: np.ndarray, *, derivative: bool = False) -> np.ndarray:
    """Normalised probabilists' Hermite polynomial ``He_k(t) / sqrt(k!)`` (or its derivative,
    ``k He_{k-1}(t) / sqrt(k!)``).

    Shapes: ``t`` any; same shape back. Raises: nothing. Source: Abramowitz & Stegun 22.
    """
    from numpy.polynomial.hermite_e import hermeval

    order = k - 1 if derivative else k
    coef = np.zeros(order + 1)
    coef[order] = 1.0
    scale = (k if derivative else 1.0) / np.sqrt(factorial(k))
    return scale * hermeval(t, coef)


def power_sum_features(rng: np.random.Generator, batch: int, n: int, dim: int) -> np.ndarray:
    """``Re p_m(x) / sqrt(n / 2)`` for ``m = 1..dim`` of ``n`` uniform points on the unit circle.

    Shapes: returns ``(batch, dim)``; each feature has mean 0, variance 1 and the features are
    uncorrelated (``E[x^m conj(x)^l] = delta_ml``). Raises: nothing.
    Source: the power-sum embedding of symmetric functions (Zweig & Bruna 2023, sec. 2).
    """
    angles = rng.uniform(0.0, 2 * np.pi, (batch, n))
    return np.cos(angles[:, :, None] * np.arange(1, dim + 1)).sum(1) / np.sqrt(n / 2)


def escape_times(
    k: int, *, dim: int, n: int, replicates: int, lr: float, max_steps: int, seed: int, threshold: float = 0.5
) -> np.ndarray:
    """Escape step of each of ``replicates`` online spherical SGD runs (``nan``: not escaped).

    Shapes: returns ``(replicates,)``. Units: SGD steps (one fresh sample each).
    Raises: nothing. Source: the module docstring (Ben Arous et al. 2021, sec. 2, spherical online
    SGD on the correlation loss).
    """
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal((replicates, dim))
    theta /= np.linalg.norm(theta, axis=1, keepdims=True)
    escaped = np.full(replicates, np.nan)
    for t in range(max_steps):
        z = power_sum_features(rng, replicates, n, dim)
        y = hermite(k, z[:, 0])
        grad = (y * hermite(k, np.sum(theta * z, 1), derivative=True))[:, None] * z
        grad -= np.sum(grad * theta, 1, keepdims=True) * theta
        theta = theta + lr * grad
        theta /= np.linalg.norm(theta, axis=1, keepdims=True)
        hit = np.isnan(escaped) & (np.abs(theta[:, 0]) >= threshold)
        escaped[hit] = t + 1
        if not np.isnan(escaped).any():
            break
    return escaped


@attrs.define(kw_only=True)
class SymmetricSingleIndex(Evaluator):
    """Escape time of online SGD from the initial plateau for symmetric single-index targets on
    power-sum features, for information exponents ``k = 1..max_exponent`` (predicted increasing).

    Input: none (``subject`` and ``reference`` are ignored; the test bed of the module docstring).

    Returns (``Metrics``): ``escape_median/<k>`` (median over replicates, steps),
    ``escape_mean_log/<k>``, ``escaped_share/<k>``, ``log_ratio/<k+1>`` (mean over replicates of
    ``log T_{k+1} - log T_k``, paired, predicted > 0) with ``log_ratio_low/<k+1>``,
    ``log_ratio_high/<k+1>`` (95 % t interval). ``tables["per_run"]``: for each ``k = 2 ..
    max_exponent`` and each run, two rows with columns ``k``, ``run`` (0 .. ``replicates - 1``,
    the same initial direction and input stream at every exponent), ``exponent`` (``"k"`` or
    ``"k - 1"``: which of the pair's exponents the row's run was trained at) and ``log_escape``
    (log of that run's escape step, ``max_steps`` where it did not escape); the mean over runs of
    the ``"k"`` minus ``"k - 1"`` values of one ``k`` is ``log_ratio/<k>``.

    Shapes:
        scalars.

    Units:
        SGD steps (one sample per step); log ratios dimensionless.

    Raises:
        ConfigError: non-positive sizes or step (at build time).

    Source: Zweig & Bruna 2023 (ICLR 2024), "Symmetric single index learning"; Ben Arous,
    Gheissari & Jagannath 2021 (JMLR), online SGD escape times by information exponent.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {"dim": 6, "replicates": 4, "max_exponent": 2}

    max_exponent: int = param(3, doc="largest information exponent k", validator=int_at_least(2))
    dim: int = param(16, doc="number of power-sum features d", validator=int_at_least(2))
    n_points: int = param(64, doc="points n on the circle per input", validator=int_at_least(2))
    replicates: int = param(32, doc="independent runs (shared across k)", validator=int_at_least(2))
    learning_rate: float = param(
        0.03, doc="SGD step (a multiple of 1/d keeps the d-scaling comparable)", validator=positive
    )
    max_steps: int = param(
        20000, doc="step budget (unescaped runs count as max_steps)", validator=int_at_least(1)
    )

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any) -> Metrics:
        """Run every exponent on the same seed; see the class docstring."""
        from quadriga import stats
        from quadriga.seeding import numpy_rng

        del subject, reference
        seed = int(numpy_rng(generator).integers(2**31))
        times = {}
        values: dict[str, float] = {}
        for k in range(1, self.max_exponent + 1):
            t = escape_times(
                k,
                dim=self.dim,
                n=self.n_points,
                replicates=self.replicates,
                lr=self.learning_rate,
                max_steps=self.max_steps,
                seed=seed,
            )
            values[f"escaped_share/{k}"] = float(np.mean(~np.isnan(t)))
            times[k] = np.where(np.isnan(t), self.max_steps, t)
            values[f"escape_median/{k}"] = float(np.median(times[k]))
            values[f"escape_mean_log/{k}"] = float(np.mean(np.log(times[k])))
        per_run: list[dict[str, Any]] = []
        for k in range(2, self.max_exponent + 1):
            for label, at in (("k", k), ("k - 1", k - 1)):
                per_run += [
                    {"k": k, "run": i, "exponent": label, "log_escape": float(v)}
                    for i, v in enumerate(np.log(times[at]))
                ]
            ci = stats.interval(np.log(times[k]) - np.log(times[k - 1]), "mean")
            values[f"log_ratio/{k}"] = ci.estimate
            values[f"log_ratio_low/{k}"] = ci.low
            values[f"log_ratio_high/{k}"] = ci.high
        return Metrics(values=values, tables={"per_run": per_run})
