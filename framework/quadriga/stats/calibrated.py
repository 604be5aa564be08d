"""Calibrated intervals: :func:`interval` chooses the method from the statistic and ``n``.

==================  ======================  ==================================================
statistic           paired / one sample     unpaired
==================  ======================  ==================================================
``mean``            Student t, df n - 1     -
``difference``      Student t on x - y      Welch t, Welch-Satterthwaite df
``ratio``           Fieller (t, df n - 1)   t on log(mean x / mean y), delta method, Welch df
``iqm-difference``  Yuen trimmed t, h - 1   Yuen trimmed t, Welch df
callable            bootstrap-t, jackknife  bootstrap-t, jackknife s.e. of each sample
==================  ======================  ==================================================

The vectorised cores (``*_core``) take arrays of shape ``(..., n)`` so that the coverage test and
``benchmarks/coverage_table.py`` compute thousands of intervals at once with the same formulas.
Where the coverage table shows a method below nominal (skewed data at small n), the method
string says so (:data:`SKEWED_BELOW_N`).

Sources: Student 1908; Welch 1947; Fieller 1954; Yuen 1974 (winsorized standard error of a
trimmed mean); Efron & Tibshirani 1993, ch. 12 (bootstrap-t); Hall 1988.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from quadriga.errors import ConfigError
from quadriga.stats.intervals import STATISTICS, Interval, bootstrap_ci, prepare, small_sample_note
from quadriga.stats.pivots import BootstrapTPivot, FiellerPivot, TPivot

#: below this n a t interval of a mean (or paired difference) of skewed data undercovers by more
#: than 2.5 points (lognormal sigma 0.5: 0.92 at n = 5-10; docs/concepts/intervals.md); the method
#: string then says so when the data look skewed (:data:`SKEW_Z`)
SKEWED_BELOW_N = 20
#: data look skewed when the sample skewness (adjusted Fisher-Pearson, ``scipy.stats.skew(bias=
#: False)``) exceeds this many of its standard errors under normality,
#: ``sqrt(6 n (n - 1) / ((n - 2) (n + 1) (n + 3)))``: a test of about 5% size that rarely fires at
#: n <= 5 even for skewed data, so the docs state the n limit whatever the flag says
SKEW_Z = 2.0
#: at any n, data whose sample skewness exceeds this are strongly skewed: t intervals of their
#: mean (or of a ratio of means) cover 0.83-0.90 up to n = 50 (lognormal sigma 1, skewness 6.2)
STRONG_SKEW = 2.0
#: below this n the bootstrap-t overcovers (0.97-1.00 at n = 3-5; a resample of few values often
#: has no spread, so ``t*`` is infinite); its method string says so
BOOTSTRAP_T_BELOW_N = 10

METHODS = ("auto", "t", "fieller", "log-t", "bootstrap-t", "BCa", "percentile")


# ---- vectorised cores: arrays (..., n) -> (center, se, df) or pivot parameters ----


def t_core(d: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """One-sample t: ``(mean, s / sqrt(n), n - 1)`` along the last axis."""
    n = d.shape[-1]
    return d.mean(-1), d.std(-1, ddof=1) / math.sqrt(n), float(n - 1)


def welch_core(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Welch: ``(mean x - mean y, se, Welch-Satterthwaite df)`` (Welch 1947)."""
    n, m = x.shape[-1], y.shape[-1]
    vx, vy = x.var(-1, ddof=1) / n, y.var(-1, ddof=1) / m
    return x.mean(-1) - y.mean(-1), np.sqrt(vx + vy), _ws_df(vx, n - 1, vy, m - 1)


def _ws_df(va: Any, da: float, vb: Any, db: float) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (va + vb) ** 2 / (va**2 / da + vb**2 / db)
    return np.where(np.isfinite(df), df, min(da, db))


def fieller_core(x: np.ndarray, y: np.ndarray) -> tuple[Any, Any, Any, Any, Any, Any]:
    """Paired means and the (co)variances of the means: ``(mx, my, vxx, vyy, vxy, df)``."""
    n = x.shape[-1]
    xc, yc = x - x.mean(-1, keepdims=True), y - y.mean(-1, keepdims=True)
    den = (n - 1) * n
    return (
        x.mean(-1),
        y.mean(-1),
        (xc * xc).sum(-1) / den,
        (yc * yc).sum(-1) / den,
        (xc * yc).sum(-1) / den,
        np.full(np.shape(x.mean(-1)), float(n - 1)),
    )


