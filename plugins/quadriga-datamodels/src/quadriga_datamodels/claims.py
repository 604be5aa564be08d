"""Datamodels' headline claims as statistical tests (``quadriga verify quadriga-datamodels``).

All three claims run the registered pipeline ``datamodels-breast-cancer`` once (inside ``verify``
the three share that run) and read per-target numbers: the replicates are the target examples,
the rows of a stage's ``per_target`` table (``Rows``; ``Scale.replicates`` sets ``num_targets``),
paired across arms by target because every arm is scored on the same held-out subsets and removal
sets.

- ``datamodels-lds``: the mean LDS of datamodels over targets is above 0.8 with a 0.05 margin
  (the paper's "linear datamodels predict outputs on held-out subsets with high correlation",
  sec. 3; 0.8 is the value the project's notes expect for logistic regression at m = 2000).
- ``datamodels-vs-influence``: datamodels' LDS minus tuned exact-Hessian influence functions' LDS
  exceeds 0.05 (paired by target).
- ``datamodels-removal``: removing a target's 10 highest-weighted training points drops its margin
  by more than removing 10 random points, by at least 0.5 margin units (brittleness, sec. 4.1).

Precondition (every claim): the held-out subsets move the margins (the ground truth varies across
subsets for at least 90 % of the targets; otherwise an LDS is undefined or meaningless) and, for
the LDS claims, the datamodels regression saw at least 10 models per 100 training points.

Source: Ilyas, Park, Engstrom, Leclerc, Madry 2022, "Datamodels: predicting predictions from
training data", arXiv 2202.00622, sec. 3 (LDS), sec. 4.1 (brittleness).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from quadriga.claims import Claim, Effect, Observations, Plan, Precondition, Rows, Scale, Tuning, run_pipeline

__all__ = [
    "ARMS",
    "lds_claim",
    "observe_numbers",
    "per_target",
    "removal_claim",
    "run_observations",
    "vs_influence_claim",
]

PIPELINE = "datamodels-breast-cancer"
ARMS = ("datamodels", "influence", "tracin")
_LIBRARIES = ("torch", "numpy", "scipy", "scikit-learn")


def per_target(result: Any, stage: str, subject: str, column: str) -> list[float]:
    """``column`` of ``subject``'s rows in ``tables["per_target"]`` of ``stage``, ordered by target."""
    rows = [r for r in result.artifacts[stage].tables["per_target"] if r["subject"] == subject]
    return [float(r[column]) for r in sorted(rows, key=lambda r: r["target"])]


def run_observations(scale: Scale, out_dir: Path, *, removal_k: int = 10) -> Observations:
    """Run ``datamodels-breast-cancer`` with ``num_targets = scale.replicates``; per-target observations.

    The same run the claims make (their ``Rows`` read ``values["lds"]`` and ``values["removal"]``
    from the same tables), for reading every arm at once.

    Returns ``Observations`` with ``values``: ``{"lds": {arm: [LDS per target]}, "removal":
    {"datamodels", "influence", "random": [margin drop per target]}}`` (not a claim's values
    directly: each claim picks its group) and ``numbers``: each arm's mean LDS with its interval,
    cost in seconds and training runs, the removal drops and flip fractions, and the share of
    targets whose held-out margins vary.
    """
    overrides = [f"task.bed.num_targets={scale.replicates}", *scale.overrides]
    result = run_pipeline(PIPELINE, overrides=overrides, seed=scale.seed, out=Path(out_dir) / "run")
    return _observations(result, removal_k=removal_k)


def observe_numbers(result: Any) -> Observations:
    """The claims' report numbers (no values: ``Rows`` reads those) from a run of the pipeline.

    Returns ``Observations`` with ``numbers`` as :func:`run_observations` gives them (removal at
    k = 10).
    """
    return Observations(numbers=_observations(result).numbers)


def _observations(result: Any, *, removal_k: int = 10) -> Observations:
    """Per-target values and the report numbers of a run (see :func:`run_observations`)."""
    lds_m = result.artifacts["lds"]
    removal = f"removal[k={removal_k}]"
    rem_m = result.artifacts[removal]
    values = {
        "lds": {a: per_target(result, "lds", a, "lds") for a in ARMS},
        "removal": {a: per_target(result, removal, a, "drop") for a in ("datamodels", "influence", "random")},
    }
    numbers: dict[str, Any] = {k: float(v) for k, v in lds_m.values.items()}
    numbers.update({f"{removal}/{k}": float(v) for k, v in rem_m.values.items()})
    dm = result.artifacts["datamodels"]
    numbers["datamodels/training_runs"] = float(dm.info["training_runs"])
    numbers["datamodels/mean_nonzero"] = float(dm.info["mean_nonzero"])
    numbers["influence/damping"] = float(result.artifacts["influence"].info["damping"])
    numbers["num_train"] = float(dm.value.shape[0])
    numbers["targets_with_varying_ground_truth"] = float(np.mean(np.isfinite(values["lds"]["datamodels"])))
    return Observations(values=values, numbers=numbers)


