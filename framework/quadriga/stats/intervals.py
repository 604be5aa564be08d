"""Confidence intervals and the :class:`Interval` record they return.

:func:`bootstrap_ci`, :func:`mean_se`, :func:`batch_means_se` (MCMC output) and
:func:`loglog_slope` (a rate with its interval).

``bootstrap_ci`` runs ``scipy.stats.bootstrap`` (BCa or percentile, one sample, paired or
unpaired two samples) on the named statistics of :data:`STATISTICS` or a vectorised callable.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from quadriga.errors import ConfigError
from quadriga.stats.pivots import InvertedPivot


@attrs.frozen
class Interval:
    """A point estimate with a confidence interval and how it was computed.

    Attributes:
        estimate: the statistic on the data.
        low, high: the interval ends (infinite when the data cannot bound the effect, e.g. a
            Fieller ratio whose denominator is not distinguishable from 0).
        level: the confidence level, e.g. 0.95.
        method: how the interval was computed, e.g. ``"Student t (paired differences, df 9)"``.
        n: the number of observations (pairs when paired).
        se: the standard error on the interval's scale (of ``log(estimate)`` when
            ``scale == "log"``; the bootstrap standard deviation for a bootstrap), or NaN.
        df: degrees of freedom of the pivot (``inf``: normal).
        scale: ``"identity"`` or ``"log"`` (the interval is symmetric in ``log``).

    A private pivot (not compared, not printed, not in :meth:`as_dict`) remembers how the
    interval was made, so that :meth:`pvalue` and :meth:`at_level` use the same method. An
    ``Interval`` built by hand or read back from JSON has none: then both fall back to the
    t pivot ``(estimate - b) / se ~ t_df`` on ``scale`` (``se`` taken as the half-width over
    ``t_q`` when it is NaN), which is exact for intervals that were t intervals and an
    approximation otherwise.
    """

    estimate: float
    low: float
    high: float
    level: float
    method: str
    n: int
    se: float = math.nan
    df: float = math.inf
    scale: str = attrs.field(default="identity", validator=attrs.validators.in_(("identity", "log")))
    _pivot: Any = attrs.field(default=None, eq=False, repr=False, kw_only=True)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready ``{estimate, low, high, level, method, n, se, df, scale}`` (no pivot)."""
        return attrs.asdict(self, filter=lambda a, _: a.name != "_pivot")

    def __str__(self) -> str:
        """``"estimate [low, high]"`` with 4 significant digits."""
        return f"{self.estimate:.4g} [{self.low:.4g}, {self.high:.4g}]"

    def __iter__(self) -> Iterator[float]:
        """``(estimate, low, high)``, so ``slope, low, high = loglog_slope(...)`` reads as before."""
        return iter((self.estimate, self.low, self.high))

    def _the_pivot(self) -> Any:
        from quadriga.stats.pivots import TPivot, t_quantile

        if self._pivot is not None:
            return self._pivot
        log = self.scale == "log"
        center = math.log(self.estimate) if log and self.estimate > 0 else self.estimate
        se = self.se
        if not math.isfinite(se):
            lo, hi = (math.log(self.low), math.log(self.high)) if log else (self.low, self.high)
            se = (hi - lo) / (2 * t_quantile(self.level, self.df))
        return TPivot(center, se, self.df, self.scale)

    def pvalue(self, boundary: float, alternative: str) -> float:
        """One-sided p-value by the interval's own method.

        Args:
            boundary: the value ``b`` of the null hypothesis.
            alternative: ``"greater"`` (H0: effect <= b) or ``"less"`` (H0: effect >= b).

        Returns:
            p in [0, 1] with, for ``alpha = (1 - level) / 2``, ``low > b <=> p("greater") < alpha``
            and ``high < b <=> p("less") < alpha`` (equalities aside). Without a pivot (an
            interval built by hand or read from JSON) a t pivot on ``se``, ``df`` and ``scale``;
            1.0 when there is no interval (n < 2: nothing can be rejected).

        Raises:
            ConfigError: ``alternative`` not ``"greater"`` or ``"less"``.
        """
        if math.isnan(self.low) and self._pivot is None:
            if alternative not in ("greater", "less"):
                raise ConfigError(
                    f"alternative '{alternative}' is not 'greater' or 'less'.", key="alternative"
                )
            return 1.0
        return float(self._the_pivot().pvalue(float(boundary), alternative))

    def at_level(self, level: float) -> Interval:
        """The same method at another ``level`` in (0, 1] (e.g. a Holm-adjusted 0.9999).

        ``level == 1`` gives ``(-inf, inf)`` (no finite interval has coverage 1), unless the
        interval is a point (constant data) or absent (n < 2), which stay as they are.

        Raises:
            ConfigError: ``level`` outside (0, 1].
        """
        if not 0 < level <= 1:
            raise ConfigError(f"level must be in (0, 1], got {level}.", key="level")
        if math.isnan(self.low) or (self.low == self.high and self._pivot is None):
            return attrs.evolve(self, level=level)
        if level == 1:
            return attrs.evolve(self, low=-math.inf, high=math.inf, level=1.0)
        pivot = self._the_pivot()
        low, high = pivot.ends(level)
        return attrs.evolve(self, low=float(low), high=float(high), level=level, pivot=pivot)


