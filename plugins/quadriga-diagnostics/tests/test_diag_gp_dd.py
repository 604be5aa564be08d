"""diag-gp-dd: the predictive losses against closed forms, the marginal likelihood against the
Cholesky formula, the nested monotonicity, the pipeline and the claim at smoke scale."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_diagnostics.claims_part2 import gp_dd_monotone
from quadriga_diagnostics.gp_dd import (
    GPDimensionCurve,
    calibration_error,
    draw_problem,
    gaussian_crps,
    gaussian_nll,
    gp_dimension_curve,
)
from scipy import integrate
from scipy.stats import norm

import quadriga.api
from quadriga.claims import evaluate_claim
from quadriga.registry import Registry


def test_crps_and_nll_against_their_definitions():
    y, mu, s = np.array([0.3]), np.array([-0.2]), np.array([0.7])
    # CRPS = int (F(t) - 1{t >= y})^2 dt
    num = integrate.quad(lambda t: norm.cdf(t, mu[0], s[0]) ** 2, -np.inf, y[0])[0]
    num += integrate.quad(lambda t: (1 - norm.cdf(t, mu[0], s[0])) ** 2, y[0], np.inf)[0]
    assert gaussian_crps(y, mu, s) == pytest.approx(num, rel=1e-8)
    assert gaussian_nll(y, mu, s) == pytest.approx(-norm.logpdf(0.3, -0.2, 0.7), rel=1e-12)


def test_calibration_error_of_calibrated_and_overconfident_forecasts():
    rng = np.random.default_rng(0)
    y = rng.standard_normal(200_000)
    zeros, ones = np.zeros_like(y), np.ones_like(y)
    assert calibration_error(y, zeros, ones) < 0.005
    # std 0.5 for N(0, 1) data: coverage of level p is 2 Phi(Phi^-1(0.5 + p/2) / 2) - 1
    levels = np.arange(1, 10) / 10
    expected = np.mean(np.abs(2 * norm.cdf(norm.ppf(0.5 + levels / 2) / 2) - 1 - levels))
    assert calibration_error(y, zeros, 0.5 * ones) == pytest.approx(expected, abs=0.005)


def test_log_ml_is_the_cholesky_formula_and_nested_fits_are_monotone():
    from sklearn.gaussian_process import GaussianProcessRegressor

    X, y, Xt, yt = draw_problem(20, 50, 4, 0.3, np.random.default_rng(1))
    rows = gp_dimension_curve(X, y, Xt, yt)
    assert np.all(np.diff([r["log_ml"] for r in rows]) >= -1e-6)
    from quadriga_diagnostics.gp_dd import _kernel

    k = _kernel(1.3, [0.8, 2.0], 0.05)
    K = k(X[:, :2])
    L = np.linalg.cholesky(K)
    a = np.linalg.solve(L.T, np.linalg.solve(L, y))
    hand = -0.5 * y @ a - np.log(np.diag(L)).sum() - 0.5 * len(y) * np.log(2 * np.pi)
    gp = GaussianProcessRegressor(k, optimizer=None).fit(X[:, :2], y)
    assert gp.log_marginal_likelihood_value_ == pytest.approx(hand, rel=1e-10)


def test_evaluator_values():
    v = (
        GPDimensionCurve(dim=4, n_train=20, n_test=100)
        .evaluate(generator=torch.Generator().manual_seed(0))
        .values
    )
    assert v["min_log_ml_step"] >= -1e-6
    assert v["log_ml/2"] > v["log_ml/1"] + 1  # the relevant second covariate
    assert {"nll/4", "crps/4", "calibration/4", "nll_excess"} <= set(v)


def test_pipeline_runs(tmp_path):
    res = quadriga.api.run(
        "diag-gp-dd",
        overrides=["stage.gp.dim=3", "stage.gp.n_train=15", "stage.gp.n_test=30", "stage.gp.repeat=1"],
        out=tmp_path / "run",
    )
    assert any(k.startswith("gp") for k in res.artifacts)


def test_gp_claim_smoke(tmp_path):
    obs = gp_dd_monotone.observations("smoke", tmp_path, Registry(use_env=False))
    assert obs.numbers["min_log_ml_step"] >= -1e-6
    assert evaluate_claim(gp_dd_monotone, obs, "smoke")["status"] == "ran"