def fieller_ends(mx: Any, my: Any, vxx: Any, vyy: Any, vxy: Any, df: Any, level: float) -> tuple[Any, Any]:
    """Fieller ends, vectorised; ``(-inf, inf)`` where the denominator is not bounded away from 0."""
    from scipy.stats import t

    q2 = t.ppf(0.5 + level / 2, df) ** 2
    a, b, c = my**2 - q2 * vyy, mx * my - q2 * vxy, mx**2 - q2 * vxx
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.sqrt(np.maximum(b * b - a * c, 0.0))
        low, high = (b - r) / a, (b + r) / a
    bounded = a > 0
    return np.where(bounded, low, -np.inf), np.where(bounded, high, np.inf)


def logratio_core(x: np.ndarray, y: np.ndarray, *, paired: bool) -> tuple[Any, Any, Any]:
    """``log(mean x / mean y)`` with its delta-method se and df (n - 1 paired, Welch unpaired)."""
    mx, my = x.mean(-1), y.mean(-1)
    if paired:
        _, _, vxx, vyy, vxy, df = fieller_core(x, y)
        var = vxx / mx**2 + vyy / my**2 - 2 * vxy / (mx * my)
        return np.log(mx / my), np.sqrt(np.maximum(var, 0.0)), df
    n, m = x.shape[-1], y.shape[-1]
    va, vb = x.var(-1, ddof=1) / (n * mx**2), y.var(-1, ddof=1) / (m * my**2)
    return np.log(mx / my), np.sqrt(va + vb), _ws_df(va, n - 1, vb, m - 1)


