"""The claims at smoke scale: they run through the registered pipelines and report numbers, not verdicts."""

from __future__ import annotations

import math

from quadriga_lr_qr.claims import ARMS, WEIGHTED_EXACT, synthetic_shift_claim

from quadriga.claims import evaluate_claim
from quadriga.registry import Registry


def test_synthetic_claim_smoke(tmp_path):
    obs = synthetic_shift_claim.observations("smoke", tmp_path, Registry(use_env=False))
    assert set(obs.values) == set(ARMS) and all(len(v) == 3 for v in obs.values.values())
    assert all(0.0 <= c <= 1.0 for v in obs.values.values() for c in v)
    assert len(set(obs.values["lrqr"])) == 3  # a fresh dataset per replicate
    rec = evaluate_claim(synthetic_shift_claim, obs, "smoke")
    assert rec["status"] == "ran" and rec["comparisons"][0]["n"] == 3
    ratio = rec["numbers"][f"width_ratio_lrqr_over_{WEIGHTED_EXACT}"]
    assert math.isfinite(ratio) and ratio > 0
    assert rec["numbers"][f"width_ratio_lrqr_over_{WEIGHTED_EXACT}_low"] <= ratio
    assert "| width ratio | lrqr / split |" in rec["table"]
