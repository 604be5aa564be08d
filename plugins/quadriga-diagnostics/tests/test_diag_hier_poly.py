"""diag-hier-poly: the feature's moments and degree structure, kernel ridge against its closed form,
the samples-to-error read-out and the exponent fit on exact power laws, the pipeline and the claim
at smoke scale."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from quadriga_diagnostics.claims_hier import hier_poly_exponent
from quadriga_diagnostics.hier_poly import (
    HierarchicalPolynomial,
    hier_target,
    kernel_ridge_errors,
    quadratic_feature,
    sample_counts,
    samples_to_error,
    sphere_inputs,
    three_layer_errors,
)

import quadriga.api
from quadriga import stats
from quadriga.claims import evaluate_claim
from quadriga.errors import ConfigError
from quadriga.registry import Registry


def test_feature_has_unit_variance_on_the_sphere():
    x = sphere_inputs(np.random.default_rng(0), 200_000, 8)
    assert np.allclose(np.sum(x**2, 1), 8.0)
    p = quadratic_feature(x)
    # mean 0 and variance 1 exactly; Monte-Carlo s.e. about 0.003 (mean) and 0.005 (variance)
    assert abs(p.mean()) < 0.015 and abs(p.var() - 1.0) < 0.03


def test_low_degree_part_of_the_target_is_the_feature():
    # least squares of h on all monomials of degree <= 2 estimates P_{<=2} h; on the sphere with
    # A = diag(+-1) it is c p + const exactly, so the fit is explained by p alone
    rng = np.random.default_rng(1)
    d = 6
    x = sphere_inputs(rng, 60_000, d)
    h = hier_target(x, 2)
    cols = [np.ones(len(x))] + [x[:, i] for i in range(d)]
    cols += [x[:, i] * x[:, j] for i, j in itertools.combinations_with_replacement(range(d), 2)]
    design = np.column_stack(cols)
    fit = design @ np.linalg.lstsq(design, h, rcond=None)[0]
    p = quadratic_feature(x)
    r = np.corrcoef(fit, p)[0, 1]
    assert r**2 > 0.995
    # closed form: P_{<=2} h = p / sqrt(2) (E p^3 = 0 by the sign symmetry, Var p = 1), variance 1/2
    assert np.var(fit) == pytest.approx(0.5, abs=0.01)
    # the rest of h (degree 4, the kernel's hard part) carries a third of its variance at d = 6
    assert 0.25 < 1 - np.var(fit) / np.var(h) < 0.45


def test_kernel_ridge_matches_the_closed_form():
    from sklearn.metrics.pairwise import rbf_kernel

    rng = np.random.default_rng(2)
    x, xv, xt = (sphere_inputs(rng, n, 4) for n in (80, 50, 60))
    y, yv, yt = (hier_target(a, 2) for a in (x, xv, xt))
    alpha = 1e-2
    err = kernel_ridge_errors(x, y, xv, yv, xt, yt, penalties=[alpha])
    g = 1 / 8
    coef = np.linalg.solve(rbf_kernel(x, x, gamma=g) + alpha * np.eye(len(x)), y - y.mean())
    pred = rbf_kernel(xt, x, gamma=g) @ coef + y.mean()
    assert err == pytest.approx(np.mean((pred - yt) ** 2) / np.var(yt), rel=1e-8)


def test_samples_to_error_interpolates_in_log_n():
    ns = 64 * 2.0 ** np.arange(6)
    errors = 1.0 - 0.1 * np.log2(ns / 64)  # linear in log n: exact crossing
    assert samples_to_error(ns, errors, 0.75) == pytest.approx(64 * 2**2.5)
    assert samples_to_error(ns, errors, 1.5) == 64.0
    assert np.isnan(samples_to_error(ns, errors, 0.1))


def test_exponent_fit_recovers_exact_power_laws():
    dims = np.array([6, 8, 10, 12])
    for k in (2.0, 4.0):
        ci = stats.loglog_slope(dims, 3.0 * dims**k)
        assert ci.estimate == pytest.approx(k, abs=1e-10)
        reps = np.column_stack([3.0 * dims**k, 5.0 * dims**k])  # constant ratio: same slope
        assert stats.loglog_slope(dims, reps).estimate == pytest.approx(k, abs=1e-10)


def test_three_layer_learns_the_feature_in_both_first_stages():
    rng = np.random.default_rng(3)
    d = 8
    x, xv, xt = (sphere_inputs(rng, n, d) for n in (1000, 500, 500))
    y, yv, yt = (hier_target(a, 2) for a in (x, xv, xt))
    kw = {"width": 256, "outer_width": 64, "penalties": [1e-4, 1e-2]}
    err, r2 = three_layer_errors(x, y, xv, yv, xt, yt, rng=np.random.default_rng(0), **kw)
    assert r2 > 0.9 and err < 0.1
    # the paper's single gradient step estimates the same feature, with more variance
    _, r2_step = three_layer_errors(
        x, y, xv, yv, xt, yt, rng=np.random.default_rng(0), first_stage="one-step", **kw
    )
    assert 0.5 < r2_step < r2
    with pytest.raises(ValueError, match="first_stage"):
        three_layer_errors(x, y, xv, yv, xt, yt, rng=rng, first_stage="adam", **kw)


def test_sample_counts_stop_at_the_first_crossing():
    grid = [round(64 * 2 ** (j / 2)) for j in range(10)]
    out = sample_counts(
        6,
        link_degree=2,
        eps=0.3,
        n_grid=grid,
        penalties=[1e-4, 1e-2],
        width_factor=4.0,
        outer_width=32,
        mlp_width=32,
        mlp_epochs=5,
        n_eval=300,
        seed=0,
        arms=("three-layer", "kernel"),
    )
    for arm, errs in out["errors"].items():
        k = len(errs)
        assert errs[-1] <= 0.3 and all(e > 0.3 for e in errs[:-1])
        assert (grid[k - 2] if k > 1 else grid[0]) <= out["n_eps"][arm] <= grid[k - 1]
    assert out["feature_r2"] > 0.5


def test_evaluator_values_and_errors():
    v = (
        HierarchicalPolynomial(
            dims=[4, 6, 8], n_grid=[32, 64, 128, 256, 512], replicates=2, arms=["three-layer"]
        )
        .evaluate(generator=torch.Generator().manual_seed(0))
        .values
    )
    assert v["predicted_exponent/kernel"] == 4.0
    assert v["reached/three-layer/8"] == 1.0
    assert v["exponent_low/three-layer"] <= v["exponent/three-layer"] <= v["exponent_high/three-layer"]
    with pytest.raises(ConfigError, match="dims"):
        HierarchicalPolynomial(dims=[5, 6, 8])
    with pytest.raises(ConfigError, match="arms"):
        HierarchicalPolynomial(arms=["forest"])


def test_evaluator_per_seed_exponents():
    dims = [4, 6, 8]
    m = HierarchicalPolynomial(
        dims=dims, n_grid=[32, 64, 128, 256, 512], replicates=3, arms=["three-layer", "kernel"]
    ).evaluate(generator=torch.Generator().manual_seed(0))
    v, rows = m.values, m.tables["per_seed"]
    assert [(r["subject"], r["seed"]) for r in rows] == [
        (a, s) for a in ("three-layer", "kernel") for s in range(3)
    ]
    for arm in ("three-layer", "kernel"):
        exps = [r["exponent"] for r in rows if r["subject"] == arm]
        # the mean of per-seed least-squares slopes is the slope of log of the geometric means
        geo = [v[f"n_eps/{arm}/{d}"] for d in dims]
        assert np.isclose(np.mean(exps), np.polyfit(np.log(dims), np.log(geo), 1)[0], rtol=1e-10)
        assert v[f"reached/{arm}"] == np.mean([v[f"reached/{arm}/{d}"] for d in dims])
    assert 0.5 < v["min_feature_r2"] <= min(v[f"feature_r2/{d}"] for d in dims)


def test_pipeline_runs(tmp_path):
    res = quadriga.api.run(
        "diag-hier-poly",
        overrides=[
            "stage.poly.dims=[4, 6, 8]",
            "stage.poly.replicates=1",
            "stage.poly.n_grid=[32, 64, 128, 256, 512]",
            "stage.poly.arms=['three-layer']",
        ],
        out=tmp_path / "run",
    )
    assert "poly[eps=0.3]" in res.artifacts


def test_hier_poly_claim_smoke(tmp_path):
    obs = hier_poly_exponent.observations("smoke", tmp_path, Registry(use_env=False))
    assert obs.numbers["reached_share_three-layer"] == 1.0
    assert len(obs.values["kernel"]) == len(obs.values["three-layer"]) == 2
    assert evaluate_claim(hier_poly_exponent, obs, "smoke")["status"] == "ran"
