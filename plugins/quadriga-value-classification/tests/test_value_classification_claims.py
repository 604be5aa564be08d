"""The claims at smoke scale: one shared run of the four noisy-task arms; numbers, status 'ran'."""

from __future__ import annotations

import math

import pytest
from quadriga_value_classification.claims import (
    ARMS,
    PIPELINE,
    claim_run_source,
    noisy_auc_claim,
    width_gap_claim,
)

from quadriga import api
from quadriga.claims import evaluate_claim, shared_runs


@pytest.mark.parametrize("name", ["cartpole-value-classification", "acrobot-value-classification"])
def test_ready_pipelines_check(name):
    pipeline = api.check(name)
    learners = [s for s in pipeline.stages if s.startswith("dqn-")]
    # 8 configurations x 2 replicates: mse / hlgauss / twohot, clean and noisy, and the two wide arms
    assert len(learners) == 16, learners


def test_claim_run_keeps_the_four_noisy_arms_of_the_pipeline():
    data = claim_run_source()
    assert PIPELINE == "cartpole-value-classification"
    learners = {k for k, v in data["stage"].items() if v["use"] in ("dqn", "dqn-hlgauss")}
    assert learners == set(ARMS)
    assert all(data["stage"][a]["inputs"]["task"] == "env-noisy" for a in ARMS)
    assert data["stage"]["dqn-hlgauss-noisy-wide"]["hidden_sizes"] == [512, 512]


def test_smoke_claims_share_one_run_with_paired_replicates(tmp_path):
    with shared_runs():  # as verify does around the claims it runs
        obs = noisy_auc_claim.observations("smoke", tmp_path)
        gaps = width_gap_claim.observations("smoke", tmp_path / "second")
    assert set(obs.values) == {"dqn-hlgauss-noisy", "dqn-mse-noisy"}
    assert all(len(v) == 2 for v in obs.values.values())
    rec = evaluate_claim(noisy_auc_claim, obs, "smoke")
    assert rec["status"] == "ran" and rec["tuning_flags"] == []
    (c,) = rec["comparisons"]
    assert c["n"] == 2 and c["baseline"] == "dqn-mse-noisy" and c["method"]
    # CartPole pays 1 per step (plus zero-mean noise): the AUC is an episode-length level, far below 500
    assert all(0.0 < v < 200.0 for v in obs.values["dqn-mse-noisy"] + obs.values["dqn-hlgauss-noisy"])
    assert 0.0 <= rec["numbers"]["dqn-hlgauss-noisy/clipped_fraction"] <= 1.0
    (support,) = rec["preconditions"]  # the support check reads the larger of the two HL-Gauss arms
    clipped = rec["numbers"]["hlgauss/clipped_fraction_max"]
    assert clipped >= rec["numbers"]["dqn-hlgauss-noisy/clipped_fraction"]
    assert support["holds"] == (clipped <= 0.05), support
    # the second claim reuses the first one's run (the core's shared runs)
    assert not (tmp_path / "second" / "run").exists()
    assert (tmp_path / "second" / "shared-run.txt").read_text().strip() == obs.numbers["run"]
    auc = obs.numbers["auc"]
    expected = [h - m for h, m in zip(auc["dqn-hlgauss-noisy-wide"], auc["dqn-mse-noisy-wide"], strict=True)]
    assert gaps.values["gap-wide"] == expected
    rec2 = evaluate_claim(width_gap_claim, gaps, "smoke")
    assert rec2["status"] == "ran" and math.isfinite(rec2["comparisons"][0]["estimate"])
