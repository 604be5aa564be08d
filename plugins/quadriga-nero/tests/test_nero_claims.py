"""The claims at smoke scale: they run through the registered pipelines and report numbers, not verdicts."""

from __future__ import annotations

import math

import pytest
from quadriga_nero.claims import ACCURACY_OVERLAP, CONSENSUS_TRACKING, ROTATION_FLATNESS, SHIFT_FLATNESS

from quadriga.claims import evaluate_claim


@pytest.mark.parametrize(
    "claim",
    [ROTATION_FLATNESS, ACCURACY_OVERLAP, SHIFT_FLATNESS, CONSENSUS_TRACKING],
    ids=lambda c: c.arms[0],
)
def test_claims_run_at_smoke_scale(claim, tmp_path_factory):
    obs = claim.observations("smoke", tmp_path_factory.mktemp("claim"))
    assert set(obs.values) == set(claim.arms) and all(len(v) == 2 for v in obs.values.values())
    assert all(math.isfinite(x) for v in obs.values.values() for x in v)
    assert 0.0 <= obs.numbers["cnn/accuracy"] <= 1.0
    assert obs.numbers["cnn/accuracy_low"] <= obs.numbers["cnn/accuracy_high"]
    rec = evaluate_claim(claim, obs, "smoke")
    assert rec["status"] == "ran"
    assert rec["comparisons"][0]["n"] == 2
