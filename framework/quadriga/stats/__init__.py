"""One statistics toolkit for claims, summaries and evaluators, on well-kept libraries.

- Intervals: :func:`bootstrap_ci` (``scipy.stats.bootstrap``: BCa or percentile, one sample,
  paired or unpaired two samples), :func:`mean_se`, :func:`batch_means_se` (MCMC output),
  :func:`loglog_slope` (a rate with its interval), :func:`small_sample_note` (how to read an
  interval of 1, 2 or equal values).
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

from quadriga.stats.calibrated import interval, loglog_slope
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
from quadriga.stats.power import holm, min_detectable_effect, replicates_needed
from quadriga.stats.rl import iqm, probability_of_improvement, stratified_bootstrap_ci

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
    "replicates_needed",
    "rhat",
    "small_sample_note",
    "stratified_bootstrap_ci",
    "stuck_chains",
]
