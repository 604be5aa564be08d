"""MINTO's headline claims as statistical tests (``quadriga verify quadriga-minto``).

Test bed: the registered ``acrobot-minto`` pipeline (Acrobot-v1, reward -1 per step). There the
minimum binds: the MINTO bootstrap max_a' min(Q_target, Q_online)(s', a') is below DQN's
max_a' Q_target(s', a') in about 75-85% of replay rows (short runs, 4k steps, seeds 0-1), against
about 1% on CartPole-v1, where the online network sits above the lagging target as Q rises and the
two targets coincide. Each claim reports that fraction (``minto/min_binds_fraction``, from the
learner's ``info``) with its result.

``smoke`` runs 2 replicates with a short budget (numbers only, status "ran"); ``paper`` runs
``PAPER_REPLICATES`` replicates of ``PAPER_FRAMES`` environment steps per learner (the
early-learning phase, where a faster target rule shows in the area under the curve). The core
repeats the ``minto`` and ``dqn`` stages; replicate i of both shares its seed (paired, common
random numbers) and the effect is computed on the replicates with :mod:`quadriga.stats`. Both
claims read one run of the pipeline per scale and process (:func:`shared_run`): the second claim
reuses the first one's learners instead of training them again.

Source: Hendawy et al. 2025, "Use the Online Network If You Can" (arXiv 2510.02590), sec. 4-5.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from quadriga.claims import Claim, Effect, Observations, Scale, Tuning
from quadriga.errors import ConfigError
from quadriga.stage_names import parse_stage_name

__all__ = [
    "METHODS",
    "ONLINE_LR_GRID",
    "PAPER_FRAMES",
    "PAPER_REPLICATES",
    "PIPELINE",
    "auc_claim",
    "observe",
    "overestimation_claim",
    "shared_run",
]

PIPELINE = "acrobot-minto"
METHODS = ("dqn", "dqn-online", "minto")
PAPER_FRAMES = 6_000
PAPER_REPLICATES = 10


def _budget(frames: int, starts: int, anneal: int) -> tuple[str, ...]:
    return tuple(
        f"stage.{m}.{k}={v}"
        for m in METHODS
        for k, v in (("total_frames", frames), ("learning_starts", starts), ("eps_anneal_frames", anneal))
    )


_SCALES = {
    "smoke": Scale(
        replicates=2,
        overrides=(
            *_budget(1200, 300, 600),
            "stage.episode-return.num_episodes=1",
            "stage.q-overestimation.num_episodes=1",
            "stage.q-overestimation.tail_steps=50",
            "stage.return-curve.num_points=20",
        ),
    ),
    "paper": Scale(replicates=PAPER_REPLICATES, overrides=_budget(PAPER_FRAMES, 500, 3000)),
}
#: dqn-online's learning-rate grid on Acrobot-v1 at the paper budget (6 000 steps, 500 random,
#: epsilon annealed over 3 000), seeds 100-101 (not the claims' seeds): mean AUC per learning rate
ONLINE_LR_GRID = {1e-4: -356.7, 2.5e-4: -292.4, 1e-3: -462.6, 2.5e-3: -468.5}
_TUNING = {
    "minto": Tuning(1, "the dqn defaults (Adam 2.5e-3, target copy every 100 updates) with the MINTO target"),
    "dqn": Tuning(1, "the dqn defaults (Adam 2.5e-3, target copy every 100 updates)"),
    # not an arm of either claim (its numbers are reported, not compared)
    "dqn-online": Tuning(
        len(ONLINE_LR_GRID),
        "best mean AUC of Adam learning rates {1e-4, 2.5e-4, 1e-3, 2.5e-3}, 2 seeds each (100, 101) at the "
        "paper budget on Acrobot-v1: 2.5e-4 (mean AUC -292 against -357, -463, -468)",
    ),
}


def observe(stage: str, metric: str) -> Any:
    """An ``observe`` callable for :class:`~quadriga.claims.Claim`: per-replicate ``metric`` of ``stage``.

    Args:
        stage: the evaluator stage (``"return-curve"``).
        metric: its metric (``"auc"``); replicate ``i`` of arm ``a`` is ``values[f"{a}[{i}]/{metric}"]``.

    Returns:
        ``fn(result) -> Observations`` with ``values = {"minto": [...], "dqn": [...]}`` (aligned by
        replicate), ``numbers[metric] = {arm: [...]}`` (for the claim's ``also``), the same metric
        for ``dqn-online`` (its mean, as a number; not compared) and the binding diagnostic of
        MINTO: ``minto/min_binds_fraction`` (mean over replicates of the fraction of replay rows
        where min(target, online) is below the target, :class:`~quadriga_minto.learner.MINTO`)
        with its smallest and largest replicate.

    Raises:
        ConfigError: (when called) a missing stage or value.
    """

    def read(result: Any) -> Observations:
        values = result.results.get("stages", {}).get(stage, {}).get("values", {})
        arms: dict[str, dict[int, float]] = {}
        for key, value in values.items():
            subject, _, name = key.rpartition("/")
            parsed = parse_stage_name(subject) if name == metric and subject else None
            if parsed is not None and parsed.replicate is not None:
                arms.setdefault(str(parsed.base), {})[parsed.replicate] = float(value)
        for arm in ("minto", "dqn"):
            if arm not in arms:
                raise ConfigError(f"stage '{stage}' has no values '{arm}[i]/{metric}'.", key="metric")
        ordered = {a: [r[i] for i in sorted(r)] for a, r in arms.items()}
        binds = [
            float(art.info["min_binds_fraction"])
            for name, art in sorted(result.artifacts.items())
            if parse_stage_name(name).source == "minto" and "min_binds_fraction" in getattr(art, "info", {})
        ]
        numbers: dict[str, Any] = {metric: {"minto": ordered["minto"], "dqn": ordered["dqn"]}}
        if binds:
            numbers["minto/min_binds_fraction"] = math.fsum(binds) / len(binds)
            numbers["minto/min_binds_fraction_min"] = min(binds)
            numbers["minto/min_binds_fraction_max"] = max(binds)
        if "dqn-online" in ordered:
            online = ordered["dqn-online"]
            numbers[f"dqn-online/{metric}_mean"] = math.fsum(online) / len(online)
            numbers["dqn-online/replicates"] = len(online)
        return Observations(values={"minto": ordered["minto"], "dqn": ordered["dqn"]}, numbers=numbers)

    return read


def _keep(result: Any) -> Observations:
    return Observations(numbers={"result": result})


_RUNNER = Claim(
    pipeline=PIPELINE,
    arms=("minto", "dqn"),
    observe=_keep,
    effect=Effect(quantity="the run itself", statistic="difference", relation="greater", value=0.0),
    scales=_SCALES,
)
_RUNS: dict[tuple[Any, ...], tuple[Any, Path]] = {}


def shared_run(scale: Scale, out_dir: Path) -> tuple[Any, Path]:
    """The :class:`~quadriga.runs.RunResult` of ``acrobot-minto`` at ``scale``, run once per process.

    The core's claim runner (:meth:`quadriga.claims.Claim.observations`) repeats the ``minto`` and
    ``dqn`` stages ``scale.replicates`` times (replicate i of both shares its seed); later calls with
    the same scale return the same run, so the two claims are tested on the same learners.

    Args:
        scale: one of this module's scales.
        out_dir: where the run directory is made (under ``out_dir/run``) when it is first run.

    Returns:
        ``(result, run_dir_parent)``: the run and the directory of the claim that ran it.

    Raises:
        ConfigError: a scale that is not one of this module's.
    """
    key = (scale.replicates, scale.overrides, scale.seed)
    if key not in _RUNS:
        name = next((k for k, v in _SCALES.items() if v == scale), None)
        if name is None:
            raise ConfigError(f"scale {scale!r} is not one of {', '.join(_SCALES)}.", key="scale")
        _RUNS[key] = (_RUNNER.observations(name, out_dir).numbers["result"], Path(out_dir))
    return _RUNS[key]


def _experiment(stage: str, metric: str) -> Any:
    read = observe(stage, metric)

    def run(scale: Scale, out_dir: Path) -> Observations:
        result, where = shared_run(scale, out_dir)
        obs = read(result)
        obs.numbers["run"] = str(where / "run")
        return obs

    return run


auc_claim = Claim(
    arms=("minto", "dqn"),
    experiment=_experiment("return-curve", "auc"),
    also=("auc",),
    effect=Effect(
        quantity="area under the return curve on Acrobot-v1 (step-normalised, return units), "
        "IQM(MINTO) - IQM(DQN) over replicates (replicate i of both shares its seed)",
        statistic="iqm-difference",
        relation="greater",
        value=0.0,
    ),
    scales=_SCALES,
    tuning=_TUNING,
)
"""MINTO's area under the return curve on Acrobot-v1 is above DQN's (interquartile means over replicates)."""

overestimation_claim = Claim(
    arms=("minto", "dqn"),
    experiment=_experiment("q-overestimation", "q_overestimation"),
    effect=Effect(
        quantity="mean Q(s, a) - G(s) on greedy Acrobot-v1 episodes (return units), "
        "MINTO - DQN (paired by replicate)",
        statistic="difference",
        relation="less",
        value=0.0,
    ),
    scales=_SCALES,
    tuning=_TUNING,
)
"""MINTO's Q-overestimation on Acrobot-v1 is below DQN's (the min with the online network lowers targets)."""
