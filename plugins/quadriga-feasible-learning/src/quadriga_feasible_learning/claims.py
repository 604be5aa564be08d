"""Feasible Learning's headline claims as statistical tests (``quadriga verify quadriga-feasible-learning``).

The paper (Ramirez et al., AISTATS 2025, arXiv 2501.14912, abstract and sec. 5) claims that,
against ERM, FL gives "improved tail behavior" of the per-sample loss distribution "with only
a marginal impact on average performance". Each of the two ready pipelines
(``feasible-learning-digits``, ``feasible-learning-diabetes``) trains FL and ERM with the same
MLP, Adam, epochs and mini-batches on a fresh random split per replicate (the dataset task is
repeated; replicate ``i`` of both arms shares its seed, so initialisation and batch order are
paired). Two claims per pipeline, with the thresholds fixed before any run:

- ``fl-<task>-tail``: FL - ERM < 0 (paired difference of means over replicates) for each of six
  tail statistics of the per-sample loss: max, q95 and q99 on the train split and on the test
  split. Six comparisons, Holm-adjusted; the claim passes only when all six do. The paper claims
  "improved tail behavior" without a size, so the sign is the claim. Precondition: the constraint
  binds for ERM (at most 99% of its training samples have loss <= eps); where plain training
  already satisfies every constraint no tail comparison can favour FL and the claim is
  inconclusive (precondition). On digits that is the case at the paper's eps = log(1/0.6) (ERM
  feasible fraction 1.000 in the former record), so the digits pipeline uses eps = log(1/0.99) (the
  true class gets probability at least 0.99), at which about 10% of ERM's training samples violate
  the constraint (0.889 and 0.899 feasible on two pilot replicates at root seed 1000, disjoint from
  the claims' seeds).
- ``fl-digits-accuracy``: test accuracy FL - ERM > -0.01 (non-inferiority margin: 1 point).
- ``fl-diabetes-mse``: test MSE ratio FL / ERM < 1.05 (non-inferiority margin: 5%).

Reported alongside (numbers, not verdicts): every arm's mean train and test loss, accuracy or
MSE, fraction of samples with loss <= eps, the multipliers' mean, the share of the total weight
on the 10% largest multipliers, and the Spearman correlation of FL's multipliers with ERM's
per-sample train losses (do the hard samples get the weight?), with the ``multipliers`` figure.

The two claims on one pipeline repeat the same stages and task at the same scales, so inside
``verify`` they share one run (:func:`quadriga.claims.shared_runs`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quadriga.claims import (
    Claim,
    Effect,
    Observations,
    Plan,
    Precondition,
    Scale,
    Tuning,
    replicate_values,
)

__all__ = ["ARMS", "DIABETES_MSE", "DIABETES_TAIL", "DIGITS_ACCURACY", "DIGITS_TAIL", "TAIL_METRICS"]

ARMS = ("fl", "erm")
TAIL_METRICS = ("train_max", "train_q95", "train_q99", "test_max", "test_q95", "test_q99")
_REPORTED = (
    "train_mean",
    "test_mean",
    "train_feasible_fraction",
    "test_feasible_fraction",
    "test_accuracy",
    "test_mse",
    "multiplier_mean",
    "multiplier_top10_share",
    "multiplier_spearman_baseline",
)
_TUNING = {
    "fl": Tuning(
        1,
        "dual step 1e-2 (paper default); eps = log(1/0.99) on digits (the paper's log(1/0.6) never binds "
        "there: chosen on 2 pilot replicates at root seed 1000 so that ERM violates the constraint, ERM "
        "feasible fraction 0.889 and 0.899) and 0.25 on diabetes; model/optimizer shared with ERM, not tuned",
    ),
    "erm": Tuning(1, "same MLP, Adam learning rate, epochs and batches as FL; not tuned"),
}


_SCALES = {
    "smoke": Scale(replicates=2, overrides=("stage.fl.num_epochs=3", "stage.erm.num_epochs=3")),
    "paper": Scale(replicates=20),
}


def _per_replicate(values: dict[str, float], arm: str, metric: str) -> list[float]:
    """Replicates ``0, 1, ...`` of ``arm``'s ``metric`` (empty when the task does not report it)."""
    return replicate_values(values, arm, metric) if f"{arm}[0]/{metric}" in values else []


