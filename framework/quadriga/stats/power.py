"""Multiple comparisons and power.

:func:`holm`, :func:`min_detectable_effect`, :func:`replicates_needed`, :func:`t_power`,
:func:`replicates_for_power`.

Source: Holm 1979; Cohen 1988, ch. 2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values (family-wise error control for several comparisons).

    The i-th smallest p-value is multiplied by ``k - i + 1``, made monotone and capped at 1.

    Source: Holm 1979, "A simple sequentially rejective multiple test procedure".
    """
    p = np.asarray(pvalues, dtype=float)
    k = len(p)
    if k == 0:
        return []
    order = np.argsort(p)
    adj = np.maximum.accumulate((k - np.arange(k)) * p[order])
    out = np.empty(k)
    out[order] = np.minimum(adj, 1.0)
    return [float(v) for v in out]


def min_detectable_effect(
    se: float, *, level: float = 0.95, power: float = 0.8, df: float = math.inf
) -> float:
    """Smallest true distance from the threshold that the one-sided test at ``(1 - level) / 2`` detects.

    Detected with probability ``power``: ``(q_{(1+level)/2} + q_power) se`` with ``q`` the
    quantiles of Student's t with ``df`` degrees of freedom (the normal's when ``df`` is infinite).

    Source: Cohen 1988, ch. 2 (the t quantiles for a t-based interval).
    """
    from scipy.stats import t as student_t

    return float((student_t.ppf(0.5 + level / 2, df) + student_t.ppf(power, df)) * se)


def replicates_needed(n: int, se: float, distance: float, *, level: float = 0.95, power: float = 0.8) -> int:
    """Replicates at which the observed ``distance`` from the threshold would be detected.

    Detected with probability ``power``, the standard error falling as ``1/sqrt(n)``; ``-1`` when
    ``distance`` is 0.
    """
    if distance == 0 or not math.isfinite(distance) or not math.isfinite(se):
        return -1
    mde = min_detectable_effect(se, level=level, power=power)
    return max(n, math.ceil(n * (mde / abs(distance)) ** 2))


def t_power(distance: float, sd: float, n: int, *, level: float = 0.95) -> float:
    """Power of the one-sided one-sample t test at ``(1 - level) / 2`` for a true distance ``distance``.

    ``distance`` is the true effect's distance from the boundary on the claimed side, ``sd`` the
    spread of one replicate (``se * sqrt(n)``), ``n`` the replicates; the statistic
    ``T = distance_hat / (sd_hat / sqrt(n))`` is noncentral t with ``n - 1`` degrees of freedom and
    noncentrality ``distance * sqrt(n) / sd``.

    Returns:
        The probability in [0, 1]; NaN for ``n < 2`` or a non-positive ``sd``.

    Source: Owen 1965, "The power of Student's t-test"; ``scipy.stats.nct``.
    """
    from scipy.stats import nct
    from scipy.stats import t as student_t

    if n < 2 or not sd > 0 or not math.isfinite(sd):
        return math.nan
    crit = student_t.ppf(0.5 + level / 2, n - 1)
    return float(nct.sf(crit, n - 1, distance * math.sqrt(n) / sd))


def replicates_for_power(
    distance: float, sd: float, *, level: float = 0.95, power: float = 0.8, max_n: int = 100_000
) -> int:
    """The fewest replicates at which :func:`t_power` reaches ``power`` (a plan's n).

    Args:
        distance: the minimum detectable effect: the true distance from the boundary to detect.
        sd: the spread of one replicate's contribution (a pilot's ``se * sqrt(n)``).
        level: the two-sided level; the test is one-sided at ``(1 - level) / 2``.
        power: the detection probability wanted.
        max_n: the largest n searched.

    Returns:
        n >= 2; ``-1`` when ``distance`` or ``sd`` is not a positive finite number, or more than
        ``max_n`` replicates would be needed.

    Source: Cohen 1988, ch. 2; Owen 1965 (noncentral t power).
    """
    if not (distance > 0 and sd > 0 and math.isfinite(distance) and math.isfinite(sd)):
        return -1
    lo, hi = 2, 2
    while t_power(distance, sd, hi, level=level) < power:
        lo, hi = hi, hi * 2
        if hi > max_n:
            return (
                -1
                if t_power(distance, sd, max_n, level=level) < power
                else _bisect(distance, sd, lo, max_n, level, power)
            )
    return _bisect(distance, sd, lo, hi, level, power)


def _bisect(distance: float, sd: float, lo: int, hi: int, level: float, power: float) -> int:
    """The least n in ``[lo, hi]`` with enough power (power grows with n)."""
    if t_power(distance, sd, lo, level=level) >= power:
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if t_power(distance, sd, mid, level=level) >= power:
            hi = mid
        else:
            lo = mid
    return hi