def small_sample_note(n: int, *, constant: bool = False) -> str:
    """How to read an interval computed from ``n`` values when ``n`` is too small for it to mean much.

    One wording for every place that prints intervals (``verify``, ``sweep``, ``compare``,
    ``report``), so that the caveat reads the same everywhere.

    Args:
        n: the number of observations (pairs when paired).
        constant: every value is the same (the bootstrap has nothing to resample).

    Returns:
        ``"no interval: n = 1"``, ``"no interval: all 3 values equal"``,
        ``"n = 2: one degree of freedom, the interval is very wide"`` (a Student t interval of two
        values spans about 12.7 standard errors each side at 95 %; it says how little two values
        tell, not where the effect lies), or ``""`` for ``n >= 3`` with some spread.
    """
    if n < 2:
        return f"no interval: n = {n}"
    if constant:
        return f"no interval: all {n} values equal"
    if n == 2:
        return "n = 2: one degree of freedom, the interval is very wide"
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
    if method not in ("BCa", "percentile", "basic"):
        raise ConfigError(f"method '{method}' is not one of BCa, percentile, basic.", key="method")
    data, fn, samples = prepare(x, statistic, y, paired=paired, level=level)
    estimate = float(fn(*data, axis=-1))
    n = len(data[0])
    kind = "paired" if samples == 2 and paired else ("unpaired" if samples == 2 else "one sample")
    if n < 2:
        return Interval(estimate, math.nan, math.nan, level, small_sample_note(n), n, math.nan)
    if all(np.ptp(d) == 0 for d in data):
        return Interval(estimate, estimate, estimate, level, small_sample_note(n, constant=True), n, 0.0)
    run = functools.partial(_scipy_bootstrap, data, fn, paired=samples == 2 and paired)
    res = run(method, level, n_resamples=resamples, rng=_rng(rng))
    used = method
    if not all(math.isfinite(v) for v in (res.confidence_interval.low, res.confidence_interval.high)):
        used = "percentile"
    family = functools.partial(_ends, run, used, res)
    low, high = family(level)
    name = used if used == method else "percentile (BCa undefined)"
    how = f"{name} bootstrap ({resamples} resamples, {kind})"
    return Interval(
        estimate, low, high, level, how, n, float(res.standard_error), pivot=InvertedPivot(family)
    )


def _scipy_bootstrap(
    data: tuple[np.ndarray, ...],
    fn: Callable[..., Any],
    method: str,
    level: float,
    *,
    paired: bool,
    **kw: Any,
) -> Any:
    """One ``scipy.stats.bootstrap`` call, warnings silenced (``kw``: resamples, rng or a previous result)."""
    from scipy.stats import bootstrap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bootstrap(
            data, fn, paired=paired, vectorized=True, confidence_level=level, method=method, **kw
        )


def _ends(run: Callable[..., Any], method: str, res: Any, level: float) -> tuple[float, float]:
    """``(low, high)`` at ``level`` from the bootstrap distribution already drawn in ``res``."""
    again = run(method, level, n_resamples=0, bootstrap_result=res)
    return float(again.confidence_interval.low), float(again.confidence_interval.high)


def prepare(
    x: Any, statistic: str | Callable[..., Any], y: Any, *, paired: bool, level: float
) -> tuple[tuple[np.ndarray, ...], Callable[..., Any], int]:
    """Check the arguments of an interval: ``(samples, statistic function, number of samples)``.

    Raises:
        ConfigError: unknown statistic, level outside (0, 1), empty or non-finite samples, a
            two-sample statistic without ``y``, paired samples of unequal length.
    """
    if not 0 < level < 1:
        raise ConfigError(f"level must be in (0, 1), got {level}.", key="level")
    if isinstance(statistic, str):
        if statistic not in STATISTICS:
            raise ConfigError(
                f"statistic '{statistic}' is not one of {', '.join(STATISTICS)}.", key="statistic"
            )
        samples, fn = STATISTICS[statistic]
    else:
        samples, fn = (1 if y is None else 2), statistic
    xs = _vector(x, "x")
    if samples == 1:
        return (xs,), fn, 1
    if y is None:
        raise ConfigError(f"statistic '{statistic}' compares two samples; give y.", key="y")
    ys = _vector(y, "y")
    if paired and len(ys) != len(xs):
        raise ConfigError(
            f"paired samples need equal lengths (x: {len(xs)}, y: {len(ys)}); pass paired=False "
            "for independent samples.",
            key="y",
        )
    return (xs, ys), fn, 2


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


def group_values(values: Mapping[Any, Sequence[float]]) -> dict[Any, np.ndarray]:
    """``{key: array}`` of finite float arrays (helper for claim observations)."""
    return {k: _vector(v, str(k)) for k, v in values.items()}
