"""The claims at smoke scale: they run the registered pipeline and report numbers, not verdicts."""

from __future__ import annotations

import math

from quadriga_mv_conformal.claims import ARMS, COVERAGE, VOLUME

from quadriga.claims import evaluate_claim, shared_runs
from quadriga.registry import Registry


def test_claims_smoke(tmp_path):
    reg = Registry(use_env=False)
    with shared_runs():  # both claims read one run of the pipeline
        cov = COVERAGE.observations("smoke", tmp_path / "a", reg)
        vol = VOLUME.observations("smoke", tmp_path / "b", reg)
    assert set(cov.values) == set(ARMS) and all(len(v) == 2 for v in cov.values.values())
    # 200 calibration points, 10 re-splits: each replicate's coverage within 0.06 of nominal
    assert all(abs(c - 0.9) < 0.06 for v in cov.values.values() for c in v)
    assert 0 < cov.numbers["reconstruction_r2"] <= 1
    rec = evaluate_claim(COVERAGE, cov, "smoke")
    assert rec["status"] == "ran" and rec["comparisons"][0]["n"] == 2
    rec = evaluate_claim(VOLUME, vol, "smoke")
    assert rec["status"] == "ran" and len(rec["comparisons"]) == 2
    assert all(math.isfinite(v) and v > 0 for vs in vol.values.values() for v in vs)
