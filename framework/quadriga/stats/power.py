"""Multiple comparisons and power: :func:`holm`, :func:`min_detectable_effect`, :func:`replicates_needed`.

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


def min_detectable_effect(se: float, *, level: float = 0.95, power: float = 0.8) -> float:
    """Smallest true distance from the threshold that a two-sided test at ``level`` detects.

    Detected with probability ``power``: ``(z_{(1+level)/2} + z_power) se``.

    Source: Cohen 1988, ch. 2 (normal approximation).
    """
    from scipy.stats import norm

    return float((norm.ppf(0.5 + level / 2) + norm.ppf(power)) * se)


def replicates_needed(n: int, se: float, distance: float, *, level: float = 0.95, power: float = 0.8) -> int:
    """Replicates at which the observed ``distance`` from the threshold would be detected.

    Detected with probability ``power``, the standard error falling as ``1/sqrt(n)``; ``-1`` when
    ``distance`` is 0.
    """
    if distance == 0 or not math.isfinite(distance) or not math.isfinite(se):
        return -1
    mde = min_detectable_effect(se, level=level, power=power)
    return max(n, math.ceil(n * (mde / abs(distance)) ** 2))
