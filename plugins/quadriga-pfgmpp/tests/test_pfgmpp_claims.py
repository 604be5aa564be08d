"""The claim at smoke scale: it runs the registered pipeline and reports numbers, not a verdict."""

from __future__ import annotations

import math

from quadriga_pfgmpp.claims import ARMS, robust_to_field_error

from quadriga.claims import evaluate_claim
from quadriga.registry import Registry


def test_claim_smoke_gives_paired_degradations(tmp_path):
    obs = robust_to_field_error.observations("smoke", tmp_path, Registry(use_env=False))
    assert list(obs.values) == ["eps=1"]
    arms = obs.values["eps=1"]
    assert set(arms) == set(ARMS) and all(len(v) == 2 for v in arms.values())
    # smoke numbers, not a verdict: the diffusion limit degrades, and more than D = 8 does
    assert obs.numbers["D=inf/eps=1/degradation"] > obs.numbers["D=8/eps=1/degradation"]
    assert all(math.isfinite(obs.numbers[f"D={d}/E0"]) for d in (1, 8, 64, 512, "inf"))
    rec = evaluate_claim(robust_to_field_error, obs, "smoke")
    assert rec["status"] == "ran" and len(rec["comparisons"]) == 1
