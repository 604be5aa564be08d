"""Sweep run directories named by their settings, sampler diagnostics in the tidy table, resume."""

from __future__ import annotations

import json

import pytest

from quadriga.errors import ConfigError
from quadriga.sweep import plan, run_sweep
from quadriga.sweep.grid import MAX_RUN_ID

PIPELINE = """
[pipeline]
name = "mala-steps"
seed = 0

[task.g]
use = "gaussian"
dim = 2

[stage.mala]
use = "mala"
inputs = { target = "g" }
num_chains = 2
num_samples = 200
burn_in = 50
"""


def test_run_ids_name_the_settings_and_fall_back_to_a_hash():
    ids = [r.run_id for r in plan([0, 1], [("stage.mala.step_size", [0.1, 0.3])])]
    assert ids == ["seed0-step_size0.1", "seed1-step_size0.1", "seed0-step_size0.3", "seed1-step_size0.3"]
    both = plan(
        [0], [("stage.mala.step_size", [0.1]), ("stage.rwm.step_size", [0.5]), ("stage.rwm.init", ["prior"])]
    )
    assert both[0].run_id == "seed0-mala.step_size0.1-rwm.step_size0.5-initprior"
    assert plan([2], [("stage.a.flag", [True])])[0].run_id == "seed2-flagtrue"
    long = plan(
        [0], [("stage.a.some_long_parameter_name", [0.123456789]), ("stage.a.other_long_name", [1e-7])]
    )
    unsafe = plan([0], [("stage.a.path", ["a/b"]), ("stage.a.xs", [[1, 2]])])
    for spec in (*long, *unsafe):
        assert spec.run_id == spec.hashed_id and len(spec.run_id) == len("seed0-") + 8
    assert len("seed0-some_long_parameter_name0.123456789-other_long_name1e-07") > MAX_RUN_ID
    # a string and a number that print alike do not share a directory
    clash = plan([0], [("stage.a.v", ["1", 1])])
    assert [s.run_id for s in clash] == [s.hashed_id for s in clash] and clash[0].run_id != clash[1].run_id


def test_sweep_names_runs_keeps_acceptance_rate_and_resumes(tmp_path):
    source = tmp_path / "mala-steps.toml"
    source.write_text(PIPELINE)
    out = tmp_path / "sw"
    grid = [("stage.mala.step_size", [0.05, 1.5])]
    first = run_sweep(source, seeds=[0, 1], grids=grid, workers=2, out=out)
    names = sorted(p.name for p in (out / "runs").iterdir())
    assert names == ["seed0-step_size0.05", "seed0-step_size1.5", "seed1-step_size0.05", "seed1-step_size1.5"]
    rates = {
        (r["seed"], r["stage.mala.step_size"]): r["value"]
        for r in first.rows
        if r["metric"] == "acceptance_rate"
    }
    assert len(rates) == 4
    for (seed, step), rate in rates.items():
        saved = json.loads((out / "runs" / f"seed{seed}-step_size{step}" / "results.json").read_text())
        assert rate == saved["stages"]["mala"]["info"]["acceptance_rate"]
    # MALA on a standard normal: small steps are accepted almost always, long ones far less often
    assert min(rates[(s, 0.05)] for s in (0, 1)) > 0.95 > 0.8 > max(rates[(s, 1.5)] for s in (0, 1))
    summary = [s for s in first.summary if s["metric"] == "acceptance_rate"]
    assert {s["n"] for s in summary} == {2}

    # a second run of the same sweep skips every finished run and gives the same table
    again = run_sweep(source, seeds=[0, 1], grids=grid, workers=2, out=out)
    assert all(r["skipped"] for r in again.runs) and again.rows == first.rows

    # a sweep from before settings-named runs is found under its hashed names
    (spec,) = [s for s in plan([0], grid) if s.params["stage.mala.step_size"] == 0.05]
    (out / "runs" / spec.run_id).rename(out / "runs" / spec.hashed_id)
    old = run_sweep(source, seeds=[0, 1], grids=grid, workers=2, out=out)
    assert all(r["skipped"] for r in old.runs)
    assert spec.hashed_id in {r["run_id"] for r in old.runs}
    assert sorted(r["value"] for r in old.rows) == sorted(r["value"] for r in first.rows)

    # other fixed settings would make same-named runs mean something else: refused
    with pytest.raises(ConfigError, match="holds a sweep with --set"):
        run_sweep(source, seeds=[0], grids=grid, fixed=["stage.mala.burn_in=10"], workers=1, out=out)
