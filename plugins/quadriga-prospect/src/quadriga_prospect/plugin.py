"""Registration of quadriga-prospect's components, pipelines and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_P = "quadriga_prospect"
_PAPER = (
    "Mehta, Roulet, Pillutla & Harchaoui, Distributionally Robust Optimization "
    "with Bias and Variance Reduction, ICLR 2024"
)

COMPONENTS = [
    (
        "learner",
        "prospect",
        "learners:Prospect",
        "Prospect: bias- and variance-reduced stochastic spectral-risk minimization with one step size",
        f"{_PAPER}, Alg. 1",
    ),
    (
        "learner",
        "sgd-spectral",
        "learners:SGD",
        "Minibatch SGD on the batch spectral risk (biased baseline)",
        f"{_PAPER}, sec. 5",
    ),
    (
        "learner",
        "srda",
        "learners:SRDA",
        "Stochastic regularized dual averaging on minibatch spectral-risk gradients",
        f"{_PAPER}, sec. 5; Xiao 2010",
    ),
    ("learner", "lsvrg", "learners:LSVRG", "SVRG with sample weights frozen per epoch", f"{_PAPER}, sec. 5"),
    (
        "learner",
        "saddle-saga",
        "learners:SaddleSAGA",
        "Saddle-point SAGA on the primal-dual spectral-risk problem",
        f"{_PAPER}, sec. 5; Palaniappan & Bach 2016",
    ),
    (
        "dataset",
        "spectral-risk-data",
        "tasks:SpectralRiskData",
        "diabetes / breast_cancer / wine / synthetic shift with a chi^2-penalized spectral-risk objective",
        f"{_PAPER}, sec. 2 and 5",
    ),
    (
        "evaluator",
        "spectral-suboptimality",
        "evaluators:SpectralSuboptimality",
        "Relative suboptimality vs passes against an L-BFGS optimum; passes to 1e-6, log-linear rate",
        f"{_PAPER}, sec. 5",
    ),
]

PIPELINES = [
    (
        "prospect-diabetes",
        "pipelines/prospect-diabetes.toml",
        "Superquantile regression on load_diabetes: Prospect, SGD, SRDA, LSVRG, Saddle-SAGA, one tuning grid",
    ),
    (
        "prospect-classification",
        "pipelines/prospect-classification.toml",
        "Superquantile logistic (breast_cancer) and extremile multinomial (wine) regression, all tuned",
    ),
]

CLAIMS = [
    (
        "prospect-linear-rate",
        "claims:LINEAR_RATE",
        "Prospect's log suboptimality falls linearly, 0.12 decades per pass faster than SGD's (diabetes)",
        f"{_PAPER}, Thm. 1",
    ),
    (
        "prospect-linear-curvature",
        "claims:LINEAR_CURVATURE",
        "Prospect's log-suboptimality curve is straight: the slope changes by less than half across the fit",
        f"{_PAPER}, Thm. 1",
    ),
    (
        "prospect-passes-diabetes",
        "claims:PASSES_DIABETES",
        "Prospect needs at most half the passes of saddle-point SAGA to reach 1e-6 suboptimality (diabetes)",
        f"{_PAPER}, abstract and Fig. 2",
    ),
    (
        "prospect-passes-breast-cancer",
        "claims:PASSES_BREAST_CANCER",
        "Prospect needs at most half the passes of saddle-point SAGA to 1e-6 suboptimality (breast cancer)",
        f"{_PAPER}, abstract",
    ),
    (
        "prospect-passes-wine",
        "claims:PASSES_WINE",
        "Prospect needs at most half the passes of saddle-point SAGA to reach 1e-6 suboptimality (wine)",
        f"{_PAPER}, abstract",
    ),
]


#: capability tags of each component (quadriga.tags), found by `quadriga list --where TAG`
TAGS = {
    ("learner", "prospect"): ("optimization", "supervised"),
    ("learner", "sgd-spectral"): ("optimization", "supervised"),
    ("learner", "srda"): ("optimization", "supervised"),
    ("learner", "lsvrg"): ("optimization", "supervised"),
    ("learner", "saddle-saga"): ("optimization", "supervised"),
    ("dataset", "spectral-risk-data"): ("covariate-shift", "optimization", "real-data", "supervised"),
    ("evaluator", "spectral-suboptimality"): ("optimization",),
}


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the five optimizers, the task, the evaluator, the pipelines and the claims."""
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
