"""Confidence intervals and the :class:`Interval` record they return.

:func:`bootstrap_ci`, :func:`mean_se`, :func:`batch_means_se` (MCMC output) and
:func:`loglog_slope` (a rate with its interval).

``bootstrap_ci`` runs ``scipy.stats.bootstrap`` (BCa or percentile, one sample, paired or
unpaired two samples) on the named statistics of :data:`STATISTICS` or a vectorised callable.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from quadriga.errors import ConfigError


@attrs.frozen
class Interval:
    """A point estimate with a confidence interval and how it was computed.

    Attributes:
        estimate: the statistic on the data.
        low, high: the interval ends.
        level: the confidence level, e.g. 0.95.
        method: how the interval was computed, e.g. ``"BCa bootstrap (9999 resamples, paired)"``.
        n: the number of observations (pairs when paired).
        se: the standard error (bootstrap standard deviation of the statistic), or NaN.
    """

    estimate: float
    low: float
    high: float
    level: float
    method: str
    n: int
    se: float = math.nan

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready ``{estimate, low, high, level, method, n, se}``."""
        return attrs.asdict(self)

    def __str__(self) -> str:
        """``"estimate [low, high]"`` with 4 significant digits."""
        return f"{self.estimate:.4g} [{self.low:.4g}, {self.high:.4g}]"


def small_sample_note(n: int, *, constant: bool = False) -> str:
    """How to read an interval computed from ``n`` values when ``n`` is too small for it to mean much.

    One wording for every place that prints intervals (``verify``, ``sweep``, ``compare``,
    ``report``), so that the caveat reads the same everywhere.

    Args:
        n: the number of observations (pairs when paired).
        constant: every value is the same (the bootstrap has nothing to resample).

    Returns:
        ``"no interval: n = 1"``, ``"no interval: all 3 values equal"``,
        ``"n = 2: the range of the two values"`` (a bootstrap of two values can only resample
        the pairs ``(a, a)``, ``(a, b)``, ``(b, b)``, so its interval is their range), or ``""``
        for ``n >= 3`` with some spread.
    """
    if n < 2:
        return f"no interval: n = {n}"
    if constant:
        return f"no interval: all {n} values equal"
    if n == 2:
        return "n = 2: the range of the two values"
    return ""


def _rng(rng: Any) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _vector(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float).reshape(-1)
    if arr.size == 0:
        raise ConfigError(f"{name} is empty; give at least one observation.", key=name)
    if not np.all(np.isfinite(arr)):
        raise ConfigError(f"{name} holds non-finite values ({arr[~np.isfinite(arr)][:3]}).", key=name)
    return arr


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> Any:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def _mean_ratio(x: np.ndarray, y: np.ndarray, axis: int = -1) -> Any:
    return np.mean(x, axis=axis) / np.mean(y, axis=axis)


def _iqm_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> Any:
    from scipy.stats import trim_mean

    return trim_mean(x, 0.25, axis=axis) - trim_mean(y, 0.25, axis=axis)


def _mean(x: np.ndarray, axis: int = -1) -> Any:
    return np.mean(x, axis=axis)


#: statistic name -> (number of samples, vectorised function of (x[, y], axis))
STATISTICS: dict[str, tuple[int, Callable[..., Any]]] = {
    "mean": (1, _mean),
    "difference": (2, _mean_diff),
    "ratio": (2, _mean_ratio),
    "iqm-difference": (2, _iqm_diff),
}


