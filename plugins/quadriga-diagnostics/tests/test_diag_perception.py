"""Perception-Lipschitz: the degradation, the Fréchet distance and the Gaussian frontier in closed
form, the evaluator, pipeline and claim at smoke scale."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_diagnostics.claims import perception_lipschitz_rank
from quadriga_diagnostics.perception import (
    SUBJECT,
    PerceptionLipschitz,
    frechet_distance,
    linear_frontier,
    load_digits_pairs,
    spearman,
)

from quadriga.claims import evaluate_claim
from quadriga.errors import ConfigError
from quadriga.registry import Registry


def test_pooling_averages_two_by_two_blocks():
    d = load_digits_pairs(0.0, np.random.default_rng(0))
    pool = d["pool"]
    assert np.allclose(pool.sum(1), 1.0) and np.allclose(pool @ np.ones(64), 1.0)
    img = d["x_test"][0].reshape(8, 8)
    assert d["y_test"][0][5] == pytest.approx(img[2:4, 2:4].mean())  # block (1, 1)
    assert d["x_train"].shape == (1258, 64) and d["y_test"].shape == (539, 16)


def test_frechet_distance_of_a_shift_and_a_scaling():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(400, 5)) @ rng.normal(size=(5, 5)) + 0.3
    assert frechet_distance(a, a) == pytest.approx(0.0, abs=1e-9)
    assert frechet_distance(a, a + np.array([1.0, 2.0, 0, 0, 0])) == pytest.approx(5.0, rel=1e-9)
    # b = c a: S_b = c^2 S_a, (S_a S_b)^{1/2} = c S_a, so the trace term is (1 - c)^2 tr S_a
    c, m = 2.5, a.mean(0)
    expected = (c - 1) ** 2 * (m @ m + np.trace(np.cov(a, rowvar=False)))
    assert frechet_distance(a, c * a) == pytest.approx(expected, rel=1e-9)


def test_frontier_ends_are_wiener_and_transport():
    d = load_digits_pairs(0.05, np.random.default_rng(2))
    f = linear_frontier(d, 0.05)
    cov = np.cov(d["x_train"], rowvar=False) + 1e-4 * np.eye(64)
    cov_y = d["pool"] @ cov @ d["pool"].T + 0.05**2 * np.eye(16)
    assert np.allclose(f["mmse"] @ cov_y, cov @ d["pool"].T, atol=1e-10)  # normal equations
    # the perception-optimal outputs have the images' covariance inside the MMSE range
    q, _ = np.linalg.qr(f["mmse"])
    out = f["perceptual"] @ cov_y @ f["perceptual"].T
    assert np.allclose(q.T @ out @ q, q.T @ cov @ q, atol=1e-8)
    assert np.linalg.norm(f["perceptual"], 2) > np.linalg.norm(f["mmse"], 2)


def test_spearman_and_refusals():
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert np.isnan(spearman([1, 1, 1], [1, 2, 3]))
    with pytest.raises(ConfigError):
        PerceptionLipschitz(positions=[0.0, 1.0])
    with pytest.raises(ConfigError):
        PerceptionLipschitz(positions=[0.0, 0.5, 1.5])


def test_evaluator_lipschitz_rises_as_perception_falls():
    v = (
        PerceptionLipschitz(positions=[0.0, 0.5, 1.0], num_replicates=2, noise_std=0.05)
        .evaluate(generator=torch.Generator().manual_seed(0))
        .values
    )
    assert v["lipschitz/a=1"] > v["lipschitz/a=0.5"] > v["lipschitz/a=0"]
    assert v["perception/a=1"] < v["perception/a=0"] and v["spearman"] < -0.7
    assert v["perception_drop"] < 1.0


def test_evaluator_table_per_replicate():
    m = PerceptionLipschitz(positions=[0.0, 0.4, 0.7, 1.0], num_replicates=3, noise_std=0.05).evaluate(
        generator=torch.Generator().manual_seed(3)
    )
    v, reps = m.values, m.tables["replicates"]
    assert [r["replicate"] for r in reps] == [0, 1, 2] and {r["subject"] for r in reps} == {SUBJECT}
    assert np.mean([r["spearman"] for r in reps]) == pytest.approx(v["spearman"], rel=1e-12)
    mean_a = np.mean([r["spearman_position_lipschitz"] for r in reps])
    assert mean_a == pytest.approx(v["spearman_position_lipschitz"], rel=1e-12)
    assert max(r["perception_ratio"] for r in reps) == pytest.approx(v["perception_drop"], rel=1e-12)
    assert max(r["consistency_ratio"] for r in reps) == pytest.approx(v["consistency_ratio"], rel=1e-12)
    # each replicate's Spearman is that of its own sweep rows (4 positions)
    for r in reps:
        sweep = [s for s in m.tables["sweep"] if s["replicate"] == r["replicate"]]
        expected = spearman([s["lipschitz"] for s in sweep], [s["perception"] for s in sweep])
        assert len(sweep) == 4 and r["spearman"] == pytest.approx(expected, abs=1e-12)


def test_pipeline_runs_both_noise_levels(tmp_path):
    import quadriga.api

    res = quadriga.api.run(
        "diag-perception-lipschitz",
        overrides=["stage.sr.positions=[0.0, 0.5, 1.0]", "stage.sr.num_replicates=2"],
        out=tmp_path / "run",
    )
    assert res.artifacts["sr[noise_std=0.05]"].values["spearman"] <= 1.0


def test_perception_claim_smoke(tmp_path):
    obs = perception_lipschitz_rank.observations("smoke", tmp_path, Registry(use_env=False))
    assert obs.numbers["perception_drop"] < 1.0
    # the replicates are the 2 rows of the noisy point; their mean is the evaluator's Spearman
    assert len(obs.values[SUBJECT]) == 2
    assert np.mean(obs.values[SUBJECT]) == pytest.approx(obs.numbers["spearman"], rel=1e-12)
    assert obs.table.count("\n") >= 4  # header, rule and the 3 positions
    rec = evaluate_claim(perception_lipschitz_rank, obs, "smoke")
    assert rec["status"] == "ran"
