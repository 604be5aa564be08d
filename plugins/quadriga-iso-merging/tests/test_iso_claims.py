"""The claims at smoke scale: they share one run of iso-digits and give numbers, not verdicts."""

from __future__ import annotations

import math

import pytest
from quadriga_iso_merging.claims import alignment_gain, beats_task_arithmetic

from quadriga.claims import evaluate_claim, shared_runs
from quadriga.registry import Registry


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("QUADRIGA_CACHE_DIR", str(tmp_path / "cache"))


def test_both_claims_smoke(tmp_path):
    reg = Registry(use_env=False)
    with shared_runs():
        obs = beats_task_arithmetic.observations("smoke", tmp_path / "a", reg)
        rho = alignment_gain.observations("smoke", tmp_path / "b", reg)
    assert set(obs.values) == {"isoc", "ta"} and all(len(v) == 2 for v in obs.values.values())
    assert all(0 < v <= 1.5 for vs in obs.values.values() for v in vs)
    rec = evaluate_claim(beats_task_arithmetic, obs, "smoke")
    assert rec["status"] == "ran" and math.isfinite(rec["comparisons"][0]["estimate"])
    assert len(rho.values["ta"]) == 2 and all(-1 <= r <= 1 for r in rho.values["ta"])
    assert evaluate_claim(alignment_gain, rho, "smoke")["status"] == "ran"
