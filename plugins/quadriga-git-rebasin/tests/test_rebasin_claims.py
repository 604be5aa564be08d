"""The claims at smoke scale: they run through the registered pipelines and give numbers, not verdicts."""

from __future__ import annotations

import math

import pytest
from quadriga_git_rebasin.claims import barrier_drop, width_slope

from quadriga.claims import evaluate_claim
from quadriga.registry import Registry


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("QUADRIGA_CACHE_DIR", str(tmp_path / "cache"))


def test_barrier_drop_smoke(tmp_path):
    obs = barrier_drop.observations("smoke", tmp_path, Registry(use_env=False))
    assert set(obs.values) == {"wm", "naive"} and all(len(v) == 2 for v in obs.values.values())
    # paired pairs: matching never raises the barrier much above the naive one, both are >= 0
    assert all(0 <= w <= n + 0.05 for w, n in zip(obs.values["wm"], obs.values["naive"], strict=True))
    rec = evaluate_claim(barrier_drop, obs, "smoke")
    assert rec["status"] == "ran" and rec["comparisons"][0]["n"] == 2
    assert math.isfinite(rec["comparisons"][0]["estimate"])


def test_width_slope_smoke(tmp_path):
    obs = width_slope.observations("smoke", tmp_path, Registry(use_env=False))
    assert set(obs.values) == {"wm"} and len(obs.values["wm"]) == 2
    assert all(math.isfinite(s) for s in obs.values["wm"])
    assert evaluate_claim(width_slope, obs, "smoke")["status"] == "ran"
