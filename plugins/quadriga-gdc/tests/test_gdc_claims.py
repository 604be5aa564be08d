"""The pipeline and the claim at smoke scale: numbers, not verdicts; the preconditions read them."""

from __future__ import annotations

from quadriga_gdc.claims import ARMS, GDC, reaches_target

from quadriga.claims import evaluate_claim
from quadriga.registry import Registry


def test_claim_smoke_runs_the_pipeline_and_reports(tmp_path):
    obs = reaches_target.observations("smoke", tmp_path, Registry(use_env=False))
    assert set(obs.values) == set(ARMS) and all(len(v) == 2 for v in obs.values.values())
    # the pipeline's task: KL(p || a) = 1.50 nats (E_a[phi] = 0.013, mu_bar = 0.5)
    assert 1.4 < obs.numbers["kl_target_base"] < 1.6
    # 30 steps of 64: GDC has moved towards p and raised the moment from E_a[phi] = 0.013
    assert max(obs.values[GDC]) < 0.9
    assert obs.numbers[f"{GDC}/moment"] > 0.1
    rec = evaluate_claim(reaches_target, obs, "smoke")
    assert rec["status"] == "ran" and rec["comparisons"][0]["n"] == 2
