"""The claims at smoke scale: the pipeline runs end to end and every number is finite."""

from __future__ import annotations

import math

from quadriga_minto.claims import auc_claim, bootstrap_mean_difference, overestimation_claim


def test_bootstrap_interval_covers_a_known_difference():
    diff, low, high = bootstrap_mean_difference([1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 2.0, 3.0])
    assert diff == 1.0 and low < 1.0 < high and high - low < 4.0


def test_smoke_claims_produce_finite_numbers(tmp_path):
    auc = auc_claim("smoke", out_dir=tmp_path)
    over = overestimation_claim("smoke", out_dir=tmp_path)
    assert auc.passed and over.passed
    assert auc.numbers["seeds_per_method"] == 2
    for res in (auc, over):
        assert all(math.isfinite(v) for v in res.numbers.values())
    # CartPole returns are at least 8 per episode: the AUC is a return level, not a step count
    assert 8.0 <= auc.numbers["auc_dqn"] <= 500.0
    assert "| minto | 2 |" in auc.table
