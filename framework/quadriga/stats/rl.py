"""RL aggregates as in rliable (Agarwal et al. 2021, "Deep RL at the Edge of the Statistical Precipice").

:func:`iqm`, :func:`stratified_bootstrap_ci` and :func:`probability_of_improvement`, computed on
scipy (``trim_mean``, ``mannwhitneyu``) with rliable's definitions (rliable itself cannot be
imported with the pinned pandas, see :mod:`quadriga.stats`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from quadriga.errors import ConfigError
from quadriga.stats.intervals import Interval, _rng


def iqm(x: Any, axis: int | None = None) -> Any:
    """Interquartile mean: the mean of the middle 50% of the values (25% trimmed each side).

    Shapes: ``x`` any shape; ``axis=None`` pools every value (rliable's ``aggregate_iqm``
    over runs x tasks). Source: Agarwal et al. 2021, Sec. 4; ``scipy.stats.trim_mean(x, 0.25)``.
    """
    from scipy.stats import trim_mean

    arr = np.asarray(x, dtype=float)
    return trim_mean(arr.reshape(-1) if axis is None else arr, 0.25, axis=0 if axis is None else axis)


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
