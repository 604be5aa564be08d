"""Registration of quadriga-minto (lazy: imports nothing heavy)."""

from __future__ import annotations

import quadriga

_PAPER = "Hendawy et al. 2025, Use the Online Network If You Can (arXiv 2510.02590)"


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the MINTO learner, its ready pipelines and its claims."""
    registry.add(
        "learner",
        "minto",
        "quadriga_minto.learner:MINTO",
        summary="DQN with the MINTO target: max over actions of min(target, online) Q-values",
        paper=f"{_PAPER}",
        tags=("discrete-actions", "rl", "trains-network"),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "minto-auc",
        "quadriga_minto.claims:auc_claim",
        summary="MINTO's area under the return curve on Acrobot-v1 is above DQN's (IQM over seeds)",
        paper=f"{_PAPER}, sec. 5",
    )
    registry.add_claim(
        "minto-overestimation",
        "quadriga_minto.claims:overestimation_claim",
        summary="MINTO's Q-overestimation is below DQN's (target network) on Acrobot-v1",
        paper=f"{_PAPER}, sec. 4",
    )
