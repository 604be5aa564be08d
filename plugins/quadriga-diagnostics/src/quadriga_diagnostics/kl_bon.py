"""``diag-kl-bon``: best-of-N against the KL-constrained optimum for models with i.i.d. tokens,
computed exactly.

Row 003:57 (Yang, Salamatian, Sun & Beirami 2024, "Asymptotics of language model alignment",
arXiv 2404.01730): for a memoryless model ``p(y_1..y_L) = prod_t p(y_t)`` and a linear reward
``r(y) = sum_t w(y_t)``, the KL-constrained RL optimum is the exponential tilt
``pi_beta(y) ∝ p(y) exp(beta r(y))``, again i.i.d. with token law ``p_beta ∝ p e^{beta w}``; best-of-N
with ``N = exp(L Delta)`` and the tilt at the same KL have asymptotically equal expected rewards and
their KL divergence vanishes relative to the KL budget as ``L`` grows (a large-deviation result:
the reward per token tends to the Cramér point ``q*`` with ``KL(p_beta* | p) = Delta``).

Everything is exact on the reward levels (integer token rewards): ``R = r(Y)`` has the
``L``-fold convolution law under ``p`` and ``p_beta``; best-of-N's law of ``R`` is
``F(r)^N - F(r - 1)^N`` (``F`` the CDF under ``p``), and within a reward level best-of-N, the
tilt and ``p`` are all proportional to ``p(y)``, so every KL between them is the KL between their
laws of ``R``. ``F^N`` is computed as ``exp(N log1p(-S))`` with the survival ``S`` summed from the
top, so ``N = e^{50}`` is exact to rounding.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator
from quadriga.validators import positive

__all__ = ["KLBestOfN", "bon_law", "kl_bon_row", "kl_levels", "reward_law", "tilt_for_kl"]


def reward_law(token_probs: Any, token_rewards: Any, length: int) -> np.ndarray:
    """Law of ``R = sum_t w(y_t)`` for ``length`` i.i.d. tokens: ``pmf[r]``, ``r = 0 .. L max(w)``.

    Shapes: ``token_probs`` ``(K,)`` (sums to 1), ``token_rewards`` ``(K,)`` non-negative integers;
    returns ``(L max(w) + 1,)``.

    Raises:
        ConfigError: probabilities that are negative or do not sum to 1, non-integer or negative
            rewards (key ``token_rewards``).

    Source: convolution of i.i.d. laws (exact).
    """
    p = np.asarray(token_probs, float)
    w = np.asarray(token_rewards)
    if np.any(p < 0) or abs(p.sum() - 1) > 1e-12:
        raise ConfigError("token_probs must be non-negative and sum to 1.", key="token_probs")
    if np.any(w < 0) or np.any(np.asarray(w, float) != np.round(w)):
        raise ConfigError("token_rewards must be non-negative integers.", key="token_rewards")
    w = w.astype(int)
    step = np.zeros(w.max() + 1)
    np.add.at(step, w, p)
    pmf = np.array([1.0])
    for _ in range(int(length)):
        pmf = np.convolve(pmf, step)
    return pmf


def bon_law(pmf: np.ndarray, n: float) -> np.ndarray:
    """Law of the largest of ``n`` i.i.d. draws of ``R ~ pmf``: ``F(r)^n - F(r - 1)^n``.

    ``n`` may be huge and non-integer-valued in floating point (``e^{50}``); computed in log space
    from the survival function summed from the top.

    Shapes: ``pmf`` ``(m,)``; returns ``(m,)``. Raises: nothing.
    Source: order statistics of discrete laws (exact).
    """
    survival = np.concatenate([np.cumsum(pmf[::-1])[::-1][1:], [0.0]])  # S(r) = P(R > r)
    cdf = np.cumsum(pmf)  # F(r), accurate where it is small
    with np.errstate(divide="ignore"):
        log_f = np.where(survival < 0.5, np.log1p(-np.minimum(survival, 0.5)), np.log(np.maximum(cdf, 0.0)))
    a = n * log_f
    b = np.concatenate([[-np.inf], a[:-1]])  # n log F(r - 1)
    out = np.zeros_like(pmf)
    live = np.isfinite(a)
    with np.errstate(invalid="ignore"):
        out[live] = -np.exp(a[live]) * np.expm1(b[live] - a[live])
    return out


def kl_levels(p: np.ndarray, q: np.ndarray) -> float:
    """``KL(p | q) = sum_r p_r log(p_r / q_r)`` over the levels with ``p_r > 0`` (nats).

    Raises: nothing (``inf`` where ``q_r = 0 < p_r``). Source: standard.
    """
    m = p > 0
    return float(np.sum(p[m] * (np.log(p[m]) - np.log(q[m]))))


def _tilted(token_probs: np.ndarray, token_rewards: np.ndarray, beta: float) -> np.ndarray:
    logits = np.log(token_probs) + beta * token_rewards
    e = np.exp(logits - logits.max())
    return e / e.sum()


def tilt_for_kl(token_probs: Any, token_rewards: Any, length: int, kl: float) -> float:
    """``beta >= 0`` with ``KL(pi_beta | p) = L KL(p_beta | p) = kl`` (bisection on the
    monotone per-token KL).

    Raises: ConfigError when ``kl`` exceeds the largest reachable KL (all mass on the best
    tokens). Source: the tilt of Yang et al. 2024, sec. 3 (``KL`` is increasing in ``beta``).
    """
    from scipy.optimize import brentq

    p = np.asarray(token_probs, float)
    w = np.asarray(token_rewards, float)
    target = kl / length

    def per_token(beta: float) -> float:
        pb = _tilted(p, w, beta)
        return float(np.sum(pb * (np.log(pb) - np.log(p)))) - target

    top = -np.log(p[w == w.max()].sum())
    if target >= top:
        raise ConfigError(f"KL {kl} is beyond the tilt's reach ({top * length:.4g}).", key="kl_rate")
    if target <= 0:
        return 0.0
    hi = 1.0
    while per_token(hi) < 0:
        hi *= 2
    return float(brentq(per_token, 0.0, hi, xtol=1e-14, rtol=1e-14))


def kl_bon_row(token_probs: Any, token_rewards: Any, length: int, kl_rate: float) -> dict[str, float]:
    """Best-of-N with ``N = exp(L kl_rate)`` against the tilt at the same KL, one length.

    Returns ``length``, ``n`` (N), ``kl_bon`` (``KL(BoN | p)``), ``bound`` (``log N - (N-1)/N``,
    Beirami et al. 2024), ``beta``, ``reward_bon``, ``reward_tilt`` (expected rewards per token),
    ``reward_ratio`` (BoN / tilt), ``kl_bon_tilt`` (``KL(BoN | tilt)``), ``relative_kl``
    (``kl_bon_tilt / kl_bon``), ``cramer_reward`` (the per-token reward of the tilt at KL rate
    ``kl_rate``, the large-deviation limit).

    Units: rewards per token, KLs in nats. Raises: ConfigError from the helpers.
    Source: Yang et al. 2024 (arXiv 2404.01730), Thms. on BoN-RL equivalence; exact as in the
    module docstring.
    """
    p = np.asarray(token_probs, float)
    w = np.asarray(token_rewards, float)
    pmf = reward_law(p, token_rewards, length)
    n = float(np.exp(length * kl_rate))
    bon = bon_law(pmf, n)
    kl_bon = kl_levels(bon, pmf)
    beta = tilt_for_kl(p, w, length, kl_bon)
    tilt = reward_law(_tilted(p, w, beta), token_rewards, length)
    levels = np.arange(len(pmf))
    reward_bon = float(bon @ levels) / length
    reward_tilt = float(tilt @ levels) / length
    kl_bt = kl_levels(bon, tilt)
    beta_star = tilt_for_kl(p, w, 1, kl_rate)
    return {
        "length": float(length),
        "n": n,
        "kl_bon": kl_bon,
        "bound": float(np.log(n) - (n - 1) / n),
        "beta": beta,
        "reward_bon": reward_bon,
        "reward_tilt": reward_tilt,
        "reward_ratio": reward_bon / reward_tilt,
        "kl_bon_tilt": kl_bt,
        "relative_kl": kl_bt / kl_bon,
        "cramer_reward": float(_tilted(p, w, beta_star) @ w),
    }


@attrs.define(kw_only=True)
class KLBestOfN(Evaluator):
    """Exact best-of-N (``N = e^{L Delta}``) against the KL-matched exponential tilt for a model
    with i.i.d. tokens and a linear integer reward, as the length ``L`` grows.

    Input: none (``subject`` and ``reference`` are ignored).

    Returns (``Metrics``): per length: ``reward_ratio/<L>`` (BoN / tilt expected reward, predicted
    -> 1), ``relative_kl/<L>`` (``KL(BoN | tilt) / KL(BoN | p)``, predicted -> 0),
    ``kl_bon_tilt/<L>``, ``kl_bon/<L>``, ``reward_bon/<L>``; ``cramer_reward`` (the limit of both
    per-token rewards); table ``lengths``.

    Shapes:
        scalars; the table has one row per length.

    Units:
        rewards per token; KLs in nats.

    Raises:
        ConfigError: invalid token law or rewards, ``kl_rate`` beyond the tilt's reach.

    Source: Yang, Salamatian, Sun & Beirami 2024, "Asymptotics of language model alignment"
    (arXiv 2404.01730): BoN and the KL-constrained RL solution are asymptotically equivalent for
    memoryless models and linear rewards; Beirami et al. 2024 for ``KL(BoN | p) <= log N - (N-1)/N``.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {"lengths": [4, 8]}

    token_probs: list[float] = param(
        factory=lambda: [0.5, 0.3, 0.2], doc="token law p over the vocabulary (sums to 1)"
    )
    token_rewards: list[int] = param(factory=lambda: [0, 1, 2], doc="integer reward w of each token")
    kl_rate: float = param(0.1, doc="KL budget per token Delta (nats): N = exp(L Delta)", validator=positive)
    lengths: list[int] = param(factory=lambda: [8, 16, 32, 64, 128, 256, 512], doc="sequence lengths L")

    def __attrs_post_init__(self) -> None:
        """Check the token law and rewards at build time (ConfigError)."""
        if len(self.token_probs) != len(self.token_rewards):
            raise ConfigError("token_probs and token_rewards need the same length.", key="token_rewards")
        reward_law(self.token_probs, self.token_rewards, 1)

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any = None) -> Metrics:
        """Compute every length exactly (no randomness); see the class docstring."""
        del subject, reference, generator
        rows = [kl_bon_row(self.token_probs, self.token_rewards, int(L), self.kl_rate) for L in self.lengths]
        values: dict[str, float] = {"cramer_reward": rows[0]["cramer_reward"]}
        for r in rows:
            L = int(r["length"])
            for key in ("reward_ratio", "relative_kl", "kl_bon_tilt", "kl_bon", "reward_bon"):
                values[f"{key}/{L}"] = r[key]
        return Metrics(values=values, tables={"lengths": rows})
