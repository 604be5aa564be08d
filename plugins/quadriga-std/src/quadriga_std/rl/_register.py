"""Registration of the RL kit's components (lazy "module:attr" paths only)."""

from __future__ import annotations

from typing import Any

_P = "quadriga_std.rl"


def register(registry: Any) -> None:
    """Add the vector-reward chain task and the return-law and Q* evaluators."""
    registry.add(
        "environment",
        "vector-reward-chain",
        f"{_P}.vector_env:VectorRewardChain",
        summary="A chain whose reward has K sources with tunable correlation; exact tabular model",
        paper="Zhang et al. 2021 (MD3QN), Section 5.1 (correlated reward sources)",
        tags=("discrete-actions", "exact-target", "rl"),
    )
    registry.add(
        "evaluator",
        "return-distribution-error",
        f"{_P}.evaluators:ReturnDistributionError",
        summary="Learned joint return law vs Monte-Carlo: W1 per source, energy distance, correlation",
        paper="Zhang et al. 2021 (MD3QN), Section 5.1",
        tags=("rl", "two-sample"),
    )
    registry.add(
        "evaluator",
        "q-error",
        f"{_P}.evaluators:QError",
        summary="max |Q - Q*| (value iteration) on a task with an exact tabular model",
        paper="Watkins & Dayan 1992",
        tags=("exact-target", "rl"),
    )
    registry.add(
        "dataset",
        "offline-rl-dataset",
        f"{_P}.offline:OfflineRLDataset",
        summary="Offline transitions of an epsilon-greedy behaviour on a finite MDP, with (s, a) counts",
        paper="Levine et al. 2020 (offline RL review), Section 2; Chen & Jiang 2019, Assumption 1",
        tags=("discrete-actions", "exact-target", "rl"),
    )
    registry.add(
        "environment",
        "grid-maze",
        f"{_P}.graph_env:GridMaze",
        summary="A grid maze drawn in ASCII, deterministic moves; exact BFS distances between cells",
        paper="Cormen et al. 2009, Section 22.2 (BFS); the mazes of goal-conditioned RL",
        tags=("discrete-actions", "exact-target", "rl"),
    )
    registry.add(
        "environment",
        "discretized-mountain-car",
        f"{_P}.graph_env:DiscretizedMountainCar",
        summary="MountainCar-v0 dynamics on a (position, velocity) grid; exact BFS distances",
        paper="Wang et al. 2023 (QRL), discretized MountainCar analysis; gymnasium MountainCarEnv",
        tags=("discrete-actions", "exact-target", "rl"),
    )
    registry.add(
        "evaluator",
        "goal-success",
        f"{_P}.goals:GoalSuccess",
        summary="Fraction of start/goal pairs a goal-conditioned policy reaches within a step budget",
        paper="Andrychowicz et al. 2017 (HER); Wang et al. 2023 (QRL), Section 6",
        tags=("rl", "exact-target"),
    )
    registry.add(
        "evaluator",
        "goal-distance-correlation",
        f"{_P}.goals:GoalDistanceCorrelation",
        summary="Spearman correlation and MAE of a learned goal distance against BFS steps",
        paper="Wang et al. 2023 (QRL), discretized MountainCar analysis",
        tags=("rl", "exact-target"),
    )
