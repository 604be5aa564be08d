"""The claims at smoke scale: the pipeline runs end to end, numbers and intervals, status 'ran'."""

from __future__ import annotations

import math

from quadriga_minto.claims import auc_claim, overestimation_claim

from quadriga.claims import evaluate_claim


def test_smoke_claims_produce_finite_numbers(tmp_path):
    auc = evaluate_claim(auc_claim, auc_claim.observations("smoke", tmp_path), "smoke")
    over = evaluate_claim(overestimation_claim, overestimation_claim.observations("smoke", tmp_path), "smoke")
    assert auc["status"] == over["status"] == "ran"
    for rec in (auc, over):
        (c,) = rec["comparisons"]
        assert c["n"] == 2 and c["baseline"] == "dqn" and c["low"] <= c["estimate"] <= c["high"]
        assert all(math.isfinite(v) for v in rec["numbers"].values())
    # CartPole returns are at least 8 per episode: the AUC is a return level, not a step count
    assert 8.0 <= auc["numbers"]["dqn/auc_mean"] <= 500.0
    assert "| minto | 2 |" in auc["table"]
