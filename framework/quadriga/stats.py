"""One statistics toolkit for claims, summaries and evaluators, on well-kept libraries.

- Intervals: :func:`bootstrap_ci` (``scipy.stats.bootstrap``: BCa or percentile, one sample,
  paired or unpaired two samples), :func:`mean_se`, :func:`batch_means_se` (MCMC output),
  :func:`loglog_slope` (a rate with its interval).
- RL aggregates as in rliable (Agarwal et al. 2021, "Deep RL at the Edge of the Statistical
  Precipice"): :func:`iqm`, :func:`stratified_bootstrap_ci`, :func:`probability_of_improvement`.
  rliable 1.2.0 itself cannot be imported with the pinned pandas 3 (its ``library`` module
  imports ``arch`` < 8, whose ``deprecate_kwarg`` call fails on pandas 3), so these three
  are computed on scipy (``trim_mean``, ``mannwhitneyu``) with rliable's definitions.
- MCMC diagnostics through arviz: :func:`ess` (bulk/tail), :func:`rhat`, :func:`mcse`,
  with a guard for chains that never move (arviz reports ESS = number of draws there).
- Multiple comparisons: :func:`holm`. Power: :func:`min_detectable_effect`,
  :func:`replicates_needed`.

Every function takes numbers (numpy arrays or sequences), never torch tensors, and is
deterministic for a given ``rng`` (an integer seed or a ``numpy.random.Generator``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from quadriga.errors import ConfigError

__all__ = [
    "STATISTICS",
    "Interval",
    "batch_means_se",
    "bootstrap_ci",
    "ess",
    "group_values",
    "holm",
    "iqm",
    "loglog_slope",
    "mcse",
    "mean_se",
    "min_detectable_effect",
    "probability_of_improvement",
    "replicates_needed",
    "rhat",
    "stratified_bootstrap_ci",
    "stuck_chains",
]


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


def _rng(rng: Any) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _vector(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float).reshape(-1)
    if arr.size == 0:
        raise ConfigError(f"{name} is empty; give at least one observation.", key=name)
    if not np.all(np.isfinite(arr)):
        raise ConfigError(f"{name} holds non-finite values ({arr[~np.isfinite(arr)][:3]}).", key=name)
    return arr


def iqm(x: Any, axis: int | None = None) -> Any:
    """Interquartile mean: the mean of the middle 50% of the values (25% trimmed each side).

    Shapes: ``x`` any shape; ``axis=None`` pools every value (rliable's ``aggregate_iqm``
    over runs x tasks). Source: Agarwal et al. 2021, Sec. 4; ``scipy.stats.trim_mean(x, 0.25)``.
    """
    from scipy.stats import trim_mean

    arr = np.asarray(x, dtype=float)
    return trim_mean(arr.reshape(-1) if axis is None else arr, 0.25, axis=0 if axis is None else axis)


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
        :class:`Interval`. When every resample gives the same value (constant data) the
        interval is the point; when BCa is undefined (NaN ends) the percentile interval is
        used and ``method`` says so.

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
        return Interval(estimate, math.nan, math.nan, level, "none (n=1: no interval)", n, math.nan)
    if all(np.ptp(d) == 0 for d in data):
        return Interval(estimate, estimate, estimate, level, f"none (constant data, n={n})", n, 0.0)
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


def stratified_bootstrap_ci(
    scores: Any,
    aggregate: Callable[[np.ndarray], float] = iqm,
    *,
    level: float = 0.95,
    resamples: int = 2000,
    rng: Any = 0,
) -> Interval:
    """Percentile interval of an aggregate over runs x tasks, resampling runs within each task.

    Shapes: ``scores`` ``(runs, tasks)`` (one column per task or environment; ``(runs,)`` is one
    task). ``aggregate`` maps such an array to a number (default: :func:`iqm` of all values).

    Source: Agarwal et al. 2021, Sec. 4 (stratified bootstrap, rliable ``StratifiedBootstrap``).
    """
    arr = np.asarray(scores, dtype=float)
    arr = arr[:, None] if arr.ndim == 1 else arr
    runs, tasks = arr.shape
    gen = _rng(rng)
    est = float(aggregate(arr))
    stats = np.empty(resamples)
    cols = np.arange(tasks)[None, :]
    for b in range(resamples):
        stats[b] = aggregate(arr[gen.integers(0, runs, size=(runs, tasks)), cols])
    a = (1 - level) / 2
    return Interval(
        est,
        float(np.quantile(stats, a)),
        float(np.quantile(stats, 1 - a)),
        level,
        f"stratified percentile bootstrap ({resamples} resamples over runs within {tasks} task(s))",
        runs,
        float(stats.std(ddof=1)),
    )


def probability_of_improvement(x: Any, y: Any) -> float:
    """P(X > Y) + P(X = Y) / 2 for scores of two algorithms, averaged over tasks.

    Shapes: ``x`` ``(n, tasks)`` and ``y`` ``(m, tasks)`` (or 1-D for one task). Per task this is
    the Mann-Whitney U statistic of x against y divided by ``n m``.

    Source: Agarwal et al. 2021, Sec. 4 (rliable ``probability_of_improvement``).
    """
    from scipy.stats import mannwhitneyu

    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    xa = xa[:, None] if xa.ndim == 1 else xa
    ya = ya[:, None] if ya.ndim == 1 else ya
    if xa.shape[1] != ya.shape[1]:
        raise ConfigError(f"x has {xa.shape[1]} tasks, y has {ya.shape[1]}.", key="y")
    per_task = [mannwhitneyu(xa[:, j], ya[:, j]).statistic / (len(xa) * len(ya)) for j in range(xa.shape[1])]
    return float(np.mean(per_task))


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


# ------------------------------------------------------------------------- arviz diagnostics
def _draws(draws: Any) -> np.ndarray:
    arr = np.asarray(draws, dtype=float)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim not in (2, 3) or arr.shape[1] < 4:
        raise ConfigError(
            f"draws must have shape (chains, draws[, dim]) with at least 4 draws, got {arr.shape}.",
            key="draws",
        )
    if not np.all(np.isfinite(arr)):
        raise ConfigError("draws hold non-finite values.", key="draws")
    return arr if arr.ndim == 3 else arr[:, :, None]


def _per_dim(arr: np.ndarray, fn: Callable[[np.ndarray], float]) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.array([float(fn(arr[:, :, j])) for j in range(arr.shape[2])])


def stuck_chains(draws: Any) -> np.ndarray:
    """Boolean ``(chains,)``: chains whose draws never change (in any dimension).

    Shapes: ``draws`` ``(chains, draws[, dim])``.
    """
    arr = _draws(draws)
    return np.all(np.ptp(arr, axis=1) == 0, axis=1)


def ess(draws: Any, method: str = "bulk") -> dict[str, Any]:
    """Effective sample size per dimension (arviz ``ess``), guarded against chains that never move.

    Shapes: ``draws`` ``(chains, draws[, dim])``.

    Returns:
        ``{"ess": (dim,) array, "stuck_chains": int, "note": str}``. A chain whose draws never
        change contributes one effective draw (its initial value) instead of arviz's
        ``draws`` (arviz sees zero variance and returns the number of draws); ESS above the
        number of draws (antithetic chains) is kept and noted.

    Raises:
        ConfigError: unknown method, bad shape, non-finite draws.

    Source: Vehtari et al. 2021, "Rank-normalization, folding, and localization", Sec. 3-4.
    """
    import arviz

    if method not in ("bulk", "tail", "mean"):
        raise ConfigError(f"ESS method '{method}' is not bulk, tail or mean.", key="method")
    arr = _draws(draws)
    stuck = stuck_chains(arr)
    chains, n = arr.shape[:2]
    notes = []
    if stuck.all():
        values = np.full(arr.shape[2], float(chains))
        notes.append(f"all {chains} chains never moved: ESS is one draw per chain")
    else:
        moving = arr[~stuck]
        values = _per_dim(moving, lambda a: arviz.ess(a, method=method)) + float(stuck.sum())
        if stuck.any():
            notes.append(f"{int(stuck.sum())} of {chains} chains never moved and count one draw each")
    if np.any(values > chains * n):
        notes.append("ESS exceeds the number of draws (antithetic, negatively correlated draws)")
    return {"ess": values, "stuck_chains": int(stuck.sum()), "note": "; ".join(notes)}


def rhat(draws: Any, threshold: float = 1.01) -> dict[str, Any]:
    """Rank-normalised split R-hat per dimension (arviz ``rhat``), with a warning above ``threshold``.

    Shapes: ``draws`` ``(chains, draws[, dim])``.

    Returns:
        ``{"rhat": (dim,) array, "note": str}``; NaN R-hat (all chains constant) is reported as NaN
        with a note.

    Source: Vehtari et al. 2021, Sec. 4.
    """
    import arviz

    arr = _draws(draws)
    values = _per_dim(arr, arviz.rhat)
    note = ""
    if np.any(~np.isfinite(values)):
        note = "R-hat undefined (chains that never move)"
    elif np.any(values > threshold):
        note = f"R-hat {values.max():.3f} > {threshold}: the chains have not mixed"
        warnings.warn(note, stacklevel=2)
    return {"rhat": values, "note": note}


def mcse(draws: Any, method: str = "mean") -> np.ndarray:
    """Monte Carlo standard error of the mean (or ``"sd"``) per dimension (arviz ``mcse``).

    Shapes: ``draws`` ``(chains, draws[, dim])`` -> ``(dim,)``.

    Source: Vehtari et al. 2021, Sec. 4.4.
    """
    import arviz

    if method not in ("mean", "sd"):
        raise ConfigError(f"MCSE method '{method}' is not mean or sd.", key="method")
    return _per_dim(_draws(draws), lambda a: arviz.mcse(a, method=method))


def group_values(values: Mapping[Any, Sequence[float]]) -> dict[Any, np.ndarray]:
    """``{key: array}`` of finite float arrays (helper for claim observations)."""
    return {k: _vector(v, str(k)) for k, v in values.items()}
