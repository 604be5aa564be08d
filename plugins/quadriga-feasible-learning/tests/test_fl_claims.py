"""The claims at smoke scale run through the registered pipelines and report numbers, not verdicts."""

from __future__ import annotations

import math

import pytest
from quadriga_feasible_learning import claims

from quadriga.claims import evaluate_claim
from quadriga.registry import Registry


@pytest.mark.parametrize("name", ["DIGITS_TAIL", "DIABETES_MSE"])
def test_claims_smoke(tmp_path, name):
    claim = getattr(claims, name)
    obs = claim.observations("smoke", tmp_path, Registry(use_env=False))
    rec = evaluate_claim(claim, obs, "smoke")
    assert rec["status"] == "ran"
    assert all(c["n"] == 2 and math.isfinite(c["estimate"]) for c in rec["comparisons"])
    if claim.observe is not None:
        assert {c["group"] for c in rec["comparisons"]} == set(claims.TAIL_METRICS)
        assert 0.0 <= rec["numbers"]["fl/train_feasible_fraction"] <= 1.0
        assert "multipliers" in rec["figures"]
    else:
        assert rec["comparisons"][0]["estimate"] > 0  # a ratio of two MSEs
