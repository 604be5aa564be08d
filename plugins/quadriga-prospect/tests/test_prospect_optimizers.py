"""Objective oracles against finite differences; Prospect and the baselines against ridge and L-BFGS."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from quadriga_prospect.evaluators import curve_summary, relative_suboptimality
from quadriga_prospect.objective import SpectralRiskObjective
from quadriga_prospect.optimizers import METHODS, lbfgs_optimum, run_prospect
from quadriga_prospect.spectra import make_spectrum
from scipy.optimize import approx_fprime
from sklearn.linear_model import Ridge


def _problem(loss: str, n: int = 60, d: int = 4, spectrum: str = "superquantile", seed: int = 0, **kw):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w_true = rng.normal(size=d)
    if loss == "squared":
        y = X @ w_true + 0.3 * rng.normal(size=n)
    elif loss == "logistic":
        y = (rng.random(n) < 1 / (1 + np.exp(-X @ w_true))).astype(float)
    else:
        y = rng.integers(0, 3, size=n)
    spec = functools.partial(make_spectrum, spectrum, q=0.5)
    return SpectralRiskObjective(
        X=X, y=y, sigma=spec(n), loss=loss, n_class=3 if loss == "multinomial" else 1, spectrum=spec, **kw
    )


@pytest.mark.parametrize("loss", ["squared", "logistic", "multinomial"])
def test_gradients_match_finite_differences(loss):
    obj = _problem(loss)
    w = np.random.default_rng(1).normal(size=obj.dim) * 0.5
    G = obj.grads(w)
    for i in (0, 17, 59):
        fd = approx_fprime(w, lambda v, i=i: obj.losses(v)[i], 1e-7)
        np.testing.assert_allclose(G[i], fd, atol=1e-5)
        value, g = obj.loss_and_grad(w, i)
        assert value == pytest.approx(obj.losses(w)[i], rel=1e-12)
        np.testing.assert_allclose(g, G[i], atol=1e-12)
    _, grad = obj.value_and_grad(w)
    np.testing.assert_allclose(grad, approx_fprime(w, obj.value, 1e-7), atol=1e-5)


def test_uniform_spectrum_fixed_point_is_ridge_regression():
    obj = _problem("squared", spectrum="uniform", l2_reg=2.0)
    # F(w) = (1/2n) ||y - X w||^2 + (l2_reg / 2n) ||w||^2  <=>  Ridge(alpha = l2_reg) without intercept
    ridge = Ridge(alpha=2.0, fit_intercept=False, solver="cholesky").fit(obj.X, obj.y).coef_
    assert obj.value(ridge) == pytest.approx(
        0.5 * np.mean((obj.y - obj.X @ ridge) ** 2) + ridge @ ridge / obj.n
    )
    trace = run_prospect(obj, 0.05, 150, np.random.default_rng(0))
    np.testing.assert_allclose(trace.w, ridge, atol=1e-7)
    np.testing.assert_allclose(lbfgs_optimum(obj)[1], ridge, atol=1e-7)


@pytest.mark.parametrize("loss", ["squared", "logistic", "multinomial"])
def test_prospect_reaches_the_lbfgs_optimum_linearly(loss):
    curvatures = []
    for seed in range(3):
        obj = _problem(loss, n=200, seed=seed)
        f_star, _ = lbfgs_optimum(obj)
        trace = run_prospect(obj, 0.05, 60, np.random.default_rng(seed))
        rel = relative_suboptimality(trace.objective, f_star)
        s = curve_summary(rel, trace.grad_evals, obj.n, tol=1e-6, floor=1e-12)
        assert rel[-1] < 1e-9 and s["reached"] == 1.0 and s["passes_to_tol"] <= 25 and s["log10_rate"] < -0.25
        curvatures.append(s["curvature"])
    # a straight line on the log scale: the slope changes by less than half across the window, on average
    assert abs(np.mean(curvatures)) < 0.5


def test_variance_reduced_baselines_converge_and_minibatch_ones_stall():
    obj = _problem("squared")
    f_star, _ = lbfgs_optimum(obj)
    final = {}
    for name, lr in (("lsvrg", 0.05), ("saddle-saga", 0.05), ("sgd", 0.05), ("srda", 0.05)):
        trace = METHODS[name](obj, lr, 60, np.random.default_rng(0))
        assert not trace.diverged and len(trace.objective) == 61
        final[name] = relative_suboptimality(trace.objective, f_star)[-1]
    assert final["lsvrg"] < 1e-8 and final["saddle-saga"] < 1e-6
    # the batch spectral risk is a biased estimate of the full one: SGD and SRDA plateau
    assert final["sgd"] > 1e-4 and final["srda"] > 1e-4


def test_divergence_is_flagged():
    trace = run_prospect(_problem("squared"), 50.0, 5, np.random.default_rng(0))
    assert trace.diverged and len(trace.objective) < 7


def test_curve_summary_of_a_geometric_curve():
    rel = 10.0 ** (-0.5 * np.arange(31))
    s = curve_summary(rel, list(range(0, 31 * 10, 10)), 10, tol=1e-6, floor=1e-12)
    assert s["passes_to_tol"] == 12 and s["grad_passes_to_tol"] == 12 and s["reached"] == 1
    assert s["log10_rate"] == pytest.approx(-0.5) and s["curvature"] == pytest.approx(0.0, abs=1e-9)
    never = curve_summary(1.0 / (1.0 + np.arange(11.0)), list(range(0, 110, 10)), 10, tol=1e-6, floor=1e-12)
    assert never["reached"] == 0 and never["passes_to_tol"] == 11 and never["curvature"] < -0.5
