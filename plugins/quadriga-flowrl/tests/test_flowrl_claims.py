"""The pipeline and the claim at smoke scale: numbers, not verdicts; the preconditions read them."""

from __future__ import annotations

from quadriga_flowrl.claims import ARMS, FLOWRL, covers_modes

from quadriga.claims import evaluate_claim
from quadriga.registry import Registry


def test_claim_smoke_runs_the_pipeline_and_reports(tmp_path):
    obs = covers_modes.observations("smoke", tmp_path, Registry(use_env=False))
    assert set(obs.values) == set(ARMS) and all(len(v) == 2 for v in obs.values.values())
    # mode entropy is between 0 (one answer) and ln 4 (all four equally)
    assert all(0.0 <= v <= 1.3863 for vals in obs.values.values() for v in vals)
    # 60 updates of 16: FlowRL has found answers (the base model puts ~5 % on them)
    assert obs.numbers[f"{FLOWRL}/mean_reward"] > 0.2
    rec = evaluate_claim(covers_modes, obs, "smoke")
    assert rec["status"] == "ran" and rec["comparisons"][0]["n"] == 2
