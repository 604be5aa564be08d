"""Rates: the slope of ``log y`` against ``log x`` with a calibrated interval.

:func:`loglog_slope` (public) and :func:`loglog_core` (vectorised, for the coverage simulation).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quadriga.errors import ConfigError
from quadriga.stats.intervals import Interval
from quadriga.stats.pivots import TPivot


def loglog_core(lx: np.ndarray, ys: np.ndarray) -> tuple[Any, Any, Any]:
    """Slope of ``log mean_r(y)`` on ``lx`` for ``ys`` of shape ``(..., k, r)`` with delta-method se.

    ``slope = sum_k c_k log m_k`` with ``c = (lx - mean lx) / sum (lx - mean lx)^2``,
    ``var = sum_k c_k^2 s_k^2 / (r m_k^2)``, Welch-Satterthwaite ``df``.
    """
    r = ys.shape[-1]
    m = ys.mean(-1)
    v = ys.var(-1, ddof=1) / (r * m**2)
    lxc = lx - lx.mean()
    c = lxc / (lxc @ lxc)
    slope = (np.log(m) * c).sum(-1)
    parts = c**2 * v
    var = parts.sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = var**2 / ((parts**2).sum(-1) / (r - 1))
    return slope, np.sqrt(var), np.where(np.isfinite(df), df, r - 1)


def loglog_slope(
    x: Any, y: Any, *, level: float = 0.95, resamples: int | None = None, rng: Any = None
) -> Interval:
    """Slope of ``log y`` against ``log x`` (a rate ``y ~ x^slope``) with its interval.

    Shapes: ``x`` ``(k,)`` positive settings (sample sizes, alphas). ``y`` ``(k,)`` positive
    values (the t interval of the least-squares slope, df ``k - 2``), or ``(k, r)`` with
    ``r >= 2`` replicates per setting: the slope is fitted to ``log`` of the per-setting means
    ``m_k``, ``slope = sum_k c_k log m_k``; its variance ``sum_k c_k^2 s_k^2 / (r m_k^2)`` (delta
    method) and the Welch-Satterthwaite df give a t interval (:func:`loglog_core`).

    Args:
        x: settings, shape ``(k,)``.
        y: values, shape ``(k,)`` or ``(k, r)``; ``(k, 1)`` is read as ``(k,)``.
        level: confidence level in (0, 1).
        resamples: ignored (the interval is closed form); kept so that older calls work.
        rng: ignored, as ``resamples``.

    Returns:
        :class:`Interval` (unpacks as ``slope, low, high``); ``n`` is ``k`` or ``r``.

    Raises:
        ConfigError: fewer than 3 settings (2 with replicates), non-positive values, shape
            mismatch, level outside (0, 1).

    Source: ``scipy.stats.linregress``; Welch 1947 (df); the delta method for ``log m_k``.
    """
    from scipy.stats import linregress

    del resamples, rng
    if not 0 < level < 1:
        raise ConfigError(f"level must be in (0, 1), got {level}.", key="level")
    xs = np.asarray(x, dtype=float).reshape(-1)
    ys = np.asarray(y, dtype=float)
    if ys.ndim == 2 and ys.shape[1] == 1:
        ys = ys[:, 0]
    if ys.ndim not in (1, 2) or ys.shape[0] != len(xs):
        raise ConfigError(f"x has {len(xs)} settings but y has shape {ys.shape}.", key="y")
    if np.any(xs <= 0) or np.any(ys <= 0) or not np.all(np.isfinite(ys)):
        raise ConfigError("a log-log slope needs positive finite x and y.", key="y")
    lx = np.log(xs)
    if ys.ndim == 1:
        if len(xs) < 3:
            raise ConfigError("a slope interval needs at least 3 settings.", key="x")
        fit = linregress(lx, np.log(ys))
        df = float(len(xs) - 2)
        pivot = TPivot(float(fit.slope), float(fit.stderr), df)
        low, high = pivot.ends(level)
        how = f"Student t (least-squares slope of log y on log x, df {df:.0f})"
        return Interval(float(fit.slope), low, high, level, how, len(xs), float(fit.stderr), df, pivot=pivot)
    if len(xs) < 2:
        raise ConfigError("a slope needs at least 2 settings.", key="x")
    slope, se, df = (float(v) for v in loglog_core(lx, ys))
    pivot = TPivot(slope, se, df)
    low, high = pivot.ends(level)
    how = f"t (delta method on log per-setting means, {ys.shape[1]} replicates, Welch df {df:.3g})"
    return Interval(slope, low, high, level, how, ys.shape[1], se, df, pivot=pivot)
