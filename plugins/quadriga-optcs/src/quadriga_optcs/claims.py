"""OptCS's headline claims under the claim protocol (:mod:`quadriga.claims`).

All three observe one run of the ``optcs-synthetic`` pipeline (Jin-Candès setting 2, ``d = 20``,
6 candidate regressors, ``n = 100`` calibration and ``m = 100`` test units, ``H_j: Y_j <= 0``) with
``repeat = replicates`` on the task ``data`` (fresh data per replicate) and on the three selection
stages ``optcs``, ``split`` and ``naive``, so replicate ``i`` of every arm sees the same data and
the same seed (common random numbers). Per replicate ``i`` the ``fdr`` stage reports
``values["<arm>[i]/fdp_q<q>"]`` and ``"/power_q<q>"``; the FDR is their mean over replicates, its
interval the BCa bootstrap of :func:`quadriga.stats.bootstrap_ci` (through the verdict policy).

- ``FDR_CONTROL``: OptCS's FDR at ``q = 0.1`` is below ``q`` (the upper end of the 95% interval of
  the mean FDP must be below ``0.1``; Bai & Jin 2024, Theorem 3.3);
- ``POWER``: OptCS's power exceeds split selection's at ``q = 0.2`` (paired difference over
  replicates sharing data and seeds; sec. 5);
- ``NAIVE_VIOLATION``: the naive data-reusing procedure's FDR at ``q = 0.1`` exceeds ``q`` (the
  positive control that shows what the correction is for).

The run is the ``experiment`` of each claim rather than ``pipeline + metric``: the three claims read
the same replicates, so :func:`quadriga.claims.run_repeated` makes one run per scale inside
``verify`` (the core's shared runs) and the paper-scale run costs one pipeline run instead of three;
the per-replicate keys ``values[f"{arm}[{i}]/{metric}"]`` are read with
:func:`quadriga.claims.replicate_values`.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from quadriga.claims import Claim, Effect, Observations, Scale, Tuning, replicate_values, run_repeated

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


def observe_run(scale: Scale, out_dir: Path, *, arms: tuple[str, ...], metric: str) -> Observations:
    """Per-replicate ``metric`` of ``arms`` from the (shared) run of :data:`PIPELINE` at ``scale``.

    Args:
        scale: the claim's scale (replicates, overrides, root seed).
        out_dir: the claim's directory; the run is written under ``out_dir / "run"`` by the first
            claim that needs it (inside ``verify`` the later claims share it).
        arms: stage base names among :data:`ARMS`.
        metric: a per-replicate metric of the ``fdr`` stage, ``"fdp_q0.1"`` or ``"power_q0.2"``.

    Returns:
        :class:`~quadriga.claims.Observations` with ``values = {arm: [value of replicate 0, 1, ...]}``
        and ``numbers`` holding the run directory and the evaluator's pooled means and standard errors.

    Raises:
        ConfigError: a replicate's value is missing from the run.
    """
    result = run_repeated(PIPELINE, scale, out_dir, stages=ARMS, tasks=(_TASK,))
    values = result.results["stages"][_EVALUATOR]["values"]
    out = {arm: replicate_values(values, arm, metric, scale.replicates, stage=_EVALUATOR) for arm in arms}
    stat, level = metric.split("_", 1)
    pooled = "fdr" if stat == "fdp" else stat
    numbers: dict[str, Any] = {"run": str(result.dir)}
    for arm in arms:
        for name in (f"{arm}/{pooled}_{level}", f"{arm}/{pooled}_se_{level}"):
            if name in values:
                numbers[name] = float(values[name])
    return Observations(values=out, numbers=numbers)


def _experiment(arms: tuple[str, ...], metric: str) -> Any:
    return functools.partial(observe_run, arms=arms, metric=metric)


_TUNING = {
    "optcs": Tuning(
        settings_tried=3,
        rule="pruning = homogeneous: the most powerful of deterministic, heterogeneous and homogeneous "
        "in a 100-replicate pilot of setting 2; beta = 1 (paper default)",
    ),
    "split": Tuning(settings_tried=1, rule="paper baseline: model chosen on half of the calibration set"),
    "naive": Tuning(settings_tried=1, rule="paper baseline: the largest BH set over the candidates"),
}

FDR_CONTROL = Claim(
    pipeline=PIPELINE,
    arms=("optcs",),
    experiment=_experiment(("optcs",), "fdp_q0.1"),
    effect=Effect(
        quantity="FDR of OptCS-MSel at q = 0.1 (mean false discovery proportion over replicates)",
        statistic="mean",
        relation="less",
        value=0.1,
        tolerance=0.0,
    ),
    scales=_SCALES,
    tuning={"optcs": _TUNING["optcs"]},
    repeat_tasks=(_TASK,),
)

POWER = Claim(
    pipeline=PIPELINE,
    arms=("optcs", "split"),
    experiment=_experiment(("optcs", "split"), "power_q0.2"),
    effect=Effect(
        quantity="power at q = 0.2, OptCS-MSel minus split conformal selection (paired mean difference)",
        statistic="difference",
        relation="greater",
        value=0.0,
        tolerance=0.0,
    ),
    scales=_SCALES,
    tuning={"optcs": _TUNING["optcs"], "split": _TUNING["split"]},
    repeat_tasks=(_TASK,),
)

NAIVE_VIOLATION = Claim(
    pipeline=PIPELINE,
    arms=("naive",),
    experiment=_experiment(("naive",), "fdp_q0.1"),
    effect=Effect(
        quantity="FDR of the naive data-reusing selection at q = 0.1 (mean FDP over replicates)",
        statistic="mean",
        relation="greater",
        value=0.1,
        tolerance=0.0,
    ),
    scales=_SCALES,
    tuning={"naive": _TUNING["naive"]},
    repeat_tasks=(_TASK,),
)
