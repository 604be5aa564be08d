"""The claim at smoke scale: it runs the registered pipeline and reports numbers, not a verdict."""

from __future__ import annotations

import math

from quadriga_dpm_solver_v3.claims import ARMS, CLAIMED_NFE, few_step_error

from quadriga.claims import evaluate_claim
from quadriga.registry import Registry


def test_claim_smoke_gives_paired_errors_per_nfe(tmp_path):
    obs = few_step_error.observations("smoke", tmp_path, Registry(use_env=False))
    assert list(obs.values) == [f"nfe={m}" for m in CLAIMED_NFE]
    for arms in obs.values.values():
        assert set(arms) == set(ARMS) and all(len(v) == 2 for v in arms.values())
        assert all(math.isfinite(e) and e > 0 for v in arms.values() for e in v)
    # the error falls with the budget for every solver (means over the two replicates)
    for arm in ARMS:
        means = [sum(obs.values[f"nfe={m}"][arm]) for m in CLAIMED_NFE]
        assert means[-1] < means[0]
    assert obs.numbers["v3/ems_l_departure"] > 0.05 and obs.numbers["v3/ems_s_departure"] > 0.05
    assert "v3/nfe=10/rms_error" in obs.numbers  # reported, not tested
    rec = evaluate_claim(few_step_error, obs, "smoke")
    assert rec["status"] == "ran" and len(rec["comparisons"]) == 2 * len(CLAIMED_NFE)
