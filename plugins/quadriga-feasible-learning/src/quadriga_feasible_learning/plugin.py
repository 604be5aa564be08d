"""Registration of quadriga-feasible-learning's components, pipelines and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_PAPER = (
    "Ramirez, Hounie, Elenter, Gallego-Posada, Hashemizadeh, Ribeiro, Lacoste-Julien, "
    "AISTATS 2025, arXiv 2501.14912"
)


@quadriga.hookimpl
def quadriga_register(registry):
    """Register two learners (feasible-learning, erm), one evaluator, two pipelines and four claims."""
    registry.add(
        "learner",
        "feasible-learning",
        "quadriga_feasible_learning.learners:FeasibleLearning",
        summary=(
            "Feasible Learning: l_i <= eps for every training sample by primal-dual updates (resilient = "
            "true: minimal-norm slacks)"
        ),
        paper=f"{_PAPER}, eq. 1, eq. 4, Algorithm 1",
        tags=("supervised", "trains-network"),
    )
    registry.add(
        "learner",
        "erm",
        "quadriga_feasible_learning.learners:ERM",
        summary="ERM baseline of feasible-learning: same MLP, Adam, epochs and batches, mean loss",
        paper=f"{_PAPER}, sec. 2",
        tags=("supervised", "trains-network"),
    )
    registry.add(
        "evaluator",
        "loss-distribution",
        "quadriga_feasible_learning.evaluators:LossDistribution",
        summary=(
            "Per-sample train/test loss distribution (mean, max, quantiles, CVaR, fraction <= eps), "
            "accuracy or MSE, and the multipliers' distribution"
        ),
        paper=f"{_PAPER}, sec. 5",
        tags=("supervised",),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "fl-digits-tail",
        "quadriga_feasible_learning.claims:DIGITS_TAIL",
        summary="digits: FL's per-sample loss tail (max, q95, q99; train and test) is below ERM's",
        paper=f"{_PAPER}, sec. 5",
    )
    registry.add_claim(
        "fl-digits-accuracy",
        "quadriga_feasible_learning.claims:DIGITS_ACCURACY",
        summary="digits: FL's test accuracy is at most 1 point below ERM's",
        paper=f"{_PAPER}, sec. 5",
    )
    registry.add_claim(
        "fl-diabetes-tail",
        "quadriga_feasible_learning.claims:DIABETES_TAIL",
        summary="diabetes: FL's per-sample squared-error tail (max, q95, q99; train and test) is below ERM's",
        paper=f"{_PAPER}, sec. 5",
    )
    registry.add_claim(
        "fl-diabetes-mse",
        "quadriga_feasible_learning.claims:DIABETES_MSE",
        summary="diabetes: FL's test MSE is at most 5% above ERM's",
        paper=f"{_PAPER}, sec. 5",
    )