def _yuen(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """25% trimmed mean, centred winsorized values and ``h`` (values kept) along the last axis."""
    n = x.shape[-1]
    g = int(0.25 * n)
    s = np.sort(x, axis=-1)
    tm = s[..., g : n - g].mean(-1)
    w = np.clip(x, s[..., g : g + 1], s[..., n - g - 1 : n - g])
    return tm, w - w.mean(-1, keepdims=True), n - 2 * g


def iqm_core(x: np.ndarray, y: np.ndarray, *, paired: bool) -> tuple[Any, Any, Any]:
    """IQM x - IQM y, its Yuen (1974) standard error and df along the last axis.

    ``d = sum(w_c^2) / (h (h - 1))`` per sample (``w_c`` the centred winsorized values, ``h`` the
    values the 25% trim keeps); paired: ``se^2 = d_x + d_y - 2 d_xy`` with the winsorized
    covariance and ``df = h - 1``; unpaired: ``se^2 = d_x + d_y`` with Welch-type df.
    """
    tx, wx, hx = _yuen(x)
    ty, wy, hy = _yuen(y)
    dx = (wx * wx).sum(-1) / (hx * (hx - 1))
    dy = (wy * wy).sum(-1) / (hy * (hy - 1))
    if paired:
        var = dx + dy - 2 * (wx * wy).sum(-1) / (hx * (hx - 1))
        df: Any = np.full(np.shape(tx), float(hx - 1))
    else:
        var = dx + dy
        df = _ws_df(dx, hx - 1, dy, hy - 1)
    return tx - ty, np.sqrt(np.maximum(var, 0.0)), df


def _jackknife_core(fn: Callable[..., Any], data: tuple[np.ndarray, ...], paired: bool) -> tuple[Any, Any]:
    """``(statistic, jackknife se)`` of a vectorised callable on arrays ``(..., n)``."""
    est = fn(*data, axis=-1)

    def jack_var(sample: int) -> Any:
        n = data[sample].shape[-1]
        keep = np.array([[j for j in range(n) if j != i] for i in range(n)])
        parts = [d[..., keep] if (j == sample or paired) else d[..., None, :] for j, d in enumerate(data)]
        theta = fn(*parts, axis=-1)
        return (n - 1) / n * ((theta - theta.mean(-1, keepdims=True)) ** 2).sum(-1)

    if len(data) == 1 or paired:
        var = jack_var(0)
    else:
        var = jack_var(0) + jack_var(1)
    return est, np.sqrt(var)


def _studentized(
    statistic: str | Callable[..., Any], data: tuple[np.ndarray, ...], paired: bool
) -> tuple[Any, Any]:
    if statistic == "iqm-difference":
        est, se, _ = iqm_core(data[0], data[1], paired=paired)
        return est, se
    fn = STATISTICS[statistic][1] if isinstance(statistic, str) else statistic
    return _jackknife_core(fn, data, paired)


def bootstrap_t_core(
    statistic: str | Callable[..., Any],
    data: tuple[np.ndarray, ...],
    *,
    paired: bool,
    resamples: int,
    rng: np.random.Generator,
    chunk: int = 2_000_000,
) -> tuple[Any, Any, np.ndarray]:
    """Studentized bootstrap on arrays ``(..., n)``: ``(estimate, se, t*)``, ``t*`` of shape ``(..., B)``.

    ``t*_b = (theta*_b - theta) / se*_b``; a resample with ``se* = 0`` gives ``+-inf`` (``0`` when
    ``theta*_b = theta`` too). Paired samples share their resampling indices.
    """
    est, se = _studentized(statistic, data, paired)
    batch = data[0].shape[:-1]
    size = max(1, chunk // max(1, int(np.prod(batch, dtype=int)) * sum(d.shape[-1] ** 2 for d in data)))
    out = []
    for start in range(0, resamples, size):
        b = min(size, resamples - start)
        idx0 = rng.integers(0, data[0].shape[-1], size=(*batch, b, data[0].shape[-1]))
        parts = []
        for j, d in enumerate(data):
            idx = idx0 if (j == 0 or paired) else rng.integers(0, d.shape[-1], size=(*batch, b, d.shape[-1]))
            parts.append(np.take_along_axis(d[..., None, :], idx, axis=-1))
        est_b, se_b = _studentized(statistic, tuple(parts), paired)
        diff = est_b - np.asarray(est)[..., None]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = diff / se_b
        out.append(np.where(np.isnan(t), 0.0, t))
    return est, se, np.concatenate(out, axis=-1)


# ---- the chooser ----


def _skew_note(d: np.ndarray, n: int) -> str:
    """``"; not calibrated: ..."`` for strongly skewed ``d``, or skewed ``d`` at ``n < SKEWED_BELOW_N``."""
    from scipy.stats import skew

    if n < 3 or np.ptp(d) == 0:
        return ""
    g = float(skew(d, bias=False))
    if abs(g) > STRONG_SKEW:
        return f"; not calibrated: strongly skewed data (sample skewness {g:.2g})"
    ses = math.sqrt(6 * n * (n - 1) / ((n - 2) * (n + 1) * (n + 3)))
    if n >= SKEWED_BELOW_N or abs(g) <= SKEW_Z * ses:
        return ""
    return f"; not calibrated: skewed data (sample skewness {g:.2g}) at n < {SKEWED_BELOW_N}"


def _kind(samples: int, paired: bool) -> str:
    return "paired" if samples == 2 and paired else ("unpaired" if samples == 2 else "one sample")


def interval(
    x: Any,
    statistic: str | Callable[..., Any] = "mean",
    y: Any = None,
    *,
    paired: bool = True,
    level: float = 0.95,
    method: str = "auto",
    rng: Any = 0,
    resamples: int = 9999,
) -> Interval:
    """A calibrated confidence interval, its method chosen from the statistic and ``n``.

    Args:
        x: the first sample, shape ``(n,)`` (the method's replicates).
        statistic: ``"mean"``, ``"difference"`` (mean x - mean y), ``"ratio"`` (mean x / mean y),
            ``"iqm-difference"`` (IQM x - IQM y) or a vectorised callable ``f(x[, y], axis)``.
        y: the second sample, shape ``(n,)`` when paired, ``(m,)`` otherwise.
        paired: pairs ``(x_i, y_i)`` share their random numbers.
        level: confidence level in (0, 1).
        method: ``"auto"`` (the table in :mod:`quadriga.stats.calibrated`), or one of ``"t"``
            (mean, difference), ``"fieller"`` (paired ratio), ``"log-t"`` (ratio),
            ``"bootstrap-t"`` (any statistic), ``"BCa"``/``"percentile"`` (:func:`bootstrap_ci`).
        rng: seed or ``numpy.random.Generator`` (bootstrap methods only).
        resamples: bootstrap resamples (bootstrap methods only).

    Returns:
        :class:`Interval` whose ``method`` names the method and its df, e.g.
        ``"Student t (paired differences, df 9)"``, and whose :meth:`Interval.pvalue` and
        :meth:`Interval.at_level` use the same method. ``n < 2`` and constant data give the
        point with :func:`small_sample_note`. A t-based interval of data that look skewed
        (:data:`SKEW_Z`) at ``n <`` :data:`SKEWED_BELOW_N`, or strongly skewed
        (:data:`STRONG_SKEW`) at any n, says "not calibrated" in ``method``: the coverage table
        measures it below nominal there (no method fixes this at n = 3-10).
        A Fieller interval whose denominator is not bounded away from 0 is ``(-inf, inf)`` and
        says so. The explicit bootstrap-t says "not calibrated" below
        :data:`BOOTSTRAP_T_BELOW_N` (it overcovers there).

    Raises:
        ConfigError: unknown statistic or method, a method that does not fit the statistic,
            level outside (0, 1), empty or non-finite samples, a two-sample statistic without
            ``y``, paired samples of unequal length, a ratio whose denominator mean is 0 (or,
            on the log scale, a non-positive mean).

    Sources: Student 1908; Welch 1947; Fieller 1954; Yuen 1974; Efron & Tibshirani 1993,
    ch. 12; Hall 1988.
    """
    if method not in METHODS:
        raise ConfigError(f"method '{method}' is not one of {', '.join(METHODS)}.", key="method")
    if method in ("BCa", "percentile"):
        return bootstrap_ci(
            x, statistic, y, paired=paired, method=method, level=level, resamples=resamples, rng=rng
        )
    data, fn, samples = prepare(x, statistic, y, paired=paired, level=level)
    estimate = float(fn(*data, axis=-1))
    n = len(data[0])
    if n < 2 or (samples == 2 and not paired and len(data[1]) < 2):
        return Interval(estimate, math.nan, math.nan, level, small_sample_note(min(map(len, data))), n)
    if all(np.ptp(d) == 0 for d in data):
        return Interval(estimate, estimate, estimate, level, small_sample_note(n, constant=True), n, 0.0)
    name = statistic if isinstance(statistic, str) else "callable"
    chosen = _chosen_method(name, method, samples, paired)
    if chosen == "t" and name == "iqm-difference":
        return _yuen_interval(data, estimate, n, level, paired=paired)
    if chosen == "t":
        return _t_interval(data, estimate, n, level, paired=paired)
    if chosen == "fieller":
        return _fieller_interval(data, estimate, n, level)
    if chosen == "log-t":
        return _logt_interval(data, estimate, n, level, paired=paired)
    stat = statistic if isinstance(statistic, str) else fn
    return _bootstrap_t_interval(stat, name, data, estimate, n, level, samples, paired, resamples, rng)


def _chosen_method(name: str, method: str, samples: int, paired: bool) -> str:
    """The interval method for statistic ``name``: the first one that fits it for ``"auto"``, else ``method``.

    Raises:
        ConfigError: ``method`` does not fit the statistic (key ``method``, naming those that do).
    """
    allowed = {
        "mean": ("t", "bootstrap-t"),
        "difference": ("t", "bootstrap-t"),
        "ratio": ("fieller", "log-t", "bootstrap-t") if paired else ("log-t", "bootstrap-t"),
        "iqm-difference": ("t", "bootstrap-t"),
    }.get(name, ("bootstrap-t",))
    chosen = allowed[0] if method == "auto" else method
    if chosen not in allowed:
        raise ConfigError(
            f"method '{method}' does not fit statistic '{name}'"
            f"{' (unpaired)' if samples == 2 and not paired else ''}; use one of {', '.join(allowed)}.",
            key="method",
        )
    return chosen


def _bootstrap_t_interval(
    stat: Any,
    name: str,
    data: tuple[np.ndarray, ...],
    estimate: float,
    n: int,
    level: float,
    samples: int,
    paired: bool,
    resamples: int,
    rng: Any,
) -> Interval:
    """The bootstrap-t interval (Efron & Tibshirani 1993, ch. 12; Hall 1988) around ``estimate``.

    The s.e. is Yuen's winsorized one for ``iqm-difference``, else the jackknife's; below
    :data:`BOOTSTRAP_T_BELOW_N` the method text says it is not calibrated (conservative).
    """
    from quadriga.stats.intervals import _rng

    est, se, tstar = bootstrap_t_core(
        stat, data, paired=samples == 2 and paired, resamples=resamples, rng=_rng(rng)
    )
    se_how = "Yuen winsorized s.e." if name == "iqm-difference" else "jackknife s.e."
    pivot = BootstrapTPivot(float(est), float(se), tstar)
    low, high = pivot.ends(level)
    how = f"bootstrap-t ({resamples} resamples, {_kind(samples, paired)}, {se_how})"
    if n < BOOTSTRAP_T_BELOW_N:
        how += f"; not calibrated: conservative at n < {BOOTSTRAP_T_BELOW_N} (ends may be infinite)"
    return Interval(estimate, low, high, level, how, n, float(se), pivot=pivot)


def _t_interval(
    data: tuple[np.ndarray, ...], estimate: float, n: int, level: float, *, paired: bool
) -> Interval:
    if len(data) == 1 or paired:
        d = data[0] if len(data) == 1 else data[0] - data[1]
        _, se, df_t = t_core(d)
        df: Any = df_t
        what = "one sample" if len(data) == 1 else "paired differences"
        how = f"Student t ({what}, df {df:.0f}){_skew_note(d, n)}"
    else:
        _, se, df = welch_core(*data)
        worst = max((_skew_note(d, len(d)) for d in data), key=len)
        how = f"Welch t (unpaired, df {float(df):.3g}){worst}"
    pivot = TPivot(estimate, float(se), float(df))
    low, high = pivot.ends(level)
    return Interval(estimate, low, high, level, how, n, float(se), float(df), pivot=pivot)


def _yuen_interval(
    data: tuple[np.ndarray, ...], estimate: float, n: int, level: float, *, paired: bool
) -> Interval:
    _, se, df = (float(v) for v in iqm_core(data[0], data[1], paired=paired))
    what = "paired" if paired else "unpaired, Welch"
    how = f"Yuen trimmed t (IQM difference, {what} df {df:.3g}, winsorized s.e.)"
    if not se > 0:
        # the values that the trim keeps agree although the data vary: nothing bounds the effect
        se = math.inf
        how += ": unbounded, the winsorized values have no spread"
    pivot = TPivot(estimate, se, df)
    low, high = pivot.ends(level)
    return Interval(estimate, low, high, level, how, n, se, df, pivot=pivot)


def _fieller_interval(data: tuple[np.ndarray, ...], estimate: float, n: int, level: float) -> Interval:
    x, y = data
    mx, my, vxx, vyy, vxy, df = (float(v) for v in fieller_core(x, y))
    if my == 0:
        raise ConfigError("a ratio of means needs a non-zero mean of y.", key="y")
    pivot = FiellerPivot(mx, my, vxx, vyy, vxy, df)
    low, high = pivot.ends(level)
    kind = pivot.kind(level)
    how = f"Fieller (paired ratio of means, t df {df:.0f})"
    if kind != "bounded":
        how += ": unbounded, the mean of y is not distinguishable from 0 at this level" + (
            " (the confidence set is two rays)" if kind == "exclusive" else ""
        )
    how += _skew_note(x - estimate * y, n)
    se = math.sqrt(max(vxx - 2 * estimate * vxy + estimate**2 * vyy, 0.0)) / abs(my)
    return Interval(estimate, low, high, level, how, n, se, df, pivot=pivot)


def _logt_interval(
    data: tuple[np.ndarray, ...], estimate: float, n: int, level: float, *, paired: bool
) -> Interval:
    x, y = data
    if not (x.mean() > 0 and y.mean() > 0):
        raise ConfigError("a ratio on the log scale needs positive means of x and y.", key="y")
    center, se, df = (float(v) for v in logratio_core(x, y, paired=paired))
    pivot = TPivot(center, se, df, "log")
    low, high = pivot.ends(level)
    what = "paired ratio of means, df" if paired else "unpaired ratio of means, Welch df"
    how = f"t on the log scale (delta method, {what} {df:.3g})"
    return Interval(estimate, low, high, level, how, n, se, df, "log", pivot=pivot)
