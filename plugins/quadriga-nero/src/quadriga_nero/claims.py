"""NERO's headline claims under the claim protocol (:mod:`quadriga.claims`).

Each claim reads one run of ``nero-digits-rotation`` or ``nero-digits-shift`` with ``repeat =
replicates`` on the task ``digits`` (a fresh 60/40 split per replicate) and on the three learner
stages ``mlp``, ``cnn`` and ``cnn-rot``, so replicate ``i`` of every arm sees the same split and the
same seed (common random numbers, paired comparisons). The ``nero`` stage reports
``values[f"{arm}[{i}]/{metric}"]`` per replicate; the verdict policy bootstraps (BCa) the paired
statistic over replicates.

- ``ROTATION_FLATNESS``: the rotation-augmented CNN's NERO accuracy curve over rotations is flatter
  than the plain CNN's and the MLP's: paired difference of ``curve_range = max_g A(g) - min_g A(g)``
  below 0 (two comparisons, Holm-adjusted);
- ``ACCURACY_OVERLAP``: on upright test digits (the identity element) the augmented and plain CNNs'
  accuracies differ by less than 0.03 (the scalar metric hides what the curve shows);
- ``SHIFT_FLATNESS``: over integer shifts ``|dx|, |dy| <= 3`` the CNN's curve is flatter than the MLP's;
- ``CONSENSUS_TRACKING``: the consensus-based NERO curve of the plain CNN (labels replaced by the
  consensus of the three models at each rotated input) tracks its ground-truth curve: mean Pearson
  correlation over rotations above 0.9.

Each experiment also reports, per arm, the mean over replicates (BCa interval) of accuracy, orbit
accuracy, orbit variance and both consensus label accuracies (orbit consensus and model consensus).

One run per pipeline and scale serves every claim that reads it inside ``verify``
(:func:`quadriga.claims.run_repeated`, the core's shared runs); the per-replicate values are read
with :func:`quadriga.claims.replicate_values` and the reported means with
:func:`quadriga.claims.mean_intervals`.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from quadriga.claims import (
    Claim,
    Effect,
    Observations,
    Scale,
    Tuning,
    mean_intervals,
    replicate_values,
    run_repeated,
)

__all__ = [
    "ACCURACY_OVERLAP",
    "ARMS",
    "CONSENSUS_TRACKING",
    "ROTATION_FLATNESS",
    "SHIFT_FLATNESS",
    "observe_run",
]

ROTATION, SHIFT = "nero-digits-rotation", "nero-digits-shift"
#: the learner stages of both pipelines, every one repeated ``replicates`` times
ARMS = ("mlp", "cnn", "cnn-rot")
_TASK = "digits"
_EVALUATOR = "nero"
_REPORTED = (
    "accuracy",
    "orbit_accuracy",
    "curve_range",
    "orbit_variance",
    "orbit_consensus_label_accuracy",
    "model_consensus_label_accuracy",
)

_FAST = (
    "stage.mlp.num_epochs=3",
    "stage.cnn.num_epochs=3",
    "stage.cnn-rot.num_epochs=3",
    "task.digits.train=0.3",
    "task.digits.test=0.1",
)
_SCALES = {
    ROTATION: {
        "smoke": Scale(
            replicates=2, overrides=(*_FAST, "stage.nero.angle_step=90.0", "stage.nero.figures=false")
        ),
        "paper": Scale(replicates=6),
    },
    SHIFT: {
        "smoke": Scale(
            replicates=2, overrides=(*_FAST, "stage.nero.max_shift=1", "stage.nero.figures=false")
        ),
        "paper": Scale(replicates=6),
    },
}


def observe_run(
    scale: Scale, out_dir: Path, *, pipeline: str, arms: tuple[str, ...], metric: str
) -> Observations:
    """Per-replicate ``metric`` of ``arms`` from the (shared) run of ``pipeline`` at ``scale``.

    Args:
        scale: the claim's scale (replicates, overrides, root seed).
        out_dir: the claim's directory; the run goes under ``out_dir / "run"``.
        pipeline: ``nero-digits-rotation`` or ``nero-digits-shift``.
        arms: stage base names among :data:`ARMS`.
        metric: a per-subject value of the ``nero`` stage (``"curve_range"``, ``"accuracy"``, ...).

    Returns:
        :class:`~quadriga.claims.Observations`: ``values = {arm: [replicate 0, 1, ...]}``; ``numbers``
        holds the run directory and, for every arm of :data:`ARMS`, the mean over replicates of each
        reported metric with its 95% BCa interval (``"<arm>/<metric>"``, ``"_low"``, ``"_high"``).

    Raises:
        ConfigError: a replicate's value is missing from the run.
    """
    result = run_repeated(pipeline, scale, out_dir, stages=ARMS, tasks=(_TASK,))
    values = result.results["stages"][_EVALUATOR]["values"]

    def series(arm: str, name: str) -> list[float]:
        return replicate_values(values, arm, name, scale.replicates, stage=_EVALUATOR)

    out = {arm: series(arm, metric) for arm in arms}
    means, table = mean_intervals({arm: {name: series(arm, name) for name in _REPORTED} for arm in ARMS})
    numbers: dict[str, Any] = {"run": str(result.dir), "replicates": scale.replicates, **means}
    return Observations(values=out, numbers=numbers, table=table)


def _experiment(pipeline: str, arms: tuple[str, ...], metric: str) -> Any:
    return functools.partial(observe_run, pipeline=pipeline, arms=arms, metric=metric)


_TUNING = {
    "cnn-rot": Tuning(
        settings_tried=2,
        rule="augment_fraction 0.5 (half of each batch rotated) chosen over 1.0 on one pilot split "
        "(seed 0) for upright accuracy close to the plain CNN's; lr 3e-3, 20 epochs as the other arms",
    ),
    "cnn": Tuning(
        settings_tried=1, rule="LeNet-style CNN, Adam lr 3e-3, 20 epochs, batch 64 (fixed before the run)"
    ),
    "mlp": Tuning(settings_tried=1, rule="one hidden layer of 128, Adam lr 3e-3, 20 epochs, batch 64"),
}

ROTATION_FLATNESS = Claim(
    pipeline=ROTATION,
    arms=("cnn-rot", "cnn", "mlp"),
    experiment=_experiment(ROTATION, ("cnn-rot", "cnn", "mlp"), "curve_range"),
    effect=Effect(
        quantity="range max_g - min_g of the NERO accuracy curve over rotations 0-345 degrees, "
        "rotation-augmented CNN minus baseline (paired mean difference, accuracy units)",
        statistic="difference",
        relation="less",
        value=0.0,
    ),
    scales=_SCALES[ROTATION],
    tuning=_TUNING,
    repeat_tasks=(_TASK,),
)

ACCURACY_OVERLAP = Claim(
    pipeline=ROTATION,
    arms=("cnn-rot", "cnn"),
    experiment=_experiment(ROTATION, ("cnn-rot", "cnn"), "accuracy"),
    effect=Effect(
        quantity="accuracy on upright test digits, rotation-augmented minus plain CNN "
        "(paired mean difference)",
        statistic="difference",
        relation="within",
        value=0.0,
        tolerance=0.03,
    ),
    scales=_SCALES[ROTATION],
    tuning={k: _TUNING[k] for k in ("cnn-rot", "cnn")},
    repeat_tasks=(_TASK,),
)

SHIFT_FLATNESS = Claim(
    pipeline=SHIFT,
    arms=("cnn", "mlp"),
    experiment=_experiment(SHIFT, ("cnn", "mlp"), "curve_range"),
    effect=Effect(
        quantity="range of the NERO accuracy curve over integer shifts |dx|, |dy| <= 3, CNN minus MLP "
        "(paired mean difference)",
        statistic="difference",
        relation="less",
        value=0.0,
    ),
    scales=_SCALES[SHIFT],
    tuning={k: _TUNING[k] for k in ("cnn", "mlp")},
    repeat_tasks=(_TASK,),
)

CONSENSUS_TRACKING = Claim(
    pipeline=ROTATION,
    arms=("cnn",),
    experiment=_experiment(ROTATION, ("cnn",), "model_consensus_correlation"),
    effect=Effect(
        quantity="Pearson correlation over rotations between the plain CNN's consensus-based NERO curve "
        "(consensus of the three models at each rotated input) and its ground-truth curve "
        "(mean over replicates)",
        statistic="mean",
        relation="greater",
        value=0.9,
    ),
    scales=_SCALES[ROTATION],
    tuning={"cnn": _TUNING["cnn"]},
    repeat_tasks=(_TASK,),
)
