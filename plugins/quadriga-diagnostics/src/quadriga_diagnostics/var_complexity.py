"""``diag-var-complexity``: the polynomial-method low-rank approximation of VAR attention, its
error against the Taylor-remainder bound, below and above the input-norm threshold.

Row 003:85 (Ke et al. 2025, "On computational limits and provably efficient criteria of visual
autoregressive models: a fine-grained complexity analysis"):
VAR attention over the ``L = sum_k n_k^2`` tokens of all scales (block-causal: a token of scale
``k`` attends to every token of scales ``<= k``) costs ``O(n^4 d)`` for a final ``n x n`` map.
When the entries of ``Q, K`` are bounded by ``B = o(sqrt(log n))`` a low-rank (polynomial-method)
approximation computes it in sub-quartic time; for ``B`` of order ``sqrt(log n)`` and above no
sub-quartic algorithm exists under SETH. The construction is the polynomial method of Alman & Song
2023 ("Fast attention requires bounded entries", NeurIPS), Lemma 3.1 / Thm. 1.4.

Construction (written out here): the degree-``g`` Taylor polynomial of ``exp`` at
``t = <q, k> / sqrt(d)`` is ``sum_{j<=g} t^j / j! = phi(q)^T phi(k)`` with the explicit feature map
``phi(x)_m = (x / d^{1/4})^m / sqrt(m!)`` over the multi-indices ``m`` in ``N^d`` with ``|m| <= g``
(``x^m = prod_i x_i^{m_i}``, ``m! = prod_i m_i!``; multinomial theorem), so
``exp(Q K^T / sqrt(d)) ~ U V^T`` has rank ``R = binom(d + g, g)``. The block-causal products are
prefix sums over scales: ``sum_{j <= scale} phi(k_j) [v_j, 1]^T`` costs ``O(L R d)``.

Predicted error (closed form, ours): with ``T = max |t| <= sqrt(d) B^2`` the Lagrange remainder
gives the entrywise relative error ``|exp(t) - T_g(t)| / exp(t) <= eps = T^{g+1} e^T / (g+1)!``;
row normalisation turns it into ``max_i ||out~_i - out_i||_inf <= 2 eps / (1 - eps) max |V|``
(each softmax weight moves by at most ``2 eps / (1 - eps)`` of itself). The threshold
``B*(n)`` is the ``B`` at which that bound equals the tolerance, for the largest degree whose rank
fits the sub-quartic budget ``R <= n^rank_exponent`` (time ``O(n^{2 + rank_exponent} d)``); with
``d`` fixed, ``g ~ log n`` so ``B*(n)^2 ~ log n`` (the paper's ``sqrt(log n)`` scale).
"""

from __future__ import annotations

import time
from math import comb, lgamma, log
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator
from quadriga.validators import int_at_least, positive

__all__ = [
    "VAR_PATCH_NUMS",
    "VARComplexity",
    "block_causal_attention",
    "degree_for_rank",
    "lowrank_block_causal_attention",
    "lowrank_normaliser",
    "monomial_exponents",
    "output_error_bound",
    "taylor_features",
    "taylor_remainder_bound",
    "threshold_norm",
    "var_row",
    "var_scales",
]

#: token-map sides of VAR's 10-scale schedule for a 16 x 16 final map (Tian et al. 2024, ``patch_nums``)
VAR_PATCH_NUMS = (1, 2, 3, 4, 5, 6, 8, 10, 13, 16)


def var_scales(n: int) -> list[int]:
    """Sides ``n_k`` of the token maps of a VAR model whose final map is ``n x n``: VAR's schedule
    ``VAR_PATCH_NUMS`` rescaled to end at ``n`` (rounded, duplicates removed).

    Raises: ConfigError for ``n < 2`` (key ``sizes``). Source: Tian et al. 2024 (NeurIPS), sec. 3.
    """
    if n < 2:
        raise ConfigError(f"a VAR final map needs n >= 2, got {n}.", key="sizes")
    return sorted({max(1, round(p * n / 16)) for p in VAR_PATCH_NUMS} | {n})


def monomial_exponents(dim: int, degree: int) -> np.ndarray:
    """All multi-indices ``m`` in ``N^dim`` with ``|m| <= degree``, graded.

    Shapes: returns ``(binom(dim + degree, degree), dim)`` integers. Raises: nothing.
    """
    from itertools import combinations_with_replacement

    rows = []
    for j in range(degree + 1):
        for combo in combinations_with_replacement(range(dim), j):
            rows.append(np.bincount(np.asarray(combo, dtype=int), minlength=dim))
    return np.array(rows, dtype=int).reshape(-1, dim)


