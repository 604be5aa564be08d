"""Registration of quadriga-pivotal-leverage's components, pipelines and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_P = "quadriga_pivotal_leverage"
_PAPER = (
    "Shimizu, Cheng, Musco & Weare, Improved Active Learning via Dependent Leverage Score Sampling, ICLR 2024"
)

COMPONENTS = [
    (
        "sampler",
        "pivotal-leverage",
        "samplers:PivotalLeverage",
        "Active design: leverage-score marginals by pivotal sampling over a spatial tree, then weighted LS",
        f"{_PAPER}, Algorithms 1-2",
    ),
    (
        "sampler",
        "leverage-iid",
        "samplers:LeverageIID",
        "Baseline active design: independent Bernoulli leverage-score sampling (same marginals), weighted LS",
        f"{_PAPER}, sec. 5",
    ),
    (
        "sampler",
        "uniform",
        "samplers:Uniform",
        "Baseline active design: independent uniform sampling (p = k/n), least squares",
        f"{_PAPER}, sec. 5",
    ),
    (
        "evaluator",
        "excess-risk",
        "evaluators:ExcessRisk",
        "Risk ratio ||Ax~-b||^2 / min||Ax-b||^2 of each design's fit against the full-data least squares",
        f"{_PAPER}, sec. 2",
    ),
    (
        "dataset",
        "legendre-regression",
        "tasks:LegendreRegression",
        "1-D pool: a fine grid on [-1, 1], Legendre features, Runge target (agnostic), optional noise",
        f"{_PAPER}, sec. 5",
    ),
    (
        "dataset",
        "surrogate-2d",
        "tasks:Surrogate2D",
        "2-D pool: a square grid, total-degree Legendre features, a smooth surrogate target",
        f"{_PAPER}, sec. 5",
    ),
    (
        "dataset",
        "diabetes-poly",
        "tasks:DiabetesPoly",
        "Real-data pool: scikit-learn's diabetes features with a degree-2 polynomial expansion",
        f"{_PAPER}, sec. 5 (design); Efron et al. 2004 (data)",
    ),
]

PIPELINES = [
    (
        "pivotal-legendre",
        "pipelines/pivotal-legendre.toml",
        "Legendre regression of Runge's function, d = 10, 20, 40, budgets 1.5d-12d: pivotal, i.i.d. "
        "leverage and uniform designs, 200 replicates",
    ),
    (
        "pivotal-surrogate-2d",
        "pipelines/pivotal-surrogate-2d.toml",
        "2-D surrogate (total degree 10, d = 66) and diabetes-poly (d = 66): pivotal vs i.i.d. "
        "leverage, 100 replicates",
    ),
]

CLAIMS = [
    (
        "pivotal-excess-risk",
        "claims:EXCESS_RISK",
        "At equal budgets (k = 2d, d = 10, 20, 40) pivotal sampling has lower risk than i.i.d. leverage",
        f"{_PAPER}, abstract and sec. 5",
    ),
    (
        "pivotal-fewer-samples",
        "claims:FEWER_SAMPLES",
        "Pivotal sampling needs at least 30% fewer labels than i.i.d. leverage to reach risk ratio 1.25",
        f"{_PAPER}, abstract ('up to 50% fewer samples')",
    ),
    (
        "pivotal-linear-growth",
        "claims:LINEAR_GROWTH",
        "Labels to reach the target grow linearly in d for pivotal sampling (O(d): slope 1 +- 0.13)",
        f"{_PAPER}, Theorem 1.2 (O(d) for polynomial regression)",
    ),
]


#: capability tags of each component (quadriga.tags), found by `quadriga list --where TAG`
TAGS = {
    ("sampler", "pivotal-leverage"): ("active-learning",),
    ("sampler", "leverage-iid"): ("active-learning",),
    ("sampler", "uniform"): ("active-learning",),
    ("evaluator", "excess-risk"): ("active-learning", "supervised"),
    ("dataset", "legendre-regression"): ("active-learning", "supervised"),
    ("dataset", "surrogate-2d"): ("active-learning", "supervised"),
    ("dataset", "diabetes-poly"): ("active-learning", "real-data", "supervised"),
}


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the active designs, the excess-risk evaluator, the pools, the pipelines and the claims."""
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
