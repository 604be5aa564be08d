"""diag-var-complexity: the Taylor feature map against the truncated series, exact block-causal
attention against scipy's softmax, the remainder bound as an upper bound, the threshold, the
evaluator, the pipeline and the claim at smoke scale."""

from __future__ import annotations

from math import comb, factorial

import numpy as np
import pytest
from quadriga_diagnostics.claims_scaling import VAR_TOLERANCE, var_threshold
from quadriga_diagnostics.var_complexity import (
    VAR_PATCH_NUMS,
    VARComplexity,
    block_causal_attention,
    degree_for_rank,
    lowrank_block_causal_attention,
    monomial_exponents,
    output_error_bound,
    taylor_features,
    taylor_remainder_bound,
    threshold_norm,
    var_row,
    var_scales,
)
from scipy.special import softmax

import quadriga.api
from quadriga.claims import evaluate_claim
from quadriga.errors import ConfigError
from quadriga.registry import Registry


def test_feature_map_is_the_truncated_taylor_series():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(5, 3)), rng.normal(size=(7, 3))
    t = q @ k.T / np.sqrt(3)
    for g in (0, 1, 3, 5):
        fq, fk = taylor_features(q, g), taylor_features(k, g)
        assert fq.shape[1] == comb(3 + g, g) == len(monomial_exponents(3, g))
        series = sum(t**j / factorial(j) for j in range(g + 1))
        assert np.allclose(fq @ fk.T, series, rtol=1e-12, atol=1e-12)


def test_exact_attention_matches_masked_softmax():
    rng = np.random.default_rng(1)
    sides = [1, 2, 3]
    L = 14
    q, k, v = rng.normal(size=(L, 4)), rng.normal(size=(L, 4)), rng.normal(size=(L, 2))
    block = np.repeat([0, 1, 2], [1, 4, 9])
    logits = np.where(block[None, :] <= block[:, None], q @ k.T / 2.0, -np.inf)
    assert np.allclose(block_causal_attention(q, k, v, sides), softmax(logits, axis=1) @ v, atol=1e-14)
    # a high degree at small entries reproduces it
    small = 0.3 * q, 0.3 * k
    approx = lowrank_block_causal_attention(*small, v, sides, 12)
    assert np.allclose(approx, block_causal_attention(*small, v, sides), atol=1e-12)


def test_remainder_bound_is_an_upper_bound():
    t_max, g = 1.7, 3
    t = np.linspace(-t_max, t_max, 2001)
    series = sum(t**j / factorial(j) for j in range(g + 1))
    rel = np.abs(np.exp(t) - series) / np.exp(t)
    eps = taylor_remainder_bound(t_max, g)
    assert rel.max() <= eps and rel.max() > eps / np.exp(t_max) / 2  # tight within e^T
    rng = np.random.default_rng(2)
    for norm in (0.3, 0.5, 0.7):
        r = var_row(8, 4, norm, 3, rng)
        assert r["error"] <= r["bound_at_t_max"] <= r["bound"]
        assert r["t_max"] == pytest.approx(2 * norm**2)  # +-B entries attain sqrt(d) B^2


def test_threshold_and_degree():
    assert var_scales(16) == list(VAR_PATCH_NUMS)
    assert degree_for_rank(4, 64) == 3 and degree_for_rank(4, 70) == 4 and degree_for_rank(4, 0.5) == 0
    b = threshold_norm(4, 3, 0.05)
    assert output_error_bound(taylor_remainder_bound(2 * b**2, 3)) == pytest.approx(0.05, rel=1e-9)
    assert output_error_bound(1.0) == float("inf")
    with pytest.raises(ConfigError):
        threshold_norm(4, 3, 1.5)
    with pytest.raises(ConfigError):
        var_scales(1)


def test_evaluator_breaks_above_threshold():
    v = VARComplexity(sizes=[16], draws=2, multipliers=[1.0, 2.0]).evaluate().values
    assert v["error_max/16/1"] <= VAR_TOLERANCE < v["error_min/16/2"]
    assert v["rank/16"] == comb(4 + 3, 3) and v["tokens/16"] == sum(s * s for s in VAR_PATCH_NUMS)
    assert v["cost_ratio/16"] > 1


def test_pipeline_runs(tmp_path):
    res = quadriga.api.run(
        "diag-var-complexity",
        overrides=["stage.var.sizes=[8]", "stage.var.draws=1"],
        out=tmp_path / "run",
    )
    assert "var[rank_exponent=1.5]" in res.artifacts


def test_var_claim_smoke(tmp_path):
    obs = var_threshold.observations("smoke", tmp_path, Registry(use_env=False))
    assert obs.numbers["largest_error_over_bound"] <= 1.0
    assert obs.numbers["largest_error_below"] <= VAR_TOLERANCE < obs.numbers["smallest_error_above"]
    assert evaluate_claim(var_threshold, obs, "smoke")["status"] == "ran"