def taylor_features(x: Any, degree: int) -> np.ndarray:
    """Explicit feature map of the degree-``g`` Taylor polynomial of ``exp(<q, k> / sqrt(d))``:
    ``phi(x)_m = (x / d^{1/4})^m / sqrt(m!)``, so ``phi(q) . phi(k) = sum_{j<=g} t^j / j!``.

    Shapes: ``x`` ``(L, d)``; returns ``(L, binom(d + g, g))``. Raises: nothing.
    Source: Alman & Song 2023, Lemma 3.1 (the polynomial method), with the multinomial theorem.
    """
    from scipy.special import gammaln

    x = np.asarray(x, float)
    m = monomial_exponents(x.shape[1], degree)
    scaled = x / x.shape[1] ** 0.25
    return np.prod(scaled[:, None, :] ** m[None, :, :], axis=2) * np.exp(-0.5 * gammaln(m + 1).sum(1))


def taylor_remainder_bound(t_max: float, degree: int) -> float:
    """``eps = T^{g+1} e^T / (g+1)!``: the entrywise relative error of ``T_g(t)`` for ``exp(t)``,
    ``|t| <= T`` (Lagrange remainder; the ``e^T`` covers ``t < 0``, where ``exp(t)`` is small).

    Raises: nothing (``0`` for ``T = 0``). Source: Taylor's theorem with Lagrange remainder.
    """
    if t_max <= 0:
        return 0.0
    return float(np.exp((degree + 1) * log(t_max) + t_max - lgamma(degree + 2)))


def output_error_bound(eps: float) -> float:
    """``2 eps / (1 - eps)``: bound on ``max_i ||out~_i - out_i||_inf / max |V|`` when every
    attention entry has relative error ``<= eps`` (``inf`` for ``eps >= 1``).

    Raises: nothing. Source: ours (row normalisation of entrywise relative errors).
    """
    return 2 * eps / (1 - eps) if eps < 1 else float("inf")


def threshold_norm(dim: int, degree: int, tolerance: float) -> float:
    """``B*``: the entry bound at which ``output_error_bound(taylor_remainder_bound(sqrt(d) B^2, g))``
    equals ``tolerance`` (bisection on the increasing bound).

    Raises: ConfigError for a tolerance outside (0, 1) (key ``tolerance``). Source: module docstring.
    """
    from scipy.optimize import brentq

    if not 0 < tolerance < 1:
        raise ConfigError(f"tolerance must be in (0, 1), got {tolerance}.", key="tolerance")
    target = log(tolerance / (2 + tolerance))  # 2 eps / (1 - eps) = tol  <=>  eps = tol / (2 + tol)
    t_star = brentq(lambda t: log(taylor_remainder_bound(t, degree)) - target, 1e-12, 200.0, xtol=1e-14)
    return float(np.sqrt(t_star / np.sqrt(dim)))


def degree_for_rank(dim: int, budget: float) -> int:
    """Largest degree ``g`` with ``binom(dim + g, g) <= budget`` (``0`` when even rank 1 is over).

    Raises: nothing. Source: the rank of the polynomial method (Alman & Song 2023).
    """
    g = 0
    while comb(dim + g + 1, g + 1) <= budget:
        g += 1
    return g


def _offsets(sides: list[int]) -> np.ndarray:
    return np.cumsum([s * s for s in sides])


def block_causal_attention(q: Any, k: Any, v: Any, sides: list[int]) -> np.ndarray:
    """Exact VAR attention ``softmax(Q K^T / sqrt(d))`` with the block-causal mask of the scales.

    Shapes: ``q, k`` ``(L, d)``, ``v`` ``(L, e)`` with ``L = sum sides^2``; returns ``(L, e)``.
    Raises: nothing. Cost ``O(L^2 d)``. Source: Tian et al. 2024 (VAR), the block-wise causal mask.
    """
    q, k, v = (np.asarray(a, float) for a in (q, k, v))
    logits = q @ k.T / np.sqrt(q.shape[1])
    out = np.empty_like(v)
    start = 0
    for end in _offsets(sides):
        blk = logits[start:end, :end]
        a = np.exp(blk - blk.max(1, keepdims=True))
        out[start:end] = a @ v[:end] / a.sum(1, keepdims=True)
        start = end
    return out


