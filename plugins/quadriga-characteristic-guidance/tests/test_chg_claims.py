"""The claim at smoke scale: it runs the registered pipeline and reports numbers, not a verdict."""

from __future__ import annotations

import math

from quadriga_characteristic_guidance.claims import ARMS, CLAIMED_W, closer_to_guided_law

from quadriga.claims import evaluate_claim
from quadriga.registry import Registry


def test_claim_smoke_gives_paired_distances_per_weight(tmp_path):
    obs = closer_to_guided_law.observations("smoke", tmp_path, Registry(use_env=False))
    assert list(obs.values) == [f"w={w:g}" for w in CLAIMED_W]
    for arms in obs.values.values():
        assert set(arms) == set(ARMS) and all(len(v) == 2 for v in arms.values())
        assert all(math.isfinite(e) and 0 < e <= 1 for v in arms.values() for e in v)
    for w in CLAIMED_W:
        assert obs.numbers[f"chg/w={w:g}/converged_fraction"] >= 0.95
        assert obs.numbers[f"chg/w={w:g}/correction_rms"] > 0.01
    rec = evaluate_claim(closer_to_guided_law, obs, "smoke")
    assert rec["status"] == "ran" and len(rec["comparisons"]) == len(CLAIMED_W)
