"""OptCS's headline claims under the claim protocol (:mod:`quadriga.claims`).

All three read the ``fdr`` stage of the ``optcs-synthetic`` pipeline (Jin-Candès setting 2,
6 candidate regressors, ``n = 100`` calibration and ``m = 100`` test units, ``H_j: Y_j <= 0``), whose
task is redrawn for every replicate (``repeat_tasks``). Per replicate ``i`` the evaluator reports
``values["<arm>[i]/fdp_q<q>"]`` and ``"/power_q<q>"``; the FDR is their mean over replicates.

- ``FDR_CONTROL``: OptCS's FDR at ``q = 0.1`` is below ``q`` (one-sided: the upper end of the
  bootstrap interval of the mean FDP must be below ``0.1``);
- ``POWER``: OptCS's power exceeds split selection's at ``q = 0.2`` (paired difference over replicates
  sharing data and seeds);
- ``NAIVE_VIOLATION``: the naive data-reusing procedure's FDR at ``q = 0.1`` exceeds ``q`` (the
  positive control showing what the correction is for).

Every claim pipeline repeats all three selection stages, so the arms that a claim does not read are
given the same replicate count by the overrides.
"""

from __future__ import annotations

from quadriga.claims import Claim, Effect, Scale, Tuning

__all__ = ["FDR_CONTROL", "NAIVE_VIOLATION", "POWER"]

_SMOKE_SIZES = ("task.data.n_train=200", "task.data.n_calibration=60", "task.data.n_test=30")
_STAGES = ("optcs", "split", "naive")


def _scales(arms: tuple[str, ...]) -> dict[str, Scale]:
    def others(n: int) -> tuple[str, ...]:
        return tuple(f"stage.{s}.repeat={n}" for s in _STAGES if s not in arms)

    return {
        "smoke": Scale(replicates=3, overrides=(*_SMOKE_SIZES, *others(3))),
        "paper": Scale(replicates=500, overrides=others(500)),
    }


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
    pipeline="optcs-synthetic",
    arms=("optcs",),
    metric=("fdr", "fdp_q0.1"),
    effect=Effect(
        quantity="FDR of OptCS-MSel at q = 0.1 (mean false discovery proportion over replicates)",
        statistic="mean",
        relation="less",
        value=0.1,
        tolerance=0.0,
    ),
    scales=_scales(("optcs",)),
    tuning={"optcs": _TUNING["optcs"]},
    repeat_tasks=("data",),
)

POWER = Claim(
    pipeline="optcs-synthetic",
    arms=("optcs", "split"),
    metric=("fdr", "power_q0.2"),
    effect=Effect(
        quantity="power at q = 0.2, OptCS-MSel minus split conformal selection (paired mean difference)",
        statistic="difference",
        relation="greater",
        value=0.0,
        tolerance=0.0,
    ),
    scales=_scales(("optcs", "split")),
    tuning={"optcs": _TUNING["optcs"], "split": _TUNING["split"]},
    repeat_tasks=("data",),
)

NAIVE_VIOLATION = Claim(
    pipeline="optcs-synthetic",
    arms=("naive",),
    metric=("fdr", "fdp_q0.1"),
    effect=Effect(
        quantity="FDR of the naive data-reusing selection at q = 0.1 (mean FDP over replicates)",
        statistic="mean",
        relation="greater",
        value=0.1,
        tolerance=0.0,
    ),
    scales=_scales(("naive",)),
    tuning={"naive": _TUNING["naive"]},
    repeat_tasks=("data",),
)
