"""Registration of quadriga-stratified-grpo's components (lazy: nothing heavy is imported here)."""

from __future__ import annotations

import quadriga

_P = "quadriga_stratified_grpo"
_PAPER = "Zhu et al. 2025, Stratified GRPO, arXiv 2510.06214"

COMPONENTS = [
    # kind, name, "module:attr", summary, paper
    (
        "environment",
        "search-agent",
        "task:SearchAgent",
        "Question answering with a costly noisy search tool (gymnasium quadriga/SearchAgent-v0)",
        "",
    ),
    (
        "environment",
        "multihop-search",
        "task:MultiHopSearch",
        "Multi-hop question answering: 0-2 searches set by the question's chain "
        "(gymnasium quadriga/MultiHopSearch-v0)",
        "",
    ),
    (
        "learner",
        "grpo",
        "grpo:GRPO",
        "Group Relative Policy Optimization (group-normalised advantage, clipped surrogate)",
        "Shao et al. 2024, DeepSeekMath, eq. 3-4",
    ),
    (
        "learner",
        "stratified-grpo",
        "grpo:StratifiedGRPO",
        "Stratified GRPO: Stratified Advantage Normalization blended with the global advantage",
        _PAPER,
    ),
    (
        "evaluator",
        "training-curves",
        "curves:TrainingCurves",
        "Return and tool-call curves with bands across seeds; final return and AUC with bootstrap intervals",
        "",
    ),
]

PIPELINES = [
    (
        "multihop-sgrpo",
        "pipelines/multihop-sgrpo.toml",
        "GRPO vs Stratified GRPO (alpha 0.5 and 1) on the multi-hop search agent, 10 seeds each",
    ),
    (
        "search-agent-sgrpo",
        "pipelines/search-agent-sgrpo.toml",
        "GRPO vs Stratified GRPO (alpha 0.5 and 1) on the search agent, 10 seeds each",
    ),
]

CLAIMS = [
    (
        "stratified-grpo-advantage-identities",
        "claims:advantage_identities",
        "On random reward tables, A_global = A_SAN + (R_k - R) exactly, SAN has zero mean and unit "
        "variance in "
        "every stratum of size >= 2, and Var[A_global] - Var[A_SAN] equals the between-stratum term",
        _PAPER + ", Proposition 1, Theorem 1",
    ),
    (
        "stratified-grpo-learning",
        "claims:learning",
        "Stratified GRPO (alpha = 0.5) reaches a higher final training-batch return and a higher "
        "greedy-evaluation return than GRPO on the multi-hop search agent (paired, Holm over the two)",
        _PAPER + ", sec. 5 (training rewards)",
    ),
]


#: capability tags of each component (quadriga.tags), found by `quadriga list --where TAG`
TAGS = {
    ("environment", "search-agent"): ("discrete-actions", "rl"),
    ("environment", "multihop-search"): ("discrete-actions", "rl"),
    ("learner", "grpo"): ("discrete-actions", "rl", "trains-network"),
    ("learner", "stratified-grpo"): ("discrete-actions", "rl", "trains-network"),
    ("evaluator", "training-curves"): ("rl",),
}


@quadriga.hookimpl
def quadriga_register(registry):
    """Register quadriga-stratified-grpo's components, pipelines and claims."""
    for kind, name, target, summary, paper in COMPONENTS:
        registry.add(
            kind,
            name,
            f"{_P}.{target}",
            summary=summary,
            paper=paper,
            tags=TAGS.get((kind, name), ()),
        )
    for name, path, summary in PIPELINES:
        registry.add_pipeline(name, f"{_P}:{path}", summary=summary)
    for name, target, summary, paper in CLAIMS:
        registry.add_claim(name, f"{_P}.{target}", summary=summary, paper=paper)
