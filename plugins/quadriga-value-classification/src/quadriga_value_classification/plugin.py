"""Registration of quadriga-value-classification (lazy: imports nothing heavy)."""

from __future__ import annotations

import quadriga

_PAPER = (
    "Farebrother et al. 2024, Stop Regressing: Training Value Functions via Classification "
    "for Scalable Deep RL (ICML, arXiv 2403.03950)"
)
_M = "quadriga_value_classification"


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the two learners, the ready pipelines and the claims."""
    registry.add(
        "learner",
        "dqn-hlgauss",
        f"{_M}.learner:DQNHLGauss",
        summary="DQN with a categorical Q head trained by cross-entropy against HL-Gauss target histograms",
        paper=f"{_PAPER}",
        tags=("discrete-actions", "rl", "trains-network"),
    )
    registry.add(
        "learner",
        "dqn-twohot",
        f"{_M}.learner:DQNTwoHot",
        summary="DQN with a categorical Q head trained by cross-entropy against two-hot targets",
        paper=f"{_PAPER}",
        tags=("discrete-actions", "rl", "trains-network"),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "value-classification-noisy-auc",
        f"{_M}.claims:noisy_auc_claim",
        summary="Under reward noise, HL-Gauss DQN's return AUC beats MSE DQN's on CartPole-v1 (IQM, seeds)",
        paper=f"{_PAPER}, abstract (robustness to noisy targets)",
    )
    registry.add_claim(
        "value-classification-noise-interaction",
        f"{_M}.claims:noise_interaction_claim",
        summary="HL-Gauss's AUC gain over MSE is larger with reward noise than without (paired interaction)",
        paper=f"{_PAPER}, abstract and noisy-target analysis (robustness to noisy targets)",
    )
    registry.add_claim(
        "value-classification-width-gap",
        f"{_M}.claims:width_gap_claim",
        summary="The HL-Gauss - MSE return-AUC gap is larger with a 512-512 trunk than with 128-128",
        paper=f"{_PAPER}, abstract (classification scales better with network size)",
    )