def lowrank_block_causal_attention(q: Any, k: Any, v: Any, sides: list[int], degree: int) -> np.ndarray:
    """Polynomial-method VAR attention: ``exp(Q K^T / sqrt(d)) ~ phi(Q) phi(K)^T`` (rank
    ``binom(d + g, g)``), block-causal through prefix sums of ``phi(k_j) [v_j, 1]^T`` over scales.

    Shapes: as :func:`block_causal_attention`. Raises: nothing (rows whose approximate normaliser
    is not positive come out 0: the approximation has broken down there; :func:`var_row` counts them).
    Cost ``O(L R d)``. Source: Alman & Song 2023, Thm. 1.4; Ke et al. 2025, sec. on the
    sub-quartic construction.
    """
    v = np.asarray(v, float)
    fq, fk = taylor_features(q, degree), taylor_features(k, degree)
    vt = np.hstack([v, np.ones((len(v), 1))])
    acc = np.zeros((fk.shape[1], vt.shape[1]))
    out = np.empty_like(v)
    start = 0
    for end in _offsets(sides):
        acc += fk[start:end].T @ vt[start:end]
        num = fq[start:end] @ acc
        with np.errstate(divide="ignore", invalid="ignore"):
            out[start:end] = np.where(num[:, -1:] > 0, num[:, :-1] / num[:, -1:], 0.0)
        start = end
    return out


def lowrank_normaliser(q: Any, k: Any, sides: list[int], degree: int) -> np.ndarray:
    """Approximate softmax normaliser ``sum_{j visible} phi(q_i) . phi(k_j)`` of every row.

    Shapes: ``(L,)``. Raises: nothing. Source: as :func:`lowrank_block_causal_attention`.
    """
    fq, fk = taylor_features(q, degree), taylor_features(k, degree)
    out = np.empty(len(fq))
    acc = np.zeros(fk.shape[1])
    start = 0
    for end in _offsets(sides):
        acc += fk[start:end].sum(0)
        out[start:end] = fq[start:end] @ acc
        start = end
    return out


def var_row(
    n: int, dim: int, norm: float, degree: int, rng: np.random.Generator, *, value_dim: int | None = None
) -> dict[str, float]:
    """One draw: ``Q, K`` with entries ``+-B`` (signs uniform: the bound is attained), ``V``
    uniform on ``[-1, 1]``; exact and low-rank VAR attention, their error, bound and wall times.

    Returns ``tokens`` (L), ``rank``, ``t_max`` (largest ``|<q, k>| / sqrt(d)`` inside the mask),
    ``error`` (``max |out~ - out| / max |V|``; broken rows output 0), ``broken_rows`` (share of
    rows whose approximate normaliser is not positive), ``frobenius`` (relative), ``remainder``
    (``eps`` at ``T = sqrt(d) B^2``), ``bound`` (``2 eps / (1 - eps)``, ``inf`` for ``eps >= 1``),
    ``bound_at_t_max`` (same at the measured ``t_max``), ``cost_exact`` (multiply-adds of the
    masked exact attention, ``(2 d + 1)`` per visible pair), ``cost_lowrank`` (multiply-adds of the
    two feature products, ``2 L R (d + 1)``; the feature maps themselves not counted),
    ``seconds_exact``, ``seconds_lowrank`` (wall times).

    Units: errors relative to ``max |V|``; seconds of wall time. Raises: ConfigError from
    :func:`var_scales`. Source: module docstring.
    """
    sides = var_scales(n)
    tokens = int(sum(s * s for s in sides))
    q = norm * rng.choice([-1.0, 1.0], (tokens, dim))
    k = norm * rng.choice([-1.0, 1.0], (tokens, dim))
    v = rng.uniform(-1.0, 1.0, (tokens, value_dim or dim))
    t0 = time.perf_counter()
    exact = block_causal_attention(q, k, v, sides)
    t1 = time.perf_counter()
    approx = lowrank_block_causal_attention(q, k, v, sides, degree)
    t2 = time.perf_counter()
    diff = approx - exact
    err = float(np.abs(diff).max() / np.abs(v).max())
    broken = lowrank_normaliser(q, k, sides, degree) <= 0
    block_of = np.repeat(np.arange(len(sides)), [s * s for s in sides])
    mask = block_of[None, :] <= block_of[:, None]
    t_max = float(np.abs(q @ k.T / np.sqrt(dim))[mask].max())
    tokens_seen, rank = int(mask.sum()), comb(dim + degree, degree)
    return {
        "tokens": float(tokens),
        "rank": float(rank),
        "t_max": t_max,
        "error": err,
        "broken_rows": float(broken.mean()),
        "frobenius": float(np.linalg.norm(diff) / np.linalg.norm(exact)),
        "remainder": taylor_remainder_bound(np.sqrt(dim) * norm**2, degree),
        "bound": output_error_bound(taylor_remainder_bound(np.sqrt(dim) * norm**2, degree)),
        "bound_at_t_max": output_error_bound(taylor_remainder_bound(t_max, degree)),
        "cost_exact": float(tokens_seen * (2 * dim + 1)),
        "cost_lowrank": float(2 * tokens * rank * (dim + 1)),
        "seconds_exact": t1 - t0,
        "seconds_lowrank": t2 - t1,
    }


