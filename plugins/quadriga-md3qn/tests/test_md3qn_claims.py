"""The ready pipeline and the claim at smoke scale: numbers, status 'ran'."""

from __future__ import annotations

import math

from quadriga_md3qn.claims import ARMS, joint_correlation_claim

from quadriga import api
from quadriga.claims import evaluate_claim


def test_ready_pipeline_checks_with_paired_replicates():
    pipeline = api.check("md3qn-correlated-chain")
    learners = sorted(s for s in pipeline.stages if s.split("[")[0] in (*ARMS, "dqn"))
    assert len(learners) == 6, learners


def test_smoke_claim_runs_and_reports_the_diagnostics(tmp_path):
    obs = joint_correlation_claim.observations("smoke", tmp_path)
    assert set(obs.values) == set(ARMS) and all(len(v) == 2 for v in obs.values.values())
    rec = evaluate_claim(joint_correlation_claim, obs, "smoke")
    assert rec["status"] == "ran" and rec["tuning_flags"] == []
    (c,) = rec["comparisons"]
    assert c["n"] == 2 and math.isfinite(c["estimate"])
    # correlation errors lie in [0, 2]; the Monte-Carlo reference of the chain is correlated (rho = 0.6,
    # 200 rollouts: sample sd about 0.05)
    assert all(0.0 <= v <= 2.0 for arm in ARMS for v in obs.values[arm])
    assert abs(obs.numbers["reference_correlation"] - 0.6) < 0.2
    assert {p["description"] for p in rec["preconditions"]} and len(rec["preconditions"]) == 2
    marginals = next(p for p in rec["preconditions"] if "marginals" in p["description"])
    assert marginals["holds"] == (obs.numbers["w1_relative_max"] <= 0.2)
