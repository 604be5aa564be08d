"""Registration of quadriga-pivotal-leverage's components, pipelines and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_P = "quadriga_pivotal_leverage"
_PAPER = (
    "Shimizu, Cheng, Musco & Weare, Improved Active Learning via Dependent Leverage Score Sampling, ICLR 2024"
)


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the active designs, the excess-risk evaluator, the pools, the pipelines and the claims."""
    registry.add(
        "sampler",
        "pivotal-leverage",
        f"{_P}.samplers:PivotalLeverage",
        summary=(
            "Active design: leverage-score marginals by pivotal sampling over a spatial tree, then weighted"
            " LS"
        ),
        paper=f"{_PAPER}, Algorithms 1-2",
        tags=("active-learning",),
    )
    registry.add(
        "sampler",
        "leverage-iid",
        f"{_P}.samplers:LeverageIID",
        summary=(
            "Baseline active design: independent Bernoulli leverage-score sampling (same marginals), "
            "weighted LS"
        ),
        paper=f"{_PAPER}, sec. 5",
        tags=("active-learning",),
    )
    registry.add(
        "sampler",
        "uniform",
        f"{_P}.samplers:Uniform",
        summary="Baseline active design: independent uniform sampling (p = k/n), least squares",
        paper=f"{_PAPER}, sec. 5",
        tags=("active-learning",),
    )
    registry.add(
        "evaluator",
        "excess-risk",
        f"{_P}.evaluators:ExcessRisk",
        summary=(
            "Risk ratio ||Ax~-b||^2 / min||Ax-b||^2 of each design's fit against the full-data least squares"
        ),
        paper=f"{_PAPER}, sec. 2",
        tags=("active-learning", "supervised"),
    )
    registry.add(
        "dataset",
        "legendre-regression",
        f"{_P}.tasks:LegendreRegression",
        summary=(
            "1-D pool: a fine grid on [-1, 1], Legendre features, Runge target (agnostic), optional noise"
        ),
        paper=f"{_PAPER}, sec. 5",
        tags=("active-learning", "supervised"),
    )
    registry.add(
        "dataset",
        "surrogate-2d",
        f"{_P}.tasks:Surrogate2D",
        summary="2-D pool: a square grid, total-degree Legendre features, a smooth surrogate target",
        paper=f"{_PAPER}, sec. 5",
        tags=("active-learning", "supervised"),
    )
    registry.add(
        "dataset",
        "diabetes-poly",
        f"{_P}.tasks:DiabetesPoly",
        summary="Real-data pool: scikit-learn's diabetes features with a degree-2 polynomial expansion",
        paper=f"{_PAPER}, sec. 5 (design); Efron et al. 2004 (data)",
        tags=("active-learning", "real-data", "supervised"),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "pivotal-excess-risk",
        f"{_P}.claims:EXCESS_RISK",
        summary=(
            "At equal budgets (k = 2d, d = 10, 20, 40) pivotal sampling has lower risk than i.i.d. leverage"
        ),
        paper=f"{_PAPER}, abstract and sec. 5",
    )
    registry.add_claim(
        "pivotal-fewer-samples",
        f"{_P}.claims:FEWER_SAMPLES",
        summary=(
            "Pivotal sampling needs at least 30% fewer labels than i.i.d. leverage to reach risk ratio 1.25"
        ),
        paper=f"{_PAPER}, abstract ('up to 50% fewer samples')",
    )
    registry.add_claim(
        "pivotal-linear-growth",
        f"{_P}.claims:LINEAR_GROWTH",
        summary=(
            "Labels to reach the target grow linearly in d for pivotal sampling (O(d): slope 1 +- 0.13)"
        ),
        paper=f"{_PAPER}, Theorem 1.2 (O(d) for polynomial regression)",
    )