def observe_tail(result: Any) -> Observations:
    """Per-replicate tail statistics of FL and ERM from the ``tail`` stage, one group per statistic.

    Returns:
        :class:`~quadriga.claims.Observations` with ``values = {metric: {"fl": [...], "erm": [...]}}``
        for the six :data:`TAIL_METRICS`, the means of the reported numbers per arm, a table and
        the multipliers figure of replicate 0.
    """
    values = result.results["stages"]["tail"]["values"]
    groups = {m: {arm: _per_replicate(values, arm, m) for arm in ARMS} for m in TAIL_METRICS}
    numbers: dict[str, Any] = {}
    rows = ["| statistic | FL (mean over replicates) | ERM | n |", "|---|---|---|---|"]
    for metric in (*TAIL_METRICS, *_REPORTED):
        got = {arm: _per_replicate(values, arm, metric) for arm in ARMS}
        if not any(got.values()):
            continue
        for arm, v in got.items():
            if v:
                numbers[f"{arm}/{metric}"] = float(np.mean(v))
        cells = [f"{np.mean(got[a]):.4g}" if got[a] else "" for a in ARMS]
        rows.append(f"| {metric} | {cells[0]} | {cells[1]} | {max(len(v) for v in got.values())} |")
    figures = {}
    for png in sorted(result.dir.rglob("*multipliers*.png")):
        figures["multipliers"] = str(png)
        break
    return Observations(values=groups, numbers=numbers, table="\n".join(rows), figures=figures)


_TAIL = Effect(
    quantity="per-sample loss tail statistic, FL - ERM (paired by replicate; nats or squared "
    "standardized target units)",
    statistic="difference",
    relation="less",
    value=0.0,
    why_sign="the paper (abstract, sec. 5) claims 'improved tail behavior' of the per-sample losses against "
    "ERM and states no size: the direction is the claim",
)
_TAIL_PLAN = Plan(
    effect=0.1,
    pilot_replicates=5,
    rationale="a tail statistic 0.1 lower (nats, or squared standardized units) is the smallest "
    "improvement worth reporting; the former record's paired sds are 0.02-2.5 per statistic, so the "
    "test max needs the most replicates",
)
#: the constraint binds for ERM: some of its training samples violate ``loss <= eps``
_BINDS = Precondition.number(
    "erm/train_feasible_fraction",
    "<=",
    0.99,
    "the constraint binds for ERM: at least 1% of its training samples have loss above eps",
)


def _claim(task: str, effect: Effect, **read: Any) -> Claim:
    """FL against ERM on ``feasible-learning-<task>`` with the task repeated; ``read``: observe or metric."""
    return Claim(
        pipeline=f"feasible-learning-{task}",
        arms=ARMS,
        repeat_tasks=(task,),
        effect=effect,
        scales=_SCALES,
        tuning=_TUNING,
        libraries=("torch", "numpy", "scikit-learn"),
        **read,
    )


_ALSO = ("test_mean", "train_mean")

DIGITS_TAIL = _claim("digits", _TAIL, observe=observe_tail, plan=_TAIL_PLAN, preconditions=(_BINDS,))
"""Digits (MLP 64-64, 60 epochs): FL's max, q95 and q99 per-sample cross-entropy (train, test) below ERM's."""

DIGITS_ACCURACY = _claim(
    "digits",
    Effect(
        quantity="test accuracy, FL - ERM (fraction; paired by replicate)",
        statistic="difference",
        relation="greater",
        value=0.0,
        tolerance=0.01,
    ),
    metric=("tail", "test_accuracy"),
    also=_ALSO,
    plan=Plan(
        effect=0.005,
        pilot_replicates=5,
        sd=0.004,
        rationale="the paper's 'marginal impact on average performance' read as a 1-point non-inferiority "
        "margin (fixed before the first run); detect a true gap half-way to it; sd 0.004 from the "
        "20-replicate record: about 6 replicates, 20 declared",
    ),
)
"""Digits: FL's test accuracy is no more than 1 point below ERM's (non-inferiority)."""

DIABETES_TAIL = _claim("diabetes", _TAIL, observe=observe_tail, plan=_TAIL_PLAN, preconditions=(_BINDS,))
"""Diabetes (MLP 64-64, 200 epochs, eps = 0.25): FL's squared-error tail, train and test, below ERM's."""

DIABETES_MSE = _claim(
    "diabetes",
    Effect(
        quantity="test MSE (squared standardized target units), FL / ERM (ratio of means)",
        statistic="ratio",
        relation="less",
        value=1.0,
        tolerance=0.05,
    ),
    metric=("tail", "test_mse"),
    also=_ALSO,
    plan=Plan(
        effect=0.05,
        pilot_replicates=5,
        rationale="'marginal impact on average performance' read as a 5% non-inferiority margin on the "
        "test MSE (fixed before the first run); detect a true ratio of 1.0",
    ),
)
"""Diabetes: FL's test MSE is at most 5% above ERM's (non-inferiority)."""
