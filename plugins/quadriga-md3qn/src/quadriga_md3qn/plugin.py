"""Registration of quadriga-md3qn (lazy: imports nothing heavy)."""

from __future__ import annotations

import quadriga

_PAPER = (
    "Zhang, Chen, Zhao, Xiong, Qin & Liu 2021, Distributional Reinforcement Learning for "
    "Multi-Dimensional Reward Functions (NeurIPS)"
)
_M = "quadriga_md3qn"


@quadriga.hookimpl
def quadriga_register(registry):
    """Register MD3QN, its per-source baseline, the ready pipeline and the claims."""
    registry.add(
        "learner",
        "md3qn",
        f"{_M}.learner:MD3QN",
        summary="Distributional DQN of the joint return vector over reward sources (particles, MMD^2)",
        paper=f"{_PAPER}, Algorithm 1",
        tags=("discrete-actions", "rl", "trains-network"),
    )
    registry.add(
        "learner",
        "mmdqn-per-source",
        f"{_M}.learner:PerSourceMMDQN",
        summary="Per-source MMD distributional heads (marginals only): MD3QN's baseline",
        paper="Nguyen et al. 2021 (MMDQN), per reward source",
        tags=("discrete-actions", "rl", "trains-network"),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "md3qn-joint-correlation",
        f"{_M}.claims:joint_correlation_claim",
        summary="MD3QN's joint-return correlation error is below per-source MMD heads' by 0.3 (paired seeds)",
        paper=f"{_PAPER}, Section 5.1",
    )
