"""The claims at smoke scale: they run the registered pipelines and report numbers, not verdicts."""

from __future__ import annotations

import math

from quadriga_target_score_matching.claims import (
    HIGH_SIGMAS,
    LOW_SIGMAS,
    high_noise,
    low_noise,
    target_noise,
)

from quadriga.claims import evaluate_claim, shared_runs
from quadriga.registry import Registry


def test_trained_claims_smoke_share_one_run_with_paired_arms(tmp_path):
    registry = Registry(use_env=False)
    with shared_runs():
        low = low_noise.observations("smoke", tmp_path / "low", registry)
        high = high_noise.observations("smoke", tmp_path / "high", registry)
    assert list(low.values) == [f"sigma={s:g}" for s in LOW_SIGMAS]
    assert list(high.values) == [f"sigma={s:g}" for s in HIGH_SIGMAS]
    for obs in (low, high):
        for arms in obs.values.values():
            assert {"dsm", "tsm", "mixture"} <= set(arms) and all(len(v) == 2 for v in arms.values())
            assert all(math.isfinite(e) and e > 0 for v in arms.values() for e in v)
    # one run: the table (every sigma) is the same, and the fit precondition's number is measured
    assert low.table == high.table and "dsm/relative_mse@sigma=0.3" in low.numbers
    for claim, obs in ((low_noise, low), (high_noise, high)):
        rec = evaluate_claim(claim, obs, "smoke")
        assert rec["status"] == "ran" and len(rec["comparisons"]) == len(obs.values)


def test_target_noise_claim_smoke(tmp_path):
    obs = target_noise.observations("smoke", tmp_path, Registry(use_env=False))
    assert list(obs.values) == [f"sigma={s:g}" for s in LOW_SIGMAS]
    for arms in obs.values.values():
        ratio = sum(arms["tsm"]) / sum(arms["dsm"])
        assert ratio < 0.01  # 1.7e-3 at sigma = 0.1 with 2e5 pairs; 2000 pairs here
    assert 0.3 < obs.numbers["crossover_sigma"] < 0.6
    rec = evaluate_claim(target_noise, obs, "smoke")
    assert rec["status"] == "ran"
