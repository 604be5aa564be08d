"""Pivots: how an :class:`~quadriga.stats.Interval` was made.

A pivot gives p-values and other levels by the same method as the interval.

A pivot has ``ends(level) -> (low, high)`` and ``pvalue(boundary, alternative) -> float`` with
the invariant, for ``alpha = (1 - level) / 2``::

    low > b   <=>  pvalue(b, "greater") < alpha
    high < b  <=>  pvalue(b, "less") < alpha

(equalities aside). Each pivot below states why it holds.

- :class:`TPivot`: ``estimate +- t_{df} * se`` on the identity or the log scale (Student 1908,
  Welch 1947, the delta method).
- :class:`FiellerPivot`: the ratio of two paired means, the set of ``b`` that the paired t-test of
  ``mean(x - b y) = 0`` does not reject (Fieller 1954).
- :class:`BootstrapTPivot`: the studentized bootstrap (Efron & Tibshirani 1993, ch. 12; Hall 1988).
- :class:`InvertedPivot`: any nested family of intervals (the explicit BCa / percentile bootstrap),
  the p-value found by solving ``low(level) = b`` for the level.

Internal to :mod:`quadriga.stats`; nothing here is serialized.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

ALTERNATIVES = ("greater", "less")


def t_quantile(level: float, df: float) -> float:
    """``t_{df}`` quantile at ``0.5 + level / 2`` (the normal one when ``df`` is infinite)."""
    from scipy.stats import t

    return float(t.ppf(0.5 + level / 2, df))


def _check(alternative: str) -> None:
    from quadriga.errors import ConfigError

    if alternative not in ALTERNATIVES:
        raise ConfigError(f"alternative '{alternative}' is not 'greater' or 'less'.", key="alternative")


@attrs.frozen
class TPivot:
    """``(center - b) / se`` is ``t_{df}``: interval ``center -+ t_q se``, one-sided t p-values.

    ``center`` and ``se`` are on the interval's scale: ``log(estimate)`` and the standard error of
    ``log(estimate)`` when ``scale == "log"`` (then the ends are exponentiated and a boundary
    ``b <= 0`` lies below every positive ratio). ``se == 0`` (no spread): p is 0 or 1 by the side
    of the estimate. The invariant holds because ``low > b <=> (center - b) / se > t_q``.
    """

    center: float
    se: float
    df: float = math.inf
    scale: str = "identity"

    def ends(self, level: float) -> tuple[float, float]:
        """``(low, high)`` at ``level``."""
        q = t_quantile(level, self.df) if self.se > 0 else 0.0
        low, high = self.center - q * self.se, self.center + q * self.se
        return (math.exp(low), math.exp(high)) if self.scale == "log" else (low, high)

    def pvalue(self, boundary: float, alternative: str) -> float:
        """One-sided p-value of ``effect <= boundary`` ("greater") or ``effect >= boundary`` ("less")."""
        from scipy.stats import t

        _check(alternative)
        if self.scale == "log":
            if boundary <= 0:
                return 0.0 if alternative == "greater" else 1.0
            boundary = math.log(boundary)
        if not self.se > 0:
            above = self.center > boundary
            if alternative == "greater":
                return 0.0 if above else 1.0
            return 0.0 if self.center < boundary else 1.0
        z = (self.center - boundary) / self.se
        return float(t.sf(z, self.df) if alternative == "greater" else t.cdf(z, self.df))


@attrs.frozen
class FiellerPivot:
    """Fieller's interval for ``mean(x) / mean(y)`` of paired data (Fieller 1954).

    ``g(b) = sign(my) (mx - b my) / sqrt(vxx - 2 b vxy + b^2 vyy)`` is the paired t statistic of
    ``mean(x - b y) = 0`` (``v..`` are the variances and covariance of the two means, ``s^2 / n``)
    with ``df = n - 1``, oriented so that large ``g`` says "ratio > b". The interval is
    ``{b : |g(b)| <= t_q}``, a quadratic inequality in ``b``. When ``my^2 <= t_q^2 vyy`` (the
    mean of ``y`` is not distinguishable from 0 at this level) that set is the whole line or two
    rays, and the interval is reported as ``(-inf, inf)``.

    The p-value of the composite null "ratio <= b" is ``sf(min over b' <= b of g(b'))``: ``g`` has
    one critical point and tends to ``+-|my| / sqrt(vyy)`` at ``-+inf``, so this minimum is closed
    form, and it equals the t-test at ``b`` itself whenever ``g`` is monotone on ``(-inf, b]``
    (always in the bounded case below the estimate). It makes the invariant exact: ``g > t_q`` on
    all of ``(-inf, b]`` exactly when ``b < low``; in the unbounded case the limit
    ``|my| / sqrt(vyy) <= t_q`` keeps every p-value at or above ``alpha``.
    """

    mx: float
    my: float
    vxx: float
    vyy: float
    vxy: float
    df: float

    def _g(self, b: float) -> float:
        q = self.vxx - 2 * b * self.vxy + b * b * self.vyy
        num = math.copysign(1.0, self.my) * (self.mx - b * self.my)
        if q <= 0:
            return 0.0 if num == 0 else math.copysign(math.inf, num)
        return num / math.sqrt(q)

    def _limit(self) -> float:
        return abs(self.my) / math.sqrt(self.vyy) if self.vyy > 0 else math.inf

    def _critical(self) -> float:
        den = self.my * self.vxy - self.mx * self.vyy
        return (self.my * self.vxx - self.mx * self.vxy) / den if den != 0 else math.nan

    def kind(self, level: float) -> str:
        """``"bounded"``, ``"exclusive"`` (two rays) or ``"unbounded"`` (the whole line) at ``level``."""
        q = t_quantile(level, self.df)
        a = self.my**2 - q * q * self.vyy
        if a > 0:
            return "bounded"
        b = self.mx * self.my - q * q * self.vxy
        c = self.mx**2 - q * q * self.vxx
        return "exclusive" if a < 0 and b * b - a * c > 0 else "unbounded"

    def ends(self, level: float) -> tuple[float, float]:
        """``(low, high)`` at ``level``; ``(-inf, inf)`` unless :meth:`kind` is ``"bounded"``."""
        q = t_quantile(level, self.df)
        a = self.my**2 - q * q * self.vyy
        if not a > 0:
            return -math.inf, math.inf
        b = self.mx * self.my - q * q * self.vxy
        c = self.mx**2 - q * q * self.vxx
        r = math.sqrt(max(b * b - a * c, 0.0))
        return (b - r) / a, (b + r) / a

    def pvalue(self, boundary: float, alternative: str) -> float:
        """One-sided p-value of ``ratio <= boundary`` ("greater") or ``ratio >= boundary`` ("less")."""
        from scipy.stats import t

        _check(alternative)
        lim, crit = self._limit(), self._critical()
        if alternative == "greater":
            cands = [lim, self._g(boundary)]
            if crit <= boundary:
                cands.append(self._g(crit))
            return float(t.sf(min(cands), self.df))
        cands = [-lim, self._g(boundary)]
        if crit >= boundary:
            cands.append(self._g(crit))
        return float(t.cdf(max(cands), self.df))


def bootstrap_t_k(alpha: float, resamples: int) -> int:
    """The largest ``k`` with ``(1 + k) / (B + 1) < alpha`` in floating point (``-1`` if none).

    Computed with the very division that :meth:`BootstrapTPivot.pvalue` makes, so that the ends
    and the p-values agree even where ``alpha (B + 1)`` is an integer.
    """
    b1 = resamples + 1
    k = max(-1, math.floor(alpha * b1) - 1)
    while (2 + k) / b1 < alpha:
        k += 1
    while k >= 0 and not (1 + k) / b1 < alpha:
        k -= 1
    return k


def _sorted(a: Any) -> np.ndarray:
    return np.sort(np.asarray(a, dtype=float))


@attrs.frozen
class BootstrapTPivot:
    """Studentized bootstrap: ``t* = (theta* - theta) / se*`` over ``B`` resamples.

    Monte-Carlo p-values ``(1 + #{t* >= t}) / (B + 1)`` ("greater") and
    ``(1 + #{t* <= t}) / (B + 1)`` ("less") with ``t = (estimate - b) / se`` (Davison & Hinkley
    1997, Eq. 4.11). The ends are order statistics of ``t*`` chosen so that the invariant is exact:
    with ``K`` the largest ``k`` with ``(1 + k) / (B + 1) < alpha`` (:func:`bootstrap_t_k`),
    ``low = estimate - t*_(B-K) se`` and
    ``high = estimate - t*_(K+1) se`` (1-based order statistics). When ``K < 0`` (a level so close
    to 1 that ``B`` resamples cannot reach it) the ends are infinite.
    (Efron & Tibshirani 1993, ch. 12; Hall 1988.)
    """

    estimate: float
    se: float
    tstar: np.ndarray = attrs.field(eq=False, converter=_sorted)

    def ends(self, level: float) -> tuple[float, float]:
        """``(low, high)`` at ``level``."""
        b = len(self.tstar)
        alpha = (1 - level) / 2
        k = bootstrap_t_k(alpha, b)
        if k < 0:
            return -math.inf, math.inf
        return (
            float(self.estimate - self.tstar[b - k - 1] * self.se),
            float(self.estimate - self.tstar[k] * self.se),
        )

    def pvalue(self, boundary: float, alternative: str) -> float:
        """One-sided Monte-Carlo p-value (see the class)."""
        _check(alternative)
        b = len(self.tstar)
        if not self.se > 0:
            t_obs = math.copysign(math.inf, self.estimate - boundary) if self.estimate != boundary else 0.0
        else:
            t_obs = (self.estimate - boundary) / self.se
        if alternative == "greater":
            count = b - int(np.searchsorted(self.tstar, t_obs, side="left"))
        else:
            count = int(np.searchsorted(self.tstar, t_obs, side="right"))
        return (1 + count) / (b + 1)


@attrs.frozen
class InvertedPivot:
    """Any nested family of intervals ``ends(level)``; p-values by solving ``low(level) = b``.

    ``pvalue(b, "greater")`` is the ``alpha = (1 - level) / 2`` at which the lower end reaches
    ``b`` (bisection on ``alpha`` in ``(1e-12, 0.5)``, to ``1e-12``), so ``low > b <=> p < alpha``
    as far as ``ends`` is monotone in the level. Used for the explicit BCa / percentile bootstrap
    (the bootstrap distribution is kept and only the level changes).
    """

    family: Callable[[float], tuple[float, float]] = attrs.field(eq=False)

    def ends(self, level: float) -> tuple[float, float]:
        """``(low, high)`` at ``level``."""
        return self.family(level)

    def _solve(self, boundary: float, side: int) -> float | None:
        """The ``alpha`` in ``[1e-12, 0.5]`` where end ``side`` reaches ``boundary``; None past 0.5."""

        def rejects(alpha: float) -> bool:
            end = self.family(1 - 2 * alpha)[side]
            return end > boundary if side == 0 else end < boundary

        lo, hi = 1e-12, 0.5
        if rejects(lo):
            return lo
        if not rejects(hi):
            return None
        while hi - lo > 1e-12:
            mid = (lo + hi) / 2
            if rejects(mid):
                hi = mid
            else:
                lo = mid
        return hi

    def pvalue(self, boundary: float, alternative: str) -> float:
        """One-sided p-value by inverting the family (see the class).

        Above 0.5 it is ``1 -`` the other side's p-value.
        """
        _check(alternative)
        side = 0 if alternative == "greater" else 1
        p = self._solve(boundary, side)
        if p is not None:
            return p
        other = self._solve(boundary, 1 - side)
        return 0.5 if other is None else 1.0 - other
