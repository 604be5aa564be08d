"""The claims at smoke scale: the registered pipeline runs with repeated arms; numbers, status 'ran'."""

from __future__ import annotations

import math

from quadriga_minto.claims import PIPELINE, auc_claim

from quadriga.claims import evaluate_claim


def test_smoke_auc_claim_runs_the_pipeline_with_paired_replicates(tmp_path):
    assert PIPELINE == "acrobot-minto"
    obs = auc_claim.observations("smoke", tmp_path)
    assert set(obs.values) == {"minto", "dqn"} and all(len(v) == 2 for v in obs.values.values())
    rec = evaluate_claim(auc_claim, obs, "smoke")
    assert rec["status"] == "ran"
    (c,) = rec["comparisons"]
    assert c["n"] == 2 and c["baseline"] == "dqn" and "paired" in c["method"]
    assert c["low"] <= c["estimate"] <= c["high"]
    # Acrobot-v1 pays -1 per step and cuts episodes at 500 steps: the AUC is a return level in [-500, 0]
    assert all(-500.0 <= v <= 0.0 for v in obs.values["dqn"] + obs.values["minto"])
    assert math.isfinite(rec["numbers"]["auc_ratio_minto_over_dqn"])
    # on Acrobot-v1 the minimum binds in most replay rows (0.75-0.85 in 4k-step runs)
    binds = rec["numbers"]["minto/min_binds_fraction"]
    assert 0.3 < binds <= 1.0
    assert rec["numbers"]["dqn-online/replicates"] == 2
