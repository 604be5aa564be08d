"""Sweeps that grow: more seeds or grid values reuse the finished runs in the default directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quadriga.errors import ConfigError
from quadriga.sweep import default_sweep_dir, run_sweep

PIPELINE = """
[pipeline]
name = "grow-steps"
seed = 0

[task.g]
use = "gaussian"
dim = 2

[stage.mala]
use = "mala"
inputs = { target = "g" }
num_chains = 2
num_samples = 100
burn_in = 20
"""

SECOND_STAGE = """
[stage.rwm]
use = "mala"
inputs = { target = "g" }
num_chains = 2
num_samples = 100
burn_in = 20
"""


def _mtimes(sweep_dir: Path) -> dict[str, int]:
    return {d.name: (d / "results.json").stat().st_mtime_ns for d in (sweep_dir / "runs").iterdir()}


def test_growing_seeds_and_grid_reuses_finished_runs_in_the_default_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "steps-file.toml"
    source.write_text(PIPELINE)
    first = run_sweep(source, seeds=[0, 1], grids=[("stage.mala.step_size", [0.05])], workers=2)
    # named by the pipeline's [pipeline] name (as its runs under runs/ are), not by the file stem
    assert first.dir.parent == Path("sweeps") and first.dir.name.startswith("grow-steps-")
    assert first.dir == default_sweep_dir(str(source.resolve()), [], "grow-steps", PIPELINE.encode())
    assert not any(r["skipped"] for r in first.runs)
    before = _mtimes(first.dir)
    assert sorted(before) == ["seed0-step_size0.05", "seed1-step_size0.05"]

    grown = run_sweep(source, seeds=[0, 1, 2], grids=[("stage.mala.step_size", [0.05, 1.5])], workers=2)
    assert grown.dir == first.dir
    reused = {r["run_id"] for r in grown.runs if r["skipped"]}
    assert reused == set(before)
    assert len(grown.runs) == 6 and all(r["status"] == "finished" for r in grown.runs)
    after = _mtimes(grown.dir)
    assert {k: after[k] for k in before} == before  # the finished runs were not run again
    # the summary covers the grown sweep: three seeds per step size
    rates = [s for s in grown.summary if s["metric"] == "acceptance_rate"]
    assert sorted((s["stage.mala.step_size"], s["n"]) for s in rates) == [(0.05, 3), (1.5, 3)]
    # and the reused runs' values are the ones the first sweep computed
    old = {(r["seed"], r["metric"]): r["value"] for r in first.rows}
    new = {(r["seed"], r["metric"]): r["value"] for r in grown.rows if r["stage.mala.step_size"] == 0.05}
    assert {k: new[k] for k in old} == old

    # other --set values are another sweep: another directory, nothing reused
    other = run_sweep(
        source,
        seeds=[0],
        grids=[("stage.mala.step_size", [0.05])],
        fixed=["stage.mala.burn_in=10"],
        workers=1,
    )
    assert other.dir != first.dir and not any(r["skipped"] for r in other.runs)

    # an edited pipeline file is another sweep too: its own directory, nothing of the old one counted
    source.write_text(PIPELINE.replace("burn_in = 20", "burn_in = 30"))
    edited = run_sweep(source, seeds=[0], grids=[("stage.mala.step_size", [0.05])], workers=1)
    assert edited.dir != first.dir and not any(r["skipped"] for r in edited.runs)
    # and given the old directory by --out, the runs made with the old settings are named, not counted
    with pytest.raises(ConfigError, match="it was edited since they ran") as info:
        run_sweep(source, seeds=[0], grids=[("stage.mala.step_size", [0.05])], out=first.dir, workers=1)
    assert "seed0-step_size0.05" in str(info.value) and info.value.key == "--out"


def test_a_grid_key_whose_short_name_was_used_for_another_key_gets_its_own_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "two.toml"
    source.write_text(PIPELINE + SECOND_STAGE)
    first = run_sweep(source, seeds=[0], grids=[("stage.mala.step_size", [0.05])], workers=1)
    # same short name, seed0-step_size0.05, but another stage's parameter: not the same run
    second = run_sweep(source, seeds=[0], grids=[("stage.rwm.step_size", [0.05])], workers=1)
    assert second.dir == first.dir
    (run,) = second.runs
    assert not run["skipped"] and run["run_id"] != "seed0-step_size0.05"
    assert run["run_id"].startswith("seed0-") and len(run["run_id"]) == len("seed0-") + 8
    sweep = json.loads((second.dir / "sweep.json").read_text())
    assert set(sweep["known_runs"]) == {"seed0-step_size0.05", run["run_id"]}
    # running either again reuses its own run
    again = run_sweep(source, seeds=[0], grids=[("stage.mala.step_size", [0.05])], workers=1)
    assert [r["run_id"] for r in again.runs] == ["seed0-step_size0.05"] and again.runs[0]["skipped"]
    again = run_sweep(source, seeds=[0], grids=[("stage.rwm.step_size", [0.05])], workers=1)
    assert [r["run_id"] for r in again.runs] == [run["run_id"]] and again.runs[0]["skipped"]


def test_the_cli_prints_a_header_then_each_run_and_says_what_it_reused(plugin_path, tmp_path):
    from qtest_helpers import run_cli

    first = run_cli(
        ["sweep", "toy-pipeline", "--seeds", "0:2", "--workers", "2"], site=plugin_path, cwd=tmp_path
    )
    assert first.returncode == 0, first.stdout + first.stderr
    (sweep_dir,) = (tmp_path / "sweeps").iterdir()
    lines = first.stdout.splitlines()
    assert lines[:3] == [
        "sweep toy-pipeline: 2 runs",
        f"  directory: sweeps/{sweep_dir.name}",
        "  backend: local, 2 runs at a time (worker processes)",
    ]
    ended = sorted(line.split()[1] for line in lines if "finished after" in line)
    assert ended == ["seed0", "seed1"] and {
        line.split()[0] for line in lines if "finished after" in line
    } == {
        "[1/2]",
        "[2/2]",
    }

    grown = run_cli(
        ["sweep", "toy-pipeline", "--seeds", "0:3", "--workers", "2"], site=plugin_path, cwd=tmp_path
    )
    assert grown.returncode == 0, grown.stdout + grown.stderr
    lines = grown.stdout.splitlines()
    assert lines[:3] == [
        "sweep toy-pipeline: 3 runs, 2 already finished (reused), 1 to run",
        f"  directory: sweeps/{sweep_dir.name}",
        "  backend: local, 1 run at a time (worker processes)",
    ]
    assert [line.split()[:2] for line in lines if "finished after" in line] == [["[1/1]", "seed2"]]
    assert len(list((tmp_path / "sweeps").iterdir())) == 1
