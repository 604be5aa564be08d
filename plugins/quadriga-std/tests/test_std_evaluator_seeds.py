"""Evaluators draw from the stage generator: the root seed reaches their randomness."""

from __future__ import annotations

import json

import pytest

from quadriga.api import run


def _pipeline(seed: int) -> dict:
    return {
        "pipeline": {"name": "sw-seeds", "seed": seed},
        "task": {"gauss": {"use": "gaussian", "dim": 3}},
        "stage": {
            "draw": {"use": "iid", "inputs": {"target": "gauss"}, "num_samples": 300},
            "sw": {
                "use": "sliced-wasserstein",
                "inputs": {"subject": "draw", "reference": "gauss"},
                "num_projections": 20,
                "num_reference_samples": 300,
            },
        },
    }


def test_a_sweep_over_seeds_changes_evaluator_randomness_and_a_seed_repeats_it(tmp_path):
    a = run(_pipeline(0), out=tmp_path / "a")
    b = run(_pipeline(0), out=tmp_path / "b")
    c = run(_pipeline(1), out=tmp_path / "c")
    assert (a.dir / "results.json").read_text() == (b.dir / "results.json").read_text()
    # the same subject with another evaluator stream (reference draws and projections) differs
    other = run(_pipeline(1), out=tmp_path / "d", overrides=[])
    va = a.results["stages"]["sw"]["values"]["draw/sliced_wasserstein"]
    vc = c.results["stages"]["sw"]["values"]["draw/sliced_wasserstein"]
    assert va != pytest.approx(vc, rel=1e-9)
    assert other.results == c.results
    seeds = json.loads((a.dir / "manifest.json").read_text())["seeds"]
    assert set(seeds) == {"task.gauss", "stage.draw", "stage.sw"} and seeds["stage.sw"] != seeds["stage.draw"]
