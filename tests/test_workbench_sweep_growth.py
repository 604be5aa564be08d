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


def _rates(summary) -> list[tuple]:
    keys = ("stage.mala.step_size", "stage.mala.num_samples")
    return sorted((*(s.get(k) for k in keys), s["n"]) for s in summary if s["metric"] == "acceptance_rate")


def test_every_reader_covers_every_finished_run_of_every_grid_in_the_directory(tmp_path, monkeypatch):
    """Another grid into the same directory: the summary, table, compare, report and to_pandas show all."""
    import csv

    from quadriga.cli.sweep import header_lines
    from quadriga.report import collect_sweep
    from quadriga.summary import load_rows, sweep_runs

    monkeypatch.chdir(tmp_path)
    source = tmp_path / "steps.toml"
    source.write_text(PIPELINE)
    first = run_sweep(source, seeds=[0, 1], grids=[("stage.mala.step_size", [0.1, 0.3])], workers=2)
    plans: list = []
    second = run_sweep(
        source, seeds=[0, 1], grids=[("stage.mala.step_size", [0.6])], workers=2, on_plan=plans.append
    )
    assert second.dir == first.dir and len(second.runs) == 2  # this command's runs
    assert header_lines("steps", plans[0])[:2] == [
        "sweep steps: 2 runs",
        "  summary: 6 runs in the directory: 2 to run, 4 finished earlier",
    ]
    assert _rates(second.summary) == [(0.1, None, 2), (0.3, None, 2), (0.6, None, 2)]
    assert len({r["run_id"] for r in second.rows}) == 6
    summary_csv = list(csv.DictReader((second.dir / "summary.csv").read_text().splitlines()))
    assert sorted({r["stage.mala.step_size"] for r in summary_csv}) == ["0.1", "0.3", "0.6"]
    rows, keys = load_rows(second.dir)  # what compare reads
    assert keys == ["stage.mala.step_size"] and len({r["run_id"] for r in rows}) == 6
    section = collect_sweep(second.dir)
    assert section["status"] == "6 of 6 runs finished"
    assert dict(section["facts"])["grid"] == "stage.mala.step_size = [0.1, 0.3, 0.6]"
    pd = pytest.importorskip("pandas")
    from quadriga import to_pandas

    frame = to_pandas(second.dir)
    assert isinstance(frame, pd.DataFrame) and frame["run_id"].nunique() == 6
    assert sorted(frame["stage.mala.step_size"].unique()) == [0.1, 0.3, 0.6]

    # another grid KEY: a run without a key shows the value its saved configuration holds there
    third = run_sweep(source, seeds=[0], grids=[("stage.mala.num_samples", [50])], workers=1)
    assert third.keys == ["stage.mala.num_samples", "stage.mala.step_size"]
    assert _rates(third.summary) == sorted(
        [(0.1, 50, 1), (0.1, 100, 2), (0.3, 100, 2), (0.6, 100, 2)]  # mala's step size is 0.1 by default
    )
    # a run of the same settings and seed as an earlier one (num_samples = 100 is the pipeline's) is
    # one replicate, not two
    fourth = run_sweep(source, seeds=[0], grids=[("stage.mala.num_samples", [100])], workers=1)
    assert _rates(fourth.summary) == _rates(third.summary)
    runs = {r["run_id"]: r for r in sweep_runs(fourth.dir)}
    assert len(runs) == 8 and runs["seed0-num_samples100"]["params"] == {
        "stage.mala.num_samples": 100,
        "stage.mala.step_size": 0.1,
    }


def test_a_rerun_says_how_many_runs_resume_their_finished_stages(tmp_path, monkeypatch):
    from quadriga.cli.sweep import header_lines

    monkeypatch.chdir(tmp_path)
    source = tmp_path / "two.toml"
    source.write_text(PIPELINE + SECOND_STAGE)
    first = run_sweep(source, seeds=[0, 1], workers=2)
    # seed1 as an interrupted attempt leaves it: mala finished, rwm not
    run_dir = first.dir / "runs" / "seed1"
    status = json.loads((run_dir / "status.json").read_text())
    status["status"], status["stages"]["rwm"]["status"] = "interrupted", "interrupted"
    (run_dir / "status.json").write_text(json.dumps(status))
    (run_dir / "stages" / "rwm" / "record.json").unlink()
    kept = (run_dir / "stages" / "mala" / "record.json").stat().st_mtime_ns
    plans: list = []
    again = run_sweep(source, seeds=[0, 1], workers=2, on_plan=plans.append)
    assert header_lines("two", plans[0])[0] == (
        "sweep two: 2 runs, 1 already finished (reused), 1 to run, 1 resumed from its finished stages"
    )
    assert [r["status"] for r in again.runs] == ["finished", "finished"]
    assert (run_dir / "stages" / "mala" / "record.json").stat().st_mtime_ns == kept
