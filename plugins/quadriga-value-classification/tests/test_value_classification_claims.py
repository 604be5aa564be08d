"""The claims at smoke scale: one shared run of the six MSE and HL-Gauss arms; numbers, status 'ran'."""

from __future__ import annotations

import math

import pytest
from quadriga_value_classification.claims import (
    ARMS,
    NOISY_ARMS,
    PIPELINE,
    STAGES,
    noise_interaction_claim,
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


def test_claim_run_keeps_the_mse_and_hlgauss_arms_of_the_pipeline():
    from quadriga.registry import get_registry

    claims = (noisy_auc_claim, width_gap_claim, noise_interaction_claim)
    data = noisy_auc_claim._repeated(2, get_registry())
    # the three claims make one pipeline: inside verify they share its run
    assert all(c._repeated(2, get_registry()) == data for c in claims[1:])
    assert PIPELINE == "cartpole-value-classification" and all(c.stages == STAGES for c in claims)
    learners = {k for k, v in data["stage"].items() if v["use"] in ("dqn", "dqn-hlgauss")}
    assert learners == set(data["stage"]) - {"return-curve", "episode-return"}
    assert learners == set(ARMS) and len(ARMS) == 6
    assert all(data["stage"][a]["repeat"] == 2 for a in ARMS)
    assert "dqn-twohot" not in data["stage"] and "dqn-twohot-noisy" not in data["stage"]
    # the evaluators read the six learners only (the two-hot ones are dropped from their subjects)
    for evaluator in ("return-curve", "episode-return"):
        assert sorted(data["stage"][evaluator]["inputs"]["subject"]) == sorted(f"{a}[*]" for a in ARMS)
    assert all(data["stage"][a]["inputs"]["task"] == "env-noisy" for a in NOISY_ARMS)
    # the interaction's contrast: the same two losses, same width, on the clean task
    assert {data["stage"][a]["inputs"]["task"] for a in ("dqn-mse", "dqn-hlgauss")} == {"env"}
    assert "hidden_sizes" not in data["stage"]["dqn-hlgauss"]
    assert data["stage"]["dqn-hlgauss-noisy-wide"]["hidden_sizes"] == [512, 512]


def test_smoke_claims_share_one_run_with_paired_replicates(tmp_path):
    with shared_runs():  # as verify does around the claims it runs
        obs = noisy_auc_claim.observations("smoke", tmp_path)
        gaps = width_gap_claim.observations("smoke", tmp_path / "second")
        inter = noise_interaction_claim.observations("smoke", tmp_path / "third")
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
    # the interaction: per-replicate (HL-Gauss - MSE) noisy minus (HL-Gauss - MSE) clean, paired
    noisy = [h - m for h, m in zip(auc["dqn-hlgauss-noisy"], auc["dqn-mse-noisy"], strict=True)]
    clean = [h - m for h, m in zip(auc["dqn-hlgauss"], auc["dqn-mse"], strict=True)]
    assert inter.values == {"gap-noisy": noisy, "gap-clean": clean}
    rec3 = evaluate_claim(noise_interaction_claim, inter, "smoke")
    (c3,) = rec3["comparisons"]
    assert rec3["status"] == "ran" and c3["n"] == 2
    assert c3["estimate"] == pytest.approx(sum(noisy) / 2 - sum(clean) / 2)
    assert c3["low"] < c3["estimate"] < c3["high"]  # Student t on 2 paired differences: wide, finite
