"""The random-design kit: covariances, exact ridge risks against Monte Carlo, the inverse-Wishart
least-squares risk, the deterministic equivalent, and the linear learners against scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_std.randomdesign.design import (
    conditional_ridge_risk,
    covariance,
    excess_risk,
    least_squares_expected_risk,
    planted_signal,
    ridge_coefficients,
    ridge_deterministic_equivalent,
    sample_design,
)
from quadriga_std.randomdesign.learners import LeastSquares, Ridge
from quadriga_std.randomdesign.task import ArrayRegression, RandomDesign

from quadriga.errors import ConfigError


def test_covariance_spectra():
    eig = np.linalg.eigvalsh(covariance("equicorrelated", 6, rho=0.3))
    assert np.allclose(eig, [0.7] * 5 + [1 + 5 * 0.3])
    assert np.allclose(np.diag(covariance("power-law", 4, exponent=2.0)), [1, 1 / 4, 1 / 9, 1 / 16])
    assert np.array_equal(covariance("isotropic", 3), np.eye(3))
    with pytest.raises(ConfigError, match="rho"):
        covariance("equicorrelated", 5, rho=-0.3)
    with pytest.raises(ConfigError, match="spectrum"):
        covariance("toeplitz", 5)


def test_planted_signal_norms():
    rng = np.random.default_rng(0)
    b = planted_signal(50, rng, signal="power-law", norm=2.0, exponent=1.5, num_outputs=3)
    assert b.shape == (50, 3) and np.allclose(np.linalg.norm(b, axis=0), 2.0)
    assert np.allclose(np.abs(b[:, 0]) / np.abs(b[0, 0]), np.arange(1, 51) ** -0.75)


def test_least_squares_risk_is_the_inverse_wishart_mean():
    # E[risk] = noise^2 d / (n - d - 1) for any covariance: 1 * 8 / 21
    rng = np.random.default_rng(1)
    n, d = 30, 8
    cov = covariance("equicorrelated", d, rho=0.6)
    b = planted_signal(d, rng)
    risks = [
        conditional_ridge_risk(sample_design(n, cov, rng), b, cov, 1.0, 0.0)["risk"] for _ in range(4000)
    ]
    se = np.std(risks) / np.sqrt(len(risks))
    assert abs(np.mean(risks) - least_squares_expected_risk(n, d, 1.0)) < 4 * se
    with pytest.raises(ConfigError):
        least_squares_expected_risk(9, 8, 1.0)


def test_conditional_ridge_risk_against_monte_carlo_over_noise():
    rng = np.random.default_rng(2)
    n, d, lam, noise = 40, 60, 0.05, 0.7
    cov = covariance("power-law", d, exponent=1.0)
    b = planted_signal(d, rng, signal="power-law")
    X = sample_design(n, cov, rng)
    exact = conditional_ridge_risk(X, b, cov, noise, lam)
    mc = [
        excess_risk(ridge_coefficients(X, X @ b[:, 0] + noise * rng.standard_normal(n), lam), b, cov)
        for _ in range(3000)
    ]
    se = np.std(mc) / np.sqrt(len(mc))
    assert abs(np.mean(mc) - exact["risk"]) < 4 * se
    assert exact["bias"] > 0 and exact["variance"] > 0


def test_deterministic_equivalent_matches_the_exact_risk_in_high_dimension():
    ds = RandomDesign(spectrum="power-law", dim=300, n_train=600, noise=0.5, exponent=1.0, signal="power-law")
    ds.prepare(generator=torch.Generator().manual_seed(0))
    exact, pred = ds.ridge_risk(1e-3), ds.predicted_ridge_risk(1e-3)
    assert pred["risk"] == pytest.approx(exact["risk"], rel=0.05)
    # ridgeless, n > d: kappa = 0 and variance noise^2 d / (n - d)
    r = ridge_deterministic_equivalent(np.ones(10), np.ones(10), 1.0, 0.0, 30)
    assert r["kappa"] == 0 and r["variance"] == pytest.approx(10 / 20) and r["bias"] == 0


def test_ridge_coefficients_match_scikit_learn():
    from sklearn.linear_model import Ridge as SkRidge

    rng = np.random.default_rng(3)
    X = rng.standard_normal((25, 40))
    Y = rng.standard_normal((25, 2))
    lam = 0.3
    ours = ridge_coefficients(X, Y, lam)
    sk = SkRidge(alpha=25 * lam, fit_intercept=False, solver="svd").fit(X, Y).coef_.T
    assert np.allclose(ours, sk, atol=1e-10)
    assert np.allclose(ridge_coefficients(X[:, :5], Y, 0.0), np.linalg.lstsq(X[:, :5], Y, rcond=None)[0])


def test_learners_fit_the_dataset_and_predict():
    ds = RandomDesign(dim=5, n_train=200, noise=0.0, num_outputs=2)
    ds.prepare(generator=torch.Generator().manual_seed(0))
    fit = LeastSquares().fit(ds)
    assert np.allclose(fit.model["coef"], ds.coef, atol=1e-10)  # noiseless: exact recovery
    X, _ = ds.split("test")
    assert np.allclose(fit.predict(X), X @ ds.coef, atol=1e-10)
    assert torch.is_tensor(fit.predict(torch.as_tensor(X)))
    ridge = Ridge(penalty=0.2).fit(ArrayRegression(X_train=X, y_train=X @ ds.coef))
    assert np.allclose(ridge.model["coef"], ridge_coefficients(X, X @ ds.coef, 0.2))
    with pytest.raises(ConfigError):
        Ridge(penalty=-1.0)
    with pytest.raises(ConfigError):
        RandomDesign().ridge_risk(0.1)
