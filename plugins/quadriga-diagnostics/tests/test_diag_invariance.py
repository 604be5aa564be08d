"""diag-invariance: the map families, the identities of least squares and ridge, a learner with
no prediction, the pipeline and the claim at smoke scale."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_diagnostics.claims_part2 import invariance_linear
from quadriga_diagnostics.invariance import InvarianceCheck, invariance_deviations, random_map
from quadriga_std.randomdesign.learners import LeastSquares, Ridge

import quadriga.api
from quadriga.claims import evaluate_claim
from quadriga.registry import Registry


def test_random_maps_have_their_structure():
    rng = np.random.default_rng(0)
    p = random_map("permutation", 6, rng)
    assert np.array_equal(p.sum(0), np.ones(6)) and not np.array_equal(p, np.eye(6))
    q = random_map("orthogonal", 6, rng)
    assert np.allclose(q.T @ q, np.eye(6), atol=1e-12)
    a = random_map("invertible", 6, rng, condition=10.0)
    assert np.linalg.cond(a) == pytest.approx(10.0, rel=1e-9)
    with pytest.raises(ValueError):
        random_map("shear", 3, rng)


def test_identities_of_least_squares_and_ridge():
    rng = np.random.default_rng(1)
    X, Y, Xt = rng.standard_normal((40, 6)), rng.standard_normal((40, 3)), rng.standard_normal((10, 6))
    ls = invariance_deviations(LeastSquares(), X, Y, Xt, rng)
    assert max(ls.values()) < 1e-12
    rr = invariance_deviations(Ridge(penalty=0.5), X, Y, Xt, rng)
    assert rr["predictors/invertible"] > 1e-3
    assert max(v for k, v in rr.items() if k != "predictors/invertible") < 1e-12
    # the closed form of the ridge deviation under A: predictions of (XA, lam) vs X's
    A = random_map("invertible", 6, rng)
    n, lam = 40, 0.5
    w = np.linalg.solve(A.T @ X.T @ X @ A + n * lam * np.eye(6), A.T @ X.T @ Y)
    w0 = np.linalg.solve(X.T @ X + n * lam * np.eye(6), X.T @ Y)
    assert not np.allclose(Xt @ A @ w, Xt @ w0, atol=1e-6)


def test_evaluator_reports_prediction_and_agreement():
    v = (
        InvarianceCheck(learner={"use": "ridge-regression", "penalty": 0.1}, num_draws=2)
        .evaluate(generator=torch.Generator().manual_seed(0))
        .values
    )
    assert v["agreement"] == 1.0
    assert v["predicted/predictors/invertible"] == 0.0 and v["commutes/predictors/invertible"] == 0.0
    assert v["commutes/predictors/orthogonal"] == 1.0 and v["deviation/targets/invertible"] < 1e-12


def test_pipeline_runs_both_learners(tmp_path):
    res = quadriga.api.run(
        "diag-invariance", overrides=["stage.ls.num_draws=1", "stage.ridge.num_draws=1"], out=tmp_path / "run"
    )
    assert "ridge[spectrum=power-law]" in res.artifacts and "ls[spectrum=isotropic]" in res.artifacts


def test_invariance_claim_smoke(tmp_path):
    obs = invariance_linear.observations("smoke", tmp_path, Registry(use_env=False))
    assert obs.intervals["all cells"].estimate == 1.0
    assert obs.numbers["max_deviation_where_commuting_predicted"] < 1e-10
    assert obs.numbers["min_deviation_where_breaking_predicted"] > 1e-3
    assert evaluate_claim(invariance_linear, obs, "smoke")["status"] == "ran"
