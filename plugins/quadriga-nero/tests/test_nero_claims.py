"""The claims at smoke scale: they run through the registered pipelines and report numbers, not verdicts."""

from __future__ import annotations

import math

import pytest
from quadriga_nero.claims import ACCURACY_OVERLAP, CONSENSUS_TRACKING, ROTATION_FLATNESS, SHIFT_FLATNESS

from quadriga.claims import evaluate_claim


@pytest.mark.parametrize(
    "claim",
    [ROTATION_FLATNESS, ACCURACY_OVERLAP, CONSENSUS_TRACKING],
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


def test_shift_claim_compares_the_pooling_cnn_with_the_mlp_and_checks_saturation(tmp_path):
    obs = SHIFT_FLATNESS.observations("smoke", tmp_path)
    assert SHIFT_FLATNESS.arms == ("cnn-pool", "mlp")
    assert all(len(v) == 2 and all(math.isfinite(x) for x in v) for v in obs.values.values())
    # every stage of the shift pipeline is reported, the LeNet CNN beside the pooling one
    assert {"cnn/curve_range", "cnn-pool/curve_range", "mlp/curve_range"} <= set(obs.numbers)
    rec = evaluate_claim(SHIFT_FLATNESS, obs, "smoke")
    assert rec["status"] == "ran" and rec["comparisons"][0]["n"] == 2
    (pre,) = rec["preconditions"]
    lows = {a: obs.numbers[f"{a}/accuracy"] - obs.numbers[f"{a}/curve_range"] for a in ("cnn-pool", "mlp")}
    assert pre["holds"] == (max(lows.values()) > 0.1)
    assert "cnn-pool" in pre["diagnostic"] and "mlp" in pre["diagnostic"]
    # shifts of one pixel on the 16x16 canvas: the pooling CNN's curve is within a few points of flat
    assert max(obs.values["cnn-pool"]) < 0.1
