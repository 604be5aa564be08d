"""Registration of quadriga-stratified-grpo's components (lazy: nothing heavy is imported here)."""

from __future__ import annotations

import quadriga

_P = "quadriga_stratified_grpo"
_PAPER = "Zhu et al. 2025, Stratified GRPO, arXiv 2510.06214"


@quadriga.hookimpl
def quadriga_register(registry):
    """Register quadriga-stratified-grpo's components, pipelines and claims."""
    registry.add(
        "environment",
        "search-agent",
        f"{_P}.task:SearchAgent",
        summary="Question answering with a costly noisy search tool (gymnasium quadriga/SearchAgent-v0)",
        tags=("discrete-actions", "rl"),
    )
    registry.add(
        "environment",
        "multihop-search",
        f"{_P}.task:MultiHopSearch",
        summary=(
            "Multi-hop question answering: 0-2 searches set by the question's chain (gymnasium "
            "quadriga/MultiHopSearch-v0)"
        ),
        tags=("discrete-actions", "rl"),
    )
    registry.add(
        "learner",
        "grpo",
        f"{_P}.grpo:GRPO",
        summary="Group Relative Policy Optimization (group-normalised advantage, clipped surrogate)",
        paper="Shao et al. 2024, DeepSeekMath, eq. 3-4",
        tags=("discrete-actions", "rl", "trains-network"),
    )
    registry.add(
        "learner",
        "stratified-grpo",
        f"{_P}.grpo:StratifiedGRPO",
        summary="Stratified GRPO: Stratified Advantage Normalization blended with the global advantage",
        paper=f"{_PAPER}",
        tags=("discrete-actions", "rl", "trains-network"),
    )
    registry.add(
        "evaluator",
        "training-curves",
        f"{_P}.curves:TrainingCurves",
        summary=(
            "Return and tool-call curves with bands across seeds; final return and AUC with bootstrap "
            "intervals"
        ),
        tags=("rl",),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "stratified-grpo-advantage-identities",
        f"{_P}.claims:advantage_identities",
        summary=(
            "On random reward tables, A_global = A_SAN + (R_k - R) exactly, SAN has zero mean and unit "
            "variance in every stratum of size >= 2, and Var[A_global] - Var[A_SAN] equals the "
            "between-stratum term"
        ),
        paper=f"{_PAPER}, Proposition 1, Theorem 1",
    )
    registry.add_claim(
        "stratified-grpo-learning",
        f"{_P}.claims:learning",
        summary=(
            "Stratified GRPO (alpha = 0.5) reaches a higher final training-batch return and a higher "
            "greedy-evaluation return than GRPO on the multi-hop search agent (paired, Holm over the two)"
        ),
        paper=f"{_PAPER}, sec. 5 (training rewards)",
    )
