"""diag-symmetric-sim: Hermite normalisation, power-sum feature moments, escape ordering, the
pipeline and the claim at smoke scale."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_diagnostics.claims_part2 import symmetric_escape
from quadriga_diagnostics.symmetric_sim import SymmetricSingleIndex, escape_times, hermite, power_sum_features

import quadriga.api
from quadriga.claims import evaluate_claim
from quadriga.registry import Registry
from quadriga.seeding import numpy_rng


def test_hermite_is_orthonormal_under_the_gaussian():
    t, w = np.polynomial.hermite_e.hermegauss(20)
    w = w / w.sum()
    gram = np.array([[np.sum(w * hermite(i, t) * hermite(j, t)) for j in range(1, 5)] for i in range(1, 5)])
    assert np.allclose(gram, np.eye(4), atol=1e-12)
    # derivative: d/dt He_3 / sqrt(6) = (3 t^2 - 3) / sqrt(6)
    assert hermite(3, np.array([2.0]), derivative=True)[0] == pytest.approx(9 / np.sqrt(6))


def test_power_sum_features_are_uncorrelated_with_unit_variance():
    z = power_sum_features(np.random.default_rng(0), 40_000, 16, 5)
    assert np.allclose(np.cov(z.T), np.eye(5), atol=0.03)
    assert np.allclose(z.mean(0), 0, atol=0.02)


def test_escape_is_slower_at_higher_exponent():
    t1 = escape_times(1, dim=8, n=32, replicates=16, lr=0.06, max_steps=3000, seed=0)
    t3 = escape_times(3, dim=8, n=32, replicates=16, lr=0.06, max_steps=3000, seed=0)
    assert not np.isnan(t1).any() and np.median(t3) > np.median(t1)


def test_evaluator_values():
    v = (
        SymmetricSingleIndex(dim=8, replicates=8, max_exponent=2)
        .evaluate(generator=torch.Generator().manual_seed(0))
        .values
    )
    assert v["escaped_share/1"] == 1.0 and v["log_ratio_low/2"] <= v["log_ratio/2"] <= v["log_ratio_high/2"]


def test_per_run_table_matches_the_escape_times_and_the_log_ratios():
    ev = SymmetricSingleIndex(
        dim=6, n_points=16, replicates=5, max_exponent=3, learning_rate=0.08, max_steps=3000
    )
    out = ev.evaluate(generator=torch.Generator().manual_seed(2))
    rows, v = out.tables["per_run"], out.values
    assert len(rows) == 2 * 2 * 5  # k = 2, 3 x (k, k - 1) x runs
    seed = int(numpy_rng(torch.Generator().manual_seed(2)).integers(2**31))
    logs = {}
    for k in (1, 2, 3):
        t = escape_times(k, dim=6, n=16, replicates=5, lr=0.08, max_steps=3000, seed=seed)
        logs[k] = np.log(np.where(np.isnan(t), 3000, t))
    for k in (2, 3):
        for label, at in (("k", k), ("k - 1", k - 1)):
            got = [r for r in rows if r["k"] == k and r["exponent"] == label]
            assert [r["run"] for r in got] == list(range(5))
            assert np.allclose([r["log_escape"] for r in got], logs[at], rtol=0, atol=1e-12)
        diff = [
            a["log_escape"] - b["log_escape"]
            for a, b in zip(
                [r for r in rows if r["k"] == k and r["exponent"] == "k"],
                [r for r in rows if r["k"] == k and r["exponent"] == "k - 1"],
                strict=True,
            )
        ]
        assert np.mean(diff) == pytest.approx(v[f"log_ratio/{k}"], rel=1e-12)
        assert np.mean(
            [r["log_escape"] for r in rows if r["k"] == k and r["exponent"] == "k"]
        ) == pytest.approx(v[f"escape_mean_log/{k}"], rel=1e-12)


def test_pipeline_runs(tmp_path):
    res = quadriga.api.run(
        "diag-symmetric-sim",
        overrides=["stage.sim.replicates=2", "stage.sim.max_exponent=2", "stage.sim.max_steps=500"],
        out=tmp_path / "run",
    )
    assert "sim[dim=32]" in res.artifacts


def test_symmetric_claim_smoke(tmp_path):
    obs = symmetric_escape.observations("smoke", tmp_path, Registry(use_env=False))
    assert obs.numbers["min_escaped_share"] == 1.0
    # smoke runs k = 1, 2: one comparison (k = 2 against 1), under its label; 4 paired runs per arm
    assert list(obs.values) == ["k=2"]
    assert set(obs.values["k=2"]) == {"k", "k - 1"} and all(len(v) == 4 for v in obs.values["k=2"].values())
    assert evaluate_claim(symmetric_escape, obs, "smoke")["status"] == "ran"
