"""The registered components: conformance, the task's splits, tuning, the evaluator's metrics and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_prospect.evaluators import SpectralSuboptimality
from quadriga_prospect.learners import LR_GRID, SGD, Prospect, SaddleSAGA
from quadriga_prospect.optimizers import lbfgs_optimum
from quadriga_prospect.tasks import SpectralRiskData

from quadriga.errors import ConfigError
from quadriga.testing import check_component

LEARNERS = ["prospect", "sgd-spectral", "srda", "lsvrg", "saddle-saga"]


@pytest.mark.parametrize("name", LEARNERS)
def test_learners_conform(name):
    check_component("learner", name)


def test_task_conforms():
    check_component("dataset", "spectral-risk-data", params={"dataset": "wine"})


def test_evaluator_conforms():
    check_component("evaluator", "spectral-suboptimality", params={"figure": False})


def _task(**kw) -> SpectralRiskData:
    task = SpectralRiskData(**kw)
    task.prepare(generator=torch.Generator().manual_seed(0))
    return task


@pytest.mark.parametrize(
    ("dataset", "rows", "cols", "loss", "classes"),
    [
        ("diabetes", 354, 11, "squared", 1),
        ("breast_cancer", 455, 31, "logistic", 1),
        ("wine", 142, 14, "multinomial", 3),
        ("shift-regression", 500, 11, "squared", 1),
    ],
)
def test_task_splits_are_standardized_on_train(dataset, rows, cols, loss, classes):
    task = _task(dataset=dataset)
    X, y = task.split("train")
    assert X.shape == (rows, cols) and task.loss == loss and task.n_class == classes
    np.testing.assert_allclose(X[:, :-1].mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(X[:, :-1].std(axis=0), 1, atol=1e-12)
    assert np.all(X[:, -1] == 1)
    if loss == "squared":
        assert y.mean() == pytest.approx(0, abs=1e-12) and y.std(ddof=1) == pytest.approx(1)
    obj = task.objective("train")
    assert (
        obj.sigma.sum() == pytest.approx(1)
        and obj.nu == pytest.approx(rows)
        and obj.mu == pytest.approx(1 / rows)
    )
    with pytest.raises(KeyError, match="valid: train, test"):
        task.split("calibration")


def test_shift_regression_has_more_minority_rows_in_test():
    task = _task(dataset="shift-regression", noise=0.0, shift=3.0)
    # with noise 0 the residuals of the majority fit are 0 exactly on majority rows
    X, y = task.split("train")
    Xt, yt = task.split("test")
    w = np.linalg.lstsq(X, y, rcond=None)[0]
    assert np.mean(np.abs(yt - Xt @ w) > 0.5) > np.mean(np.abs(y - X @ w) > 0.5) + 0.2


def test_bad_task_parameters_name_the_key():
    with pytest.raises(ConfigError, match="dataset"):
        SpectralRiskData(dataset="yacht")
    with pytest.raises(ConfigError, match="q"):
        SpectralRiskData(q=1.0)
    with pytest.raises(ConfigError, match="learning_rate_grid"):
        Prospect(learning_rate_grid=[0.1, -1.0])
    with pytest.raises(ConfigError, match="task"):
        Prospect(num_epochs=1).fit(object(), generator=torch.Generator().manual_seed(0))


def test_tuning_runs_the_whole_grid_and_keeps_the_best_on_common_streams():
    task = _task(dataset="wine")
    gen = lambda: torch.Generator().manual_seed(3)  # noqa: E731
    tuned = Prospect(num_epochs=15, tune=True, learning_rate_grid=[0.01, 0.05, 0.2]).fit(
        task, generator=gen()
    )
    assert tuned.info["settings_tried"] == 3 and tuned.info["lr"] in (0.01, 0.05, 0.2)
    fixed = {
        lr: Prospect(num_epochs=15, learning_rate=lr).fit(task, generator=gen()) for lr in (0.01, 0.05, 0.2)
    }
    # the tuned fit is the run of its chosen lr on the same stream
    assert tuned.history["objective"] == fixed[tuned.info["lr"]].history["objective"]
    assert tuned.history["objective"][-1] == pytest.approx(
        min(f.history["objective"][-1] for f in fixed.values())
    )
    assert len(LR_GRID) == 8 and SGD().learning_rate_grid == LR_GRID == SaddleSAGA().learning_rate_grid


def test_evaluator_metrics_against_lbfgs():
    task = _task(dataset="diabetes")
    gen = torch.Generator().manual_seed(0)
    fits = {
        "prospect[0]": Prospect(num_epochs=40, learning_rate=0.03).fit(task, generator=gen),
        "sgd[0]": SGD(num_epochs=40, learning_rate=0.03).fit(task, generator=gen),
    }
    metrics = SpectralSuboptimality(figure=True).evaluate(fits, task, generator=gen)
    v = metrics.values
    f_star, _ = lbfgs_optimum(task.objective("train"))
    assert v["optimum"] == pytest.approx(f_star, rel=1e-10) and v["lbfgs_excess"] < 1e-12
    assert v["prospect[0]/reached"] == 1 and v["prospect[0]/passes_to_tol"] <= 30
    assert v["prospect[0]/log10_rate"] < -6 / 40  # reached 1e-6 within 40 passes
    # the rate fit by hand: passes 10..40 (burn-in 0.25 of 41), log10 relative gap against F*
    hist = np.asarray(fits["prospect[0]"].history["objective"])
    y = np.log10((hist - f_star) / (hist[0] - f_star))[10:]
    slope = np.polyfit(np.arange(10, 41), y, 1)[0]
    quad = np.polyfit(np.arange(10, 41), y, 2)[0]
    assert v["prospect[0]/log10_rate"] == pytest.approx(slope, rel=1e-6)
    assert v["prospect[0]/curvature"] == pytest.approx(2 * quad * 30 / slope, rel=1e-6)
    assert v["sgd[0]/reached"] == 0 and v["sgd[0]/passes_to_tol"] == 41 and v["sgd[0]/suboptimality"] > 1e-4
    final = task.objective("train").value(fits["prospect[0]"].model.numpy())
    assert final == pytest.approx(fits["prospect[0]"].history["objective"][-1], rel=1e-12)
    assert "curves" in metrics.figures and len(metrics.tables["suboptimality"]) == 2


def test_evaluator_refuses_a_subject_fit_to_another_objective():
    gen = torch.Generator().manual_seed(0)
    fit = Prospect(num_epochs=2).fit(_task(dataset="wine", spectrum="extremile"), generator=gen)
    with pytest.raises(ConfigError, match="reference"):
        SpectralSuboptimality().evaluate({"p": fit}, _task(dataset="wine"), generator=gen)
