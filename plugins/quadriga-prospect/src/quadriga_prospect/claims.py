"""The paper's headline claims under the v2 claim protocol (``quadriga.claims.Claim``).

- Linear convergence (Theorem 1): on diabetes, Prospect's ``log10`` relative suboptimality falls
  linearly in passes: a negative mean slope (``prospect-linear-rate``), and a straight curve, whose
  slope changes by less than half across the fitted passes (``prospect-linear-curvature``, the
  relative curvature of :func:`~quadriga_prospect.evaluators.curve_summary` within 0 +- 0.5).
- Speed (abstract: "2-3x faster than ... stochastic gradient and stochastic saddle-point
  methods"): passes to reach ``1e-6`` relative suboptimality, Prospect over saddle-point SAGA (the
  faster of those baselines; SGD and SRDA do not reach ``1e-6``), ratio of means below 0.5, on each
  data set. Unreached runs count as ``passes + 1`` (censored, which favours the baseline).

Every arm tunes its step size over the same grid (``LR_GRID``, 8 values) by the same rule, so
the tuning budget is equal. Smoke scale shortens runs and grids (numbers, no verdict).

Source: Mehta, Roulet, Pillutla, Harchaoui, ICLR 2024, abstract, Theorem 1, sec. 5 and Fig. 2-3.
"""

from __future__ import annotations

from quadriga.claims import Claim, Effect, Scale, Tuning
from quadriga_prospect.learners import LR_GRID

__all__ = ["LINEAR_CURVATURE", "LINEAR_RATE", "PASSES_BREAST_CANCER", "PASSES_DIABETES", "PASSES_WINE"]

_METHODS = ("prospect", "saddle-saga", "lsvrg", "sgd", "srda")
_RULE = (
    "lr_grid (the paper's half-decade grid, 1e-4 to 0.3) on shared index streams; "
    "smallest mean log10 gap to the best value reached"
)
_SMOKE = ("passes=12", "lr_grid=[0.01, 0.03]")


def _smoke(stages: list[str]) -> tuple[str, ...]:
    # the core repeats the arm stages; the other learners of the pipeline are shrunk here too
    return tuple(f"stage.{s}.{o}" for s in stages for o in (*_SMOKE, "repeat=2"))


def _tuning(*arms: str) -> dict[str, Tuning]:
    return {arm: Tuning(settings_tried=len(LR_GRID), rule=_RULE) for arm in arms}


LINEAR_RATE = Claim(
    pipeline="prospect-diabetes",
    arms=("prospect",),
    metric=("suboptimality", "log10_rate"),
    effect=Effect(
        quantity="slope of log10 relative suboptimality per pass, Prospect on diabetes (mean)",
        statistic="mean",
        relation="less",
        value=0.0,
        tolerance=0.0,
    ),
    scales={
        "smoke": Scale(replicates=2, overrides=_smoke(list(_METHODS))),
        "paper": Scale(replicates=10, overrides=()),
    },
    tuning=_tuning("prospect"),
)

LINEAR_CURVATURE = Claim(
    pipeline="prospect-diabetes",
    arms=("prospect",),
    metric=("suboptimality", "curvature"),
    effect=Effect(
        quantity="relative change of the log-suboptimality slope across the fit, Prospect on diabetes (mean)",
        statistic="mean",
        relation="within",
        value=0.0,
        tolerance=0.5,
    ),
    scales={
        "smoke": Scale(replicates=2, overrides=_smoke(list(_METHODS))),
        "paper": Scale(replicates=10, overrides=()),
    },
    tuning=_tuning("prospect"),
)


def _passes(pipeline: str, suffix: str, label: str) -> Claim:
    prospect, saga = f"prospect{suffix}", f"saddle-saga{suffix}"
    suffixes = ("",) if pipeline == "prospect-diabetes" else ("-bc", "-wine")
    stages = [f"{m}{s}" for m in _METHODS for s in suffixes]
    return Claim(
        pipeline=pipeline,
        arms=(prospect, saga),
        metric=(f"suboptimality{suffix}", "passes_to_tol"),
        effect=Effect(
            quantity=f"passes to 1e-6 relative suboptimality, Prospect / saddle-point SAGA, {label}",
            statistic="ratio",
            relation="less",
            value=0.5,
            tolerance=0.0,
        ),
        scales={
            "smoke": Scale(replicates=2, overrides=_smoke(stages)),
            "paper": Scale(replicates=10, overrides=()),
        },
        tuning=_tuning(prospect, saga),
    )


PASSES_DIABETES = _passes("prospect-diabetes", "", "diabetes")
PASSES_BREAST_CANCER = _passes("prospect-classification", "-bc", "breast_cancer")
PASSES_WINE = _passes("prospect-classification", "-wine", "wine")
