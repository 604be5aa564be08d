"""The paper's headline claims under the claim protocol (:mod:`quadriga.claims`).

- Linear convergence (Theorem 1): on diabetes, Prospect's ``log10`` relative suboptimality falls
  linearly in passes: a negative mean slope (``prospect-linear-rate``), and a straight curve, whose
  slope changes by less than half across the fitted passes (``prospect-linear-curvature``, the
  relative curvature of :func:`~quadriga_prospect.evaluators.curve_summary` within 0 +- 0.5).
- Speed (abstract: "2-3x faster than ... stochastic gradient and stochastic saddle-point
  methods"): passes to reach ``1e-6`` relative suboptimality, Prospect over saddle-point SAGA (the
  faster of those baselines; SGD and SRDA do not reach ``1e-6``), ratio of means below 0.5, on each
  data set. Unreached runs count as ``passes + 1`` (censored, which favours the baseline).

Every learner tunes its step size over the same grid (``LR_GRID``, 8 values) by the same rule, so
the tuning budget is equal. Smoke scale shortens runs and grids (numbers, no verdict).

The run is the ``experiment`` of each claim rather than ``pipeline + metric``: the claims on one
pipeline read the same replicates (three on ``prospect-diabetes``, two on
``prospect-classification``), so one run per pipeline and scale serves all of them inside
``verify`` (:func:`quadriga.claims.run_repeated`, the core's shared runs). The experiment sets
``repeat = replicates`` on **every** learner stage of the pipeline (replicate ``i`` of every method
shares its index stream: common random numbers) and reads the per-replicate keys
``values[f"{arm}[{i}]/{metric}"]`` of the evaluator stage with
:func:`quadriga.claims.replicate_values`.

Source: Mehta, Roulet, Pillutla, Harchaoui, ICLR 2024, abstract, Theorem 1, sec. 5 and Fig. 2-3.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

from quadriga.claims import Claim, Effect, Observations, Scale, Tuning, replicate_values, run_repeated
from quadriga_prospect.learners import LR_GRID

__all__ = [
    "LEARNERS",
    "LINEAR_CURVATURE",
    "LINEAR_RATE",
    "PASSES_BREAST_CANCER",
    "PASSES_DIABETES",
    "PASSES_WINE",
    "learner_stages",
    "observe_run",
]

#: the learner components of the pipelines; every stage using one (:func:`learner_stages`) is repeated
LEARNERS = ("prospect", "saddle-saga", "lsvrg", "sgd-spectral", "srda")
_METHODS = ("prospect", "saddle-saga", "lsvrg", "sgd", "srda")  # stage base names
_RULE = (
    "learning_rate_grid (the paper's half-decade grid, 1e-4 to 0.3) on shared index streams; "
    "smallest mean log10 gap to the best value reached"
)
_SMOKE = ("num_epochs=12", "learning_rate_grid=[0.01, 0.03]")
_SUMMARY = ("passes_to_tol", "reached", "grad_passes_to_tol", "log10_rate", "lr")

_SUFFIXES = {"prospect-diabetes": ("",), "prospect-classification": ("-bc", "-wine")}


def learner_stages(pipeline: str) -> tuple[str, ...]:
    """The learner stages of ``pipeline`` (those whose ``use`` is one of :data:`LEARNERS`)."""
    return tuple(f"{m}{s}" for m in _METHODS for s in _SUFFIXES[pipeline])


def _smoke(stages: list[str]) -> tuple[str, ...]:
    return tuple(f"stage.{s}.{o}" for s in stages for o in _SMOKE)


def _mean(xs: list[float]) -> float:
    xs = [x for x in xs if math.isfinite(x)]
    return sum(xs) / len(xs) if xs else math.nan


def observe_run(
    scale: Scale,
    out_dir: Path,
    *,
    pipeline: str,
    evaluator: str,
    suffix: str,
    arms: tuple[str, ...],
    metric: str,
) -> Observations:
    """Per-replicate ``metric`` of ``arms`` from the (shared) run of ``pipeline`` at ``scale``.

    Args:
        scale: the claim's scale (replicates, overrides, root seed).
        out_dir: the claim's directory; the run is written under ``out_dir / "run"`` by the first
            claim that needs it.
        pipeline: ``"prospect-diabetes"`` or ``"prospect-classification"``.
        evaluator: the ``spectral-suboptimality`` stage to read.
        suffix: the stage-name suffix of that data set's learners (``""``, ``"-bc"``, ``"-wine"``).
        arms: learner stage names (``"prospect"``, ``"saddle-saga-wine"``).
        metric: a per-subject metric of the evaluator (``"log10_rate"``, ``"passes_to_tol"``).

    Returns:
        :class:`~quadriga.claims.Observations` with ``values = {arm: [replicate 0, 1, ...]}``;
        ``numbers`` holds the run directory, the optimum and, for every method on that data set,
        the means over replicates of ``passes_to_tol``, ``reached``, ``grad_passes_to_tol``,
        ``log10_rate`` and ``lr`` (also as the markdown ``table``).

    Raises:
        ConfigError: a replicate's value is missing from the run.
    """
    result = run_repeated(pipeline, scale, out_dir, stages=learner_stages(pipeline))
    values = result.results["stages"].get(evaluator, {}).get("values", {})
    n = scale.replicates

    def column(arm: str, name: str) -> list[float]:
        return replicate_values(values, arm, name, n, stage=evaluator)

    out = {arm: column(arm, metric) for arm in arms}
    numbers: dict[str, Any] = {"run": str(result.dir), "optimum": float(values.get("optimum", math.nan))}
    rows = [
        f"| method ({n} replicates) | passes to 1e-6 | reached | gradient evals / n | slope / pass | lr |",
        "|---|---|---|---|---|---|",
    ]
    for method in _METHODS:
        stage = f"{method}{suffix}"
        if f"{stage}[0]/passes_to_tol" not in values:
            continue
        means = {name: _mean(column(stage, name)) for name in _SUMMARY}
        means["reached"] *= n
        numbers.update({f"{stage}/{name}": v for name, v in means.items()})
        rows.append(f"| {stage} | " + " | ".join(f"{means[k]:.4g}" for k in _SUMMARY) + " |")
    return Observations(values=out, numbers=numbers, table="\n".join(rows))


def _tuning(*arms: str) -> dict[str, Tuning]:
    return {arm: Tuning(settings_tried=len(LR_GRID), rule=_RULE) for arm in arms}


def _claim(pipeline: str, suffix: str, arms: tuple[str, ...], metric: str, effect: Effect) -> Claim:
    stages = list(learner_stages(pipeline))
    experiment = functools.partial(
        observe_run,
        pipeline=pipeline,
        evaluator=f"suboptimality{suffix}",
        suffix=suffix,
        arms=arms,
        metric=metric,
    )
    return Claim(
        pipeline=pipeline,
        arms=arms,
        experiment=experiment,
        effect=effect,
        scales={
            "smoke": Scale(replicates=2, overrides=_smoke(stages)),
            "paper": Scale(replicates=10, overrides=()),
        },
        tuning=_tuning(*arms),
    )


LINEAR_RATE = _claim(
    "prospect-diabetes",
    "",
    ("prospect",),
    "log10_rate",
    Effect(
        quantity="slope of log10 relative suboptimality per pass, Prospect on diabetes (mean)",
        statistic="mean",
        relation="less",
        value=0.0,
        tolerance=0.0,
    ),
)

LINEAR_CURVATURE = _claim(
    "prospect-diabetes",
    "",
    ("prospect",),
    "curvature",
    Effect(
        quantity="relative change of the log-suboptimality slope across the fit, Prospect on diabetes (mean)",
        statistic="mean",
        relation="within",
        value=0.0,
        tolerance=0.5,
    ),
)


def _passes(pipeline: str, suffix: str, label: str) -> Claim:
    return _claim(
        pipeline,
        suffix,
        (f"prospect{suffix}", f"saddle-saga{suffix}"),
        "passes_to_tol",
        Effect(
            quantity=f"passes to 1e-6 relative suboptimality, Prospect / saddle-point SAGA, {label}",
            statistic="ratio",
            relation="less",
            value=0.5,
            tolerance=0.0,
        ),
    )


PASSES_DIABETES = _passes("prospect-diabetes", "", "diabetes")
PASSES_BREAST_CANCER = _passes("prospect-classification", "-bc", "breast_cancer")
PASSES_WINE = _passes("prospect-classification", "-wine", "wine")
