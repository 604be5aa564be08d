"""The claims at smoke scale: the registered pipeline runs with repeated arms; numbers, status 'ran'."""

from __future__ import annotations

import math

from quadriga_minto.claims import auc_claim

from quadriga.claims import evaluate_claim


def test_smoke_auc_claim_runs_the_pipeline_with_paired_replicates(tmp_path):
    obs = auc_claim.observations("smoke", tmp_path)
    assert set(obs.values) == {"minto", "dqn"} and all(len(v) == 2 for v in obs.values.values())
    rec = evaluate_claim(auc_claim, obs, "smoke")
    assert rec["status"] == "ran"
    (c,) = rec["comparisons"]
    assert c["n"] == 2 and c["baseline"] == "dqn" and "paired" in c["method"]
    assert c["low"] <= c["estimate"] <= c["high"]
    # CartPole returns are at least 8 per episode: the AUC is a return level, not a step count
    assert all(8.0 <= v <= 500.0 for v in obs.values["dqn"])
    assert math.isfinite(rec["numbers"]["auc_ratio_minto_over_dqn"])
