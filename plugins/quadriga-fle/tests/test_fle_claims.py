"""The claims at smoke scale (one shared run): numbers and status 'ran', never a verdict."""

from __future__ import annotations

import numpy as np
from quadriga_fle.claims import _COVERED, _PRECISE, BEATS_BASELINES, UNCOVERED_TOLERANCE, W1_RATE

from quadriga.claims import Observations, evaluate_claim, shared_runs


def test_both_claims_at_smoke_scale_read_paired_replicates(tmp_path):
    with shared_runs():
        rate = W1_RATE.observations("smoke", tmp_path / "rate")
        largest = BEATS_BASELINES.observations("smoke", tmp_path / "largest")
    for claim, obs in ((W1_RATE, rate), (BEATS_BASELINES, largest)):
        rec = evaluate_claim(claim, obs, "smoke")
        assert rec["status"] == "ran"
    slopes = rate.values["fle"]
    assert len(slopes) == 2 and all(np.isfinite(slopes))
    # n 100 -> 400 on noisy FrozenLake: FLE's W1 was 0.044 -> 0.0096 (slopes about -1.1); it falls
    assert rate.numbers["fle/w1@400"] < rate.numbers["fle/w1@100"]
    # FQE's point mass cannot be closer than E|G - E G| (about 0.09 here; reference std 0.12)
    assert all(v > 0.05 for v in largest.values["fqe"])
    assert 0.08 < rate.numbers["reference_std"] < 0.2
    assert set(largest.values) == {"fle", "fqe", "categorical"} and largest.numbers["n"] == 400


def test_without_coverage_the_claim_is_inconclusive_not_refuted():
    obs = Observations(
        values={"fle": [0.5, 0.6, 0.4]},  # a slope on the wrong side of -0.25
        numbers={
            "max_uncovered_mass": 0.6,
            "reference_w1_noise": 0.0001,
            "fle_min_mean_w1": 0.01,
        },
    )
    holds, diagnostic = _COVERED.check(obs)
    assert not holds and "0.6" in diagnostic
    assert _PRECISE.check(obs)[0]
    rec = evaluate_claim(W1_RATE, obs, "paper")
    assert rec["status"].startswith("inconclusive") and "precondition" in str(rec).lower()
    obs.numbers["max_uncovered_mass"] = UNCOVERED_TOLERANCE / 2
    assert evaluate_claim(W1_RATE, obs, "paper")["status"] == "refuted"
