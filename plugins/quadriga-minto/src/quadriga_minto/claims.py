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
random numbers) and the effect is computed on the replicates with :mod:`quadriga.stats`.

Source: Hendawy et al. 2025, "Use the Online Network If You Can" (arXiv 2510.02590), sec. 4-5.
"""

from __future__ import annotations

import math
import re
from typing import Any

from quadriga.claims import Claim, Effect, Observations, Scale, Tuning
from quadriga.errors import ConfigError

__all__ = [
    "METHODS",
    "PAPER_FRAMES",
    "PAPER_REPLICATES",
    "PIPELINE",
    "auc_claim",
    "observe",
    "overestimation_claim",
]

PIPELINE = "acrobot-minto"
METHODS = ("dqn", "dqn-online", "minto")
PAPER_FRAMES = 10_000
PAPER_REPLICATES = 12


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
_TUNING = {
    "minto": Tuning(1, "the dqn defaults (Adam 2.5e-3, target copy every 100 updates) with the MINTO target"),
    "dqn": Tuning(1, "the dqn defaults (Adam 2.5e-3, target copy every 100 updates)"),
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
            m = re.fullmatch(rf"(.+)\[(\d+)\]/{re.escape(metric)}", key)
            if m:
                arms.setdefault(m.group(1), {})[int(m.group(2))] = float(value)
        for arm in ("minto", "dqn"):
            if arm not in arms:
                raise ConfigError(f"stage '{stage}' has no values '{arm}[i]/{metric}'.", key="metric")
        ordered = {a: [r[i] for i in sorted(r)] for a, r in arms.items()}
        binds = [
            float(art.info["min_binds_fraction"])
            for name, art in sorted(result.artifacts.items())
            if name.startswith("minto[") and "min_binds_fraction" in getattr(art, "info", {})
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


auc_claim = Claim(
    pipeline=PIPELINE,
    arms=("minto", "dqn"),
    observe=observe("return-curve", "auc"),
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
    pipeline=PIPELINE,
    arms=("minto", "dqn"),
    observe=observe("q-overestimation", "q_overestimation"),
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