def _rows(stage: str, column: str) -> Rows:
    """``column`` of ``stage``'s per-target table, one row per target, ``num_targets = replicates``.

    A target whose held-out margins do not vary has no LDS (NaN): it is dropped from every arm,
    and the precondition on ``targets_with_varying_ground_truth`` says whether too many were.
    """
    return Rows(
        stage=stage,
        table="per_target",
        column=column,
        key="target",
        count="task.bed.num_targets",
        nonfinite="drop",
    )


_VARYING = Precondition.number(
    "targets_with_varying_ground_truth",
    ">=",
    0.9,
    "the held-out subsets move the margins of at least 90 % of the targets (the LDS is defined)",
)


def _enough_models(obs: Any) -> tuple[bool, str]:
    per = obs.numbers["datamodels/training_runs"] / obs.numbers["num_train"]
    return per >= 1.0, f"{per:.2f} models per training point (needs >= 1)"


_ENOUGH = Precondition("the regression saw at least one subset model per training point", _enough_models)

_SMOKE = Scale(
    replicates=5,
    overrides=(
        "task.bed.num_train=60",
        "task.bed.steps=60",
        "task.bed.cache_dir=",
        "stage.datamodels.num_models=80",
        "stage.influence.validation_subsets=8",
        "stage.lds.num_subsets=20",
    ),
)
_PAPER = Scale(replicates=50)
_TUNING = {
    "datamodels": Tuning(10, "lambda: best validation MSE of 10 on the lasso path, on 10 % held-out models"),
    "influence": Tuning(10, "damping: best validation LDS of 10 values on 200 held-out subset models"),
    "tracin": Tuning(1, "no hyper-parameter (checkpoint every 10 steps)"),
    "random": Tuning(1, "no hyper-parameter"),
}

lds_claim = Claim(
    arms=("datamodels",),
    pipeline=PIPELINE,
    rows=_rows("lds", "lds"),
    observe=observe_numbers,
    effect=Effect(
        quantity="mean LDS of datamodels over target examples (Spearman, 200 fresh half subsets)",
        statistic="mean",
        relation="greater",
        value=0.8,
        tolerance=0.05,
    ),
    plan=Plan(
        effect=0.05,
        pilot_replicates=5,
        rationale="detect a true mean LDS of 0.80 against the 0.75 boundary; a target's LDS spreads by about "
        "0.1, so about 30 targets suffice; 50 declared",
    ),
    preconditions=(_VARYING, _ENOUGH),
    scales={"smoke": _SMOKE, "paper": _PAPER},
    tuning=_TUNING,
    libraries=_LIBRARIES,
)
"""Datamodels' LDS on breast cancer (logistic regression, m = 2000, alpha = 0.5) is above 0.75."""

vs_influence_claim = Claim(
    arms=("datamodels", "influence"),
    pipeline=PIPELINE,
    rows=_rows("lds", "lds"),
    observe=observe_numbers,
    effect=Effect(
        quantity="LDS datamodels - LDS influence functions (paired by target)",
        statistic="difference",
        relation="greater",
        value=0.05,
    ),
    plan=Plan(
        effect=0.05,
        pilot_replicates=5,
        rationale="detect a true gap of 0.10 against the 0.05 margin; paired sd about 0.1: about 30 targets",
    ),
    preconditions=(_VARYING, _ENOUGH),
    scales={"smoke": _SMOKE, "paper": _PAPER},
    tuning=_TUNING,
    libraries=_LIBRARIES,
)
"""Datamodels' LDS exceeds tuned exact-Hessian influence functions' by more than 0.05."""

removal_claim = Claim(
    arms=("datamodels", "random"),
    pipeline=PIPELINE,
    rows=_rows("removal[k=10]", "drop"),
    observe=observe_numbers,
    effect=Effect(
        quantity="margin drop after removing the top-10 datamodel points - after removing 10 random points "
        "(margin units, paired by target)",
        statistic="difference",
        relation="greater",
        value=0.5,
    ),
    plan=Plan(
        effect=0.25,
        pilot_replicates=5,
        rationale="a drop 0.5 margin units larger than random removal is what a user would notice; detect "
        "0.75 against it",
    ),
    preconditions=(_VARYING,),
    scales={"smoke": _SMOKE, "paper": _PAPER},
    tuning=_TUNING,
    libraries=_LIBRARIES,
)
"""Removing a target's top-10 datamodel points drops its margin by more than 10 random points do, by > 0.5."""