def bootstrap_ci(
    x: Any,
    statistic: str | Callable[..., Any] = "mean",
    y: Any = None,
    *,
    paired: bool = True,
    method: str = "BCa",
    level: float = 0.95,
    resamples: int = 9999,
    rng: Any = 0,
) -> Interval:
    """Bootstrap confidence interval of a statistic of one sample or of two samples.

    Args:
        x: the first sample, shape ``(n,)`` (the method's replicates).
        statistic: ``"mean"`` (of ``x``), ``"difference"`` (mean x - mean y), ``"ratio"``
            (mean x / mean y), ``"iqm-difference"`` (IQM x - IQM y), or a vectorised callable
            ``f(x[, y], axis)``.
        y: the second sample (the baseline), shape ``(n,)`` when paired, ``(m,)`` otherwise.
        paired: resample pairs ``(x_i, y_i)`` together (common random numbers) rather than
            each sample on its own.
        method: ``"BCa"`` or ``"percentile"`` (``"basic"`` is accepted too).
        level: confidence level in (0, 1).
        resamples: bootstrap resamples.
        rng: integer seed or ``numpy.random.Generator`` (the interval is reproducible).

    Returns:
        :class:`Interval`. When every value is the same (constant data) the interval is the
        point and ``method`` says ``"no interval: all n values equal"``
        (:func:`small_sample_note`, which also words the ``n = 2`` caveat); when BCa is
        undefined (NaN ends) the percentile interval is used and ``method`` says so.

    Raises:
        ConfigError: unknown statistic or method, level outside (0, 1), empty or non-finite
            samples, a two-sample statistic without ``y``, paired samples of unequal length.

    Source: Efron 1987 (BCa); Efron & Tibshirani 1993, ch. 13-14; ``scipy.stats.bootstrap``.
    """
    from scipy.stats import bootstrap

    if not 0 < level < 1:
        raise ConfigError(f"level must be in (0, 1), got {level}.", key="level")
    if method not in ("BCa", "percentile", "basic"):
        raise ConfigError(f"method '{method}' is not one of BCa, percentile, basic.", key="method")
    if isinstance(statistic, str):
        if statistic not in STATISTICS:
            raise ConfigError(
                f"statistic '{statistic}' is not one of {', '.join(STATISTICS)}.", key="statistic"
            )
        samples, fn = STATISTICS[statistic]
    else:
        samples, fn = (1 if y is None else 2), statistic
    xs = _vector(x, "x")
    data: tuple[np.ndarray, ...] = (xs,)
    if samples == 2:
        if y is None:
            raise ConfigError(f"statistic '{statistic}' compares two samples; give y.", key="y")
        ys = _vector(y, "y")
        if paired and len(ys) != len(xs):
            raise ConfigError(
                f"paired samples need equal lengths (x: {len(xs)}, y: {len(ys)}); pass paired=False "
                "for independent samples.",
                key="y",
            )
        data = (xs, ys)
    estimate = float(fn(*data, axis=-1))
    n = len(xs)
    kind = "paired" if samples == 2 and paired else ("unpaired" if samples == 2 else "one sample")
    if n < 2:
        return Interval(estimate, math.nan, math.nan, level, small_sample_note(n), n, math.nan)
    if all(np.ptp(d) == 0 for d in data):
        return Interval(estimate, estimate, estimate, level, small_sample_note(n, constant=True), n, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = bootstrap(
            data,
            fn,
            n_resamples=resamples,
            paired=samples == 2 and paired,
            vectorized=True,
            confidence_level=level,
            method=method,
            rng=_rng(rng),
        )
        used = method
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if not (math.isfinite(low) and math.isfinite(high)):
            res = bootstrap(
                data,
                fn,
                n_resamples=resamples,
                paired=samples == 2 and paired,
                vectorized=True,
                confidence_level=level,
                method="percentile",
                rng=_rng(rng),
            )
            used = "percentile (BCa undefined)"
            low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    how = f"{used} bootstrap ({resamples} resamples, {kind})"
    return Interval(estimate, low, high, level, how, n, float(res.standard_error))


def mean_se(x: Any) -> tuple[float, float]:
    """Mean and its standard error ``s / sqrt(n)`` (``s`` with ``n - 1``; 0 when ``n == 1``).

    Raises:
        ConfigError: empty or non-finite ``x``.
    """
    from scipy.stats import sem

    arr = _vector(x, "x")
    return float(arr.mean()), (float(sem(arr)) if len(arr) > 1 else 0.0)


def batch_means_se(chain: Any, batches: int | None = None) -> float:
    """Standard error of the mean of a correlated series by non-overlapping batch means.

    Shapes: ``chain`` ``(n,)`` draws of one scalar (one chain). ``batches`` defaults to
    ``floor(sqrt(n))``; trailing draws that do not fill a batch are dropped.

    Returns:
        ``sd(batch means) / sqrt(batches)``.

    Raises:
        ConfigError: fewer than 2 batches or fewer than 2 draws per batch.

    Source: Flegal & Jones 2010, "Batch means and spectral variance estimators in MCMC", Eq. 5.
    """
    arr = _vector(chain, "chain")
    b = math.isqrt(len(arr)) if batches is None else int(batches)
    if b < 2 or len(arr) // b < 2:
        raise ConfigError(
            f"batch means need at least 2 batches of 2 draws (n={len(arr)}, batches={b}).", key="batches"
        )
    size = len(arr) // b
    means = arr[: b * size].reshape(b, size).mean(axis=1)
    return float(means.std(ddof=1) / math.sqrt(b))


def loglog_slope(
    x: Any, y: Any, *, level: float = 0.95, resamples: int = 2000, rng: Any = 0
) -> tuple[float, float, float]:
    """Slope of ``log y`` against ``log x`` (a rate ``y ~ x^slope``) with its interval.

    Shapes: ``x`` ``(k,)`` positive settings (sample sizes, alphas). ``y`` ``(k,)`` positive
    values (then the interval is the t interval of the least-squares slope, k - 2 degrees of
    freedom), or ``(k, r)`` with ``r`` replicates per setting (then the slope is fitted to the
    per-setting mean of ``y`` and the interval is a percentile bootstrap that resamples
    replicates within each setting).

    Returns:
        ``(slope, low, high)``.

    Raises:
        ConfigError: fewer than 3 settings (2 with replicates), non-positive values, shape mismatch.

    Source: ``scipy.stats.linregress``; Efron & Tibshirani 1993, ch. 9 (bootstrapping regressions).
    """
    from scipy.stats import linregress
    from scipy.stats import t as student_t

    xs = np.asarray(x, dtype=float).reshape(-1)
    ys = np.asarray(y, dtype=float)
    if ys.shape[0] != len(xs):
        raise ConfigError(f"x has {len(xs)} settings but y has {ys.shape[0]} rows.", key="y")
    if np.any(xs <= 0) or np.any(ys <= 0) or not np.all(np.isfinite(ys)):
        raise ConfigError("a log-log slope needs positive finite x and y.", key="y")
    lx = np.log(xs)
    if ys.ndim == 1:
        if len(xs) < 3:
            raise ConfigError("a slope interval needs at least 3 settings.", key="x")
        fit = linregress(lx, np.log(ys))
        q = student_t.ppf(0.5 + level / 2, len(xs) - 2)
        return float(fit.slope), float(fit.slope - q * fit.stderr), float(fit.slope + q * fit.stderr)
    if len(xs) < 2:
        raise ConfigError("a slope needs at least 2 settings.", key="x")
    slope = float(linregress(lx, np.log(ys.mean(axis=1))).slope)
    gen = _rng(rng)
    r = ys.shape[1]
    idx = gen.integers(0, r, size=(resamples, len(xs), r))
    means = np.take_along_axis(ys[None, :, :].repeat(resamples, 0), idx, axis=2).mean(axis=2)
    ly = np.log(means)
    lxc = lx - lx.mean()
    slopes = (ly - ly.mean(axis=1, keepdims=True)) @ lxc / (lxc @ lxc)
    a = (1 - level) / 2
    return slope, float(np.quantile(slopes, a)), float(np.quantile(slopes, 1 - a))


def group_values(values: Mapping[Any, Sequence[float]]) -> dict[Any, np.ndarray]:
    """``{key: array}`` of finite float arrays (helper for claim observations)."""
    return {k: _vector(v, str(k)) for k, v in values.items()}