@attrs.define(kw_only=True)
class VARComplexity(Evaluator):
    """Polynomial-method low-rank VAR attention against exact attention, at entry bounds
    ``B = multiplier * B*(n)`` around the threshold, for several final map sizes ``n``.

    Input: none (``subject`` and ``reference`` are ignored; the test bed of the module docstring).

    Returns (``Metrics``): per ``n`` and multiplier ``m``: ``error_max/<n>/<m>`` (largest over the
    draws of ``max |out~ - out| / max |V|``), ``error_min/<n>/<m>``, ``broken_rows/<n>/<m>``
    (largest share of rows with a non-positive approximate normaliser), ``remainder/<n>/<m>``
    (``eps``), ``bound/<n>/<m>`` (the predicted ``2 eps / (1 - eps)``, omitted where ``eps >= 1``:
    no bound); per ``n``: ``degree/<n>``, ``rank/<n>``, ``tokens/<n>``,
    ``threshold/<n>`` (``B*``), ``threshold_over_sqrt_log_n/<n>``, ``cost_ratio/<n>`` (multiply-adds,
    exact over low-rank); table ``draws`` (one row per draw, wall times left out: they are not
    reproducible).

    Shapes:
        scalars; the table has one row per (n, multiplier, draw).

    Units:
        errors relative to ``max |V|``; ``B`` in units of the entries; seconds.

    Raises:
        ConfigError: tolerance outside (0, 1), a size below 2, non-positive multipliers.

    Source: Ke et al. 2025, computational limits of VAR models: the norm threshold of VAR
    attention; Alman & Song 2023 (NeurIPS), Lemma 3.1 and Thm. 1.4 (polynomial method).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {"sizes": [8], "draws": 2, "multipliers": [1.0, 2.0]}

    sizes: list[int] = param(factory=lambda: [16, 24, 32], doc="final token-map sides n")
    dim: int = param(4, doc="head dimension d", validator=int_at_least(1))
    rank_exponent: float = param(
        1.5,
        doc="rank budget R <= n^rank_exponent (time O(n^(2 + exponent) d), sub-quartic below 2)",
        validator=positive,
    )
    tolerance: float = param(0.05, doc="error tolerance defining the threshold B*", validator=positive)
    multipliers: list[float] = param(
        factory=lambda: [0.5, 1.0, 2.0, 3.0], doc="entry bounds B as multiples of B*(n)"
    )
    draws: int = param(4, doc="random (Q, K, V) per setting", validator=int_at_least(1))

    def __attrs_post_init__(self) -> None:
        """Check sizes, multipliers and the tolerance at build time (ConfigError)."""
        for n in self.sizes:
            var_scales(int(n))
        if any(m <= 0 for m in self.multipliers):
            raise ConfigError("multipliers must be positive.", key="multipliers")
        threshold_norm(self.dim, 1, self.tolerance)

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any = None) -> Metrics:
        """Every (n, multiplier) on ``draws`` random inputs; see the class docstring."""
        from quadriga.seeding import numpy_rng

        del subject, reference
        rng = numpy_rng(generator) if generator is not None else np.random.default_rng(0)
        values: dict[str, float] = {}
        rows = []
        for n in self.sizes:
            n = int(n)
            g = degree_for_rank(self.dim, n**self.rank_exponent)
            b_star = threshold_norm(self.dim, g, self.tolerance)
            values[f"degree/{n}"] = float(g)
            values[f"threshold/{n}"] = b_star
            values[f"threshold_over_sqrt_log_n/{n}"] = b_star / np.sqrt(np.log(n))
            for m in self.multipliers:
                out = [var_row(n, self.dim, m * b_star, g, rng) for _ in range(self.draws)]
                errs = [r["error"] for r in out]
                values[f"error_max/{n}/{m:g}"] = max(errs)
                values[f"error_min/{n}/{m:g}"] = min(errs)
                values[f"broken_rows/{n}/{m:g}"] = max(r["broken_rows"] for r in out)
                values[f"remainder/{n}/{m:g}"] = out[0]["remainder"]
                if np.isfinite(out[0]["bound"]):
                    values[f"bound/{n}/{m:g}"] = out[0]["bound"]
                values[f"rank/{n}"] = out[0]["rank"]
                values[f"tokens/{n}"] = out[0]["tokens"]
                values[f"cost_ratio/{n}"] = out[0]["cost_exact"] / out[0]["cost_lowrank"]
                timing = ("seconds_exact", "seconds_lowrank")  # wall times vary: kept out of the metrics
                rows += [
                    {"n": float(n), "multiplier": float(m), "degree": float(g)}
                    | {key: val for key, val in r.items() if key not in timing}
                    for r in out
                ]
        return Metrics(values=values, tables={"draws": rows})
