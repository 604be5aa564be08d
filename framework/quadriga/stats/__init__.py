"""One statistics toolkit for claims, summaries and evaluators, on well-kept libraries.

- Intervals: :func:`interval` chooses a calibrated method from the statistic and ``n`` and names
  it in :attr:`Interval.method`: Student t for means and paired differences (Student 1908),
  Welch t unpaired (Welch 1947), Fieller for paired ratios of means (Fieller 1954), t on the log
  scale for unpaired ratios, Yuen's trimmed t for IQM differences (Yuen 1974), a bootstrap-t
  for other statistics (Efron & Tibshirani 1993, ch. 12; Hall 1988). :meth:`Interval.pvalue`
  and :meth:`Interval.at_level` use the interval's own method, so that ``low > b`` exactly when
  ``pvalue(b, "greater") < (1 - level) / 2``. :func:`bootstrap_ci` is the explicit bootstrap
  (``scipy.stats.bootstrap``: BCa or percentile). :func:`mean_se`, :func:`batch_means_se` (MCMC
  output), :func:`loglog_slope` (a rate with its t interval), :func:`small_sample_note` (how to
  read an interval of 1, 2 or equal values).

  Coverage of nominal 95% intervals (:mod:`quadriga.stats.coverage`,
  ``benchmarks/coverage_table.py``; docs/concepts/intervals.md has every statistic), chosen
  method and, in brackets, the interval used before (BCa bootstrap; for log-log slopes with
  replicates, the percentile bootstrap over replicates), at n = 3 / 5 / 10 / 20 / 50; data:
  normal, lognormal sigma 0.5, t3, lognormal sigma 1 (Monte-Carlo s.e. 0.0034 new, 0.0069 old):

  ```text
  statistic             data         n = 3 / 5 / 10 / 20 / 50: new (old)
  ----------------------------------------------------------------------------------------------------
  mean                  normal       0.94 (0.72) / 0.95 (0.83) / 0.95 (0.91) / 0.95 (0.91) / 0.95 (0.93)
  mean                  lognormal    0.92 (0.72) / 0.93 (0.80) / 0.92 (0.88) / 0.93 (0.90) / 0.94 (0.92)
  mean                  t3           0.96 (0.69) / 0.96 (0.81) / 0.96 (0.87) / 0.96 (0.89) / 0.95 (0.93)
  mean                  lognormal-1  0.84 (0.65) / 0.83 (0.73) / 0.83 (0.81) / 0.86 (0.86) / 0.90 (0.90)
  paired difference     normal       0.95 (0.73) / 0.96 (0.83) / 0.95 (0.90) / 0.95 (0.92) / 0.95 (0.93)
  paired difference     lognormal    0.93 (0.70) / 0.93 (0.80) / 0.92 (0.89) / 0.93 (0.91) / 0.94 (0.91)
  paired difference     t3           0.96 (0.70) / 0.96 (0.82) / 0.96 (0.86) / 0.96 (0.89) / 0.96 (0.92)
  paired difference     lognormal-1  0.85 (0.66) / 0.83 (0.72) / 0.84 (0.82) / 0.87 (0.88) / 0.90 (0.89)
  unpaired difference   normal       0.95 (0.79) / 0.95 (0.86) / 0.96 (0.91) / 0.95 (0.93) / 0.95 (0.94)
  unpaired difference   lognormal    0.95 (0.77) / 0.94 (0.84) / 0.95 (0.89) / 0.95 (0.90) / 0.95 (0.92)
  unpaired difference   t3           0.97 (0.77) / 0.96 (0.84) / 0.96 (0.87) / 0.95 (0.91) / 0.95 (0.93)
  unpaired difference   lognormal-1  0.94 (0.72) / 0.92 (0.78) / 0.92 (0.82) / 0.93 (0.84) / 0.94 (0.90)
  paired ratio          normal       0.95 (0.69) / 0.95 (0.84) / 0.95 (0.91) / 0.95 (0.92) / 0.95 (0.94)
  paired ratio          lognormal    0.96 (0.69) / 0.96 (0.82) / 0.95 (0.88) / 0.95 (0.91) / 0.95 (0.91)
  paired ratio          t3           0.97 (0.72) / 0.96 (0.82) / 0.95 (0.87) / 0.95 (0.91) / 0.95 (0.93)
  paired ratio          lognormal-1  0.97 (0.67) / 0.97 (0.80) / 0.96 (0.84) / 0.96 (0.87) / 0.95 (0.90)
  IQM difference        normal       0.94 (0.69) / 0.97 (0.85) / 0.96 (0.92) / 0.96 (0.92) / 0.95 (0.94)
  IQM difference        lognormal    0.96 (0.68) / 0.98 (0.83) / 0.97 (0.90) / 0.96 (0.92) / 0.96 (0.93)
  IQM difference        t3           0.96 (0.72) / 0.98 (0.86) / 0.97 (0.92) / 0.96 (0.95) / 0.95 (0.95)
  IQM difference        lognormal-1  0.98 (0.66) / 0.98 (0.86) / 0.98 (0.92) / 0.96 (0.92) / 0.96 (0.93)
  log-log slope         normal       0.96 (0.82) / 0.95 (0.89) / 0.95 (0.91) / 0.95 (0.94) / 0.95 (0.94)
  log-log slope         lognormal    0.96 (0.81) / 0.96 (0.89) / 0.95 (0.91) / 0.95 (0.93) / 0.95 (0.93)
  log-log slope         t3           0.97 (0.81) / 0.96 (0.89) / 0.96 (0.92) / 0.95 (0.93) / 0.95 (0.92)
  log-log slope         lognormal-1  0.97 (0.81) / 0.96 (0.89) / 0.95 (0.90) / 0.95 (0.92) / 0.95 (0.92)
  ```

  Not calibrated: t intervals of skewed data at n < 20 (0.92 at n = 5-10 for lognormal
  sigma 0.5) and of strongly skewed data at any n (0.83-0.90 for lognormal sigma 1); the
  method string says so when the sample shows it. The bootstrap-t overcovers at n < 10;
  Yuen's trimmed t is conservative at n = 5 (0.97-0.98).
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

Modules: :mod:`quadriga.stats.intervals` (intervals), :mod:`quadriga.stats.rl` (RL aggregates),
:mod:`quadriga.stats.mcmc` (arviz diagnostics), :mod:`quadriga.stats.power` (multiple
comparisons and power); every name is re-exported here.
"""

from __future__ import annotations

from quadriga.stats.calibrated import interval
from quadriga.stats.intervals import (
    STATISTICS,
    Interval,
    batch_means_se,
    bootstrap_ci,
    group_values,
    mean_se,
    small_sample_note,
)
from quadriga.stats.mcmc import ess, mcse, rhat, stuck_chains
from quadriga.stats.power import (
    holm,
    min_detectable_effect,
    replicates_for_power,
    replicates_needed,
    t_power,
)
from quadriga.stats.rl import iqm, probability_of_improvement, stratified_bootstrap_ci
from quadriga.stats.slopes import loglog_slope

__all__ = [
    "STATISTICS",
    "Interval",
    "batch_means_se",
    "bootstrap_ci",
    "ess",
    "group_values",
    "holm",
    "interval",
    "iqm",
    "loglog_slope",
    "mcse",
    "mean_se",
    "min_detectable_effect",
    "probability_of_improvement",
    "replicates_for_power",
    "replicates_needed",
    "rhat",
    "small_sample_note",
    "stratified_bootstrap_ci",
    "stuck_chains",
    "t_power",
]
