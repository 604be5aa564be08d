"""The paper's claims as :class:`quadriga.claims.Claim` objects on the ``pivotal-legendre`` pipeline.

Each claim reads per-replicate observations from the ``excess-risk`` stage through
:mod:`quadriga_pivotal_leverage.observe` (replicate ``i`` of both arms shares its seed, so the
observations are paired):

- ``EXCESS_RISK``: mean over d in {10, 20, 40} of ``log(risk ratio)`` at ``k = 2d``; the statistic is
  the paired difference pivotal - i.i.d. (the log of the geometric-mean risk-ratio ratio), claimed
  below 0.
- ``FEWER_SAMPLES``: mean over d of ``k*/d``, ``k*`` the smallest budget on the grid
  1.5d ... 12d with ``risk ratio <= 1.25``; the ratio of means pivotal / i.i.d. is claimed below 0.7
  (at least 30% fewer labels; the paper reports up to 50%).
- ``LINEAR_GROWTH``: per replicate, the slope of ``log k*`` on ``log d``; the paired difference
  pivotal - i.i.d. is claimed below 0 (pivotal grows more slowly: O(d) against O(d log d)).
"""

from __future__ import annotations

from quadriga.claims import Claim, Effect, Scale, Tuning
from quadriga_pivotal_leverage.observe import (
    log_risk_at,
    observer,
    samples_to_target,
    samples_to_target_slope,
)

__all__ = ["EXCESS_RISK", "FEWER_SAMPLES", "LINEAR_GROWTH"]

_ARMS = ("pivotal-leverage", "leverage-iid")
_SCALES = {
    "smoke": Scale(replicates=3, overrides=("task.legendre.num_points=2000",)),
    "paper": Scale(replicates=200, overrides=()),
}
_TUNING = {
    "pivotal-leverage": Tuning(settings_tried=1, rule="paper default (k-d tree, leverage marginals)"),
    "leverage-iid": Tuning(settings_tried=1, rule="paper default (same marginals as pivotal)"),
}

EXCESS_RISK = Claim(
    pipeline="pivotal-legendre",
    arms=_ARMS,
    observe=observer(log_risk_at, "excess-risk", _ARMS, multiple=2.0),
    effect=Effect(
        quantity="mean over d = 10, 20, 40 of log risk ratio at k = 2d, pivotal - i.i.d. leverage "
        "(log of the geometric-mean ratio)",
        statistic="difference",
        relation="less",
        value=0.0,
        tolerance=0.0,
    ),
    scales=_SCALES,
    tuning=_TUNING,
)

FEWER_SAMPLES = Claim(
    pipeline="pivotal-legendre",
    arms=_ARMS,
    observe=observer(samples_to_target, "excess-risk", _ARMS, target=1.25),
    effect=Effect(
        quantity="labels per feature k*/d to reach risk ratio 1.25 (mean over d = 10, 20, 40), "
        "pivotal / i.i.d. leverage (ratio of means)",
        statistic="ratio",
        relation="less",
        value=0.7,
        tolerance=0.0,
    ),
    scales=_SCALES,
    tuning=_TUNING,
)

LINEAR_GROWTH = Claim(
    pipeline="pivotal-legendre",
    arms=_ARMS,
    observe=observer(samples_to_target_slope, "excess-risk", _ARMS, target=1.25),
    effect=Effect(
        quantity="log-log slope of k* (risk ratio 1.25) over d = 10, 20, 40, pivotal - i.i.d. leverage",
        statistic="difference",
        relation="less",
        value=0.0,
        tolerance=0.0,
    ),
    scales=_SCALES,
    tuning=_TUNING,
)
