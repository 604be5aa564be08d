"""Registration of quadriga-value-mapping (lazy: imports nothing heavy)."""

from __future__ import annotations

import quadriga

_PAPER = (
    "Fatemi & Tavakoli 2022, Orchestrated Value Mapping for Reinforcement Learning (ICLR, arXiv 2203.07171)"
)
_M = "quadriga_value_mapping"


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the tabular learner and its ready pipeline."""
    registry.add(
        "learner",
        "tabular-value-mapping",
        f"{_M}.tabular:TabularValueMapping",
        summary="Tabular Q-learning in a mapped (log-lin) space with reward channels and two step sizes",
        paper=f"{_PAPER}, Algorithm 1",
        tags=("discrete-actions", "rl"),
    )
    registry.add(
        "learner",
        "map-dqn",
        f"{_M}.deep:MapDQN",
        summary="DQN with per-channel heads in a log-lin mapped space and a regular-space step size",
        paper=f"{_PAPER}, Section 5",
        tags=("discrete-actions", "rl", "trains-network"),
    )
    registry.add_pipelines(__package__)
