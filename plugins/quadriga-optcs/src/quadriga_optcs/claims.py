"""OptCS's headline claims under the claim protocol (:mod:`quadriga.claims`).

All three observe one run of the ``optcs-synthetic`` pipeline (Jin-Candes setting 2, ``d = 20``,
6 candidate regressors, ``n = 100`` calibration and ``m = 100`` test units, ``H_j: Y_j <= 0``) with
``repeat = replicates`` on the task ``data`` (fresh data per replicate) and on the three selection
stages ``optcs``, ``split`` and ``naive``, so replicate ``i`` of every arm sees the same data and
the same seed (common random numbers). Per replicate ``i`` the ``fdr`` stage reports
``values["<arm>[i]/fdp_q<q>"]`` and ``"/power_q<q>"``; the FDR is their mean over replicates.

- ``FDR_CONTROL``: OptCS's FDR at ``q = 0.1`` is below ``q`` (Bai & Jin 2024, Theorem 3.3: the
  bound is the level itself, so ``q`` is the margin);
- ``POWER``: OptCS's power exceeds split selection's at ``q = 0.2`` (paired difference over
  replicates sharing data and seeds; sec. 5 claims the direction, no size: the sign is the claim);
- ``NAIVE_VIOLATION``: the naive data-reusing procedure's FDR at ``q = 0.1`` exceeds ``q`` (the
  positive control that shows what the correction is for).

The claims are declarative (``pipeline`` + ``observe``, every selection stage repeated through
``repeat_stages``): they make the same pipeline, so inside ``verify`` the core runs it once per
scale (:func:`quadriga.claims.run_pipeline`) and the three claims read the same replicates.
"""

from __future__ import annotations

import functools
from typing import Any

from quadriga.claims import Claim, Effect, Observations, Plan, Scale, Tuning, replicate_values

__all__ = ["ARMS", "FDR_CONTROL", "NAIVE_VIOLATION", "PIPELINE", "POWER", "observe_run"]

PIPELINE = "optcs-synthetic"
#: the selection stages of :data:`PIPELINE`, every one repeated ``replicates`` times
ARMS = ("optcs", "split", "naive")
_TASK = "data"
_EVALUATOR = "fdr"

_SMOKE = Scale(
    replicates=3,
    overrides=("task.data.n_train=200", "task.data.n_calibration=60", "task.data.n_test=30"),
)
_PAPER = Scale(replicates=500)
_SCALES = {"smoke": _SMOKE, "paper": _PAPER}


def observe_run(result: Any, *, arms: tuple[str, ...], metric: str) -> Observations:
    """Per-replicate ``metric`` of ``arms`` from the run of :data:`PIPELINE` (a claim's ``observe``).

    Args:
        result: the :class:`~quadriga.runs.RunResult` of the claim's run.
        arms: stage base names among :data:`ARMS`.
        metric: a per-replicate metric of the ``fdr`` stage, ``"fdp_q0.1"`` or ``"power_q0.2"``.

    Returns:
        :class:`~quadriga.claims.Observations` with ``values = {arm: [value of replicate 0, 1, ...]}``
        and ``numbers`` holding the run directory and the evaluator's pooled means and standard errors.

    Raises:
        ConfigError: a replicate's value is missing from the run.
    """
    values = result.results["stages"][_EVALUATOR]["values"]
    out = {arm: replicate_values(values, arm, metric, stage=_EVALUATOR) for arm in arms}
    stat, level = metric.split("_", 1)
    pooled = "fdr" if stat == "fdp" else stat
    numbers: dict[str, Any] = {"run": str(result.dir)}
    for arm in arms:
        for name in (f"{arm}/{pooled}_{level}", f"{arm}/{pooled}_se_{level}"):
            if name in values:
                numbers[name] = float(values[name])
    return Observations(values=out, numbers=numbers)


def _claim(arms: tuple[str, ...], metric: str, effect: Effect, plan: Plan) -> Claim:
    """A claim on the shared run of :data:`PIPELINE` (every selection stage and the task repeated)."""
    return Claim(
        pipeline=PIPELINE,
        arms=arms,
        observe=functools.partial(observe_run, arms=arms, metric=metric),
        repeat_stages=ARMS,
        repeat_tasks=(_TASK,),
        effect=effect,
        plan=plan,
        scales=_SCALES,
        tuning={arm: _TUNING[arm] for arm in arms},
        libraries=("scikit-learn", "numpy", "scipy"),
    )


_TUNING = {
    "optcs": Tuning(
        settings_tried=3,
        rule="pruning = homogeneous: the most powerful of deterministic, heterogeneous and homogeneous "
        "in a 100-replicate pilot of setting 2; beta = 1 (paper default)",
    ),
    "split": Tuning(settings_tried=1, rule="paper baseline: model chosen on half of the calibration set"),
    "naive": Tuning(settings_tried=1, rule="paper baseline: the largest BH set over the candidates"),
}

FDR_CONTROL = _claim(
    ("optcs",),
    "fdp_q0.1",
    Effect(
        quantity="FDR of OptCS-MSel at q = 0.1 (mean false discovery proportion over replicates)",
        statistic="mean",
        relation="less",
        value=0.1,
    ),
    Plan(
        effect=0.03,
        pilot_replicates=20,
        sd=0.146,
        rationale="a true FDR of 0.07 or less against the bound 0.1 (a pilot of 100 replicates in the "
        "research notes measured 0.064); per-replicate FDP sd 0.146 from the 500-replicate record needs "
        "about 190 replicates, 500 declared",
    ),
)

POWER = _claim(
    ("optcs", "split"),
    "power_q0.2",
    Effect(
        quantity="power at q = 0.2, OptCS-MSel minus split conformal selection (paired mean difference)",
        statistic="difference",
        relation="greater",
        value=0.0,
        why_sign="Bai & Jin (sec. 5) claim OptCS selects more true discoveries than split selection at the "
        "same FDR level and state no size: the direction is the claim",
    ),
    Plan(
        effect=0.05,
        pilot_replicates=20,
        sd=0.18,
        rationale="the research notes measured a gain of about 0.05-0.07 at q = 0.2 (SE 0.02 per arm, "
        "unpaired); paired sd 0.18 from the 500-replicate record: about 100 replicates detect 0.05",
    ),
)

NAIVE_VIOLATION = _claim(
    ("naive",),
    "fdp_q0.1",
    Effect(
        quantity="FDR of the naive data-reusing selection at q = 0.1 (mean FDP over replicates)",
        statistic="mean",
        relation="greater",
        value=0.1,
    ),
    Plan(
        effect=0.1,
        pilot_replicates=20,
        sd=0.34,
        rationale="the notes measured 2.5-3x inflation (FDR 0.27 at q = 0.1); an excess of 0.1 over q is "
        "the smallest violation worth showing as the positive control; sd 0.34 from the record: about "
        "90 replicates",
    ),
)
