"""Sweeps: grid x seeds, the tidy table and summary, a killed worker, resume, local vs Ray."""

from __future__ import annotations

import json
import math

import pytest
from qtest_helpers import run_cli

from quadriga.summary import aggregate, bootstrap_ci
from quadriga.sweep import parse_grid, parse_seeds, plan


def test_parsing_and_planning():
    assert parse_seeds("0:3") == [0, 1, 2] and parse_seeds("4,7") == [4, 7]
    assert parse_grid("stage.a.alpha=0.5,1,2") == ("stage.a.alpha", [0.5, 1, 2])
    assert parse_grid("stage.a.xs=[1,2],[3]") == ("stage.a.xs", [[1, 2], [3]])
    runs = plan([0, 1], [("stage.a.alpha", [1, 2]), ("stage.a.b", [True, False])])
    assert len(runs) == 8 and len({r.run_id for r in runs}) == 8
    assert runs[0].overrides == ("stage.a.alpha=1", "stage.a.b=true")


@pytest.mark.parametrize(
    ("parse", "text", "needle"),
    [
        (parse_seeds, "0,1,0", r"lists seed 0 more than once"),
        (parse_grid, "stage.a.alpha=1,2,1.0", r"lists the value 1\.0 of stage\.a\.alpha more than once"),
        (parse_grid, "stage.a.b=true,false,true", r"lists the value true of stage\.a\.b"),
    ],
)
def test_a_seed_or_grid_value_listed_twice_is_refused(parse, text, needle):
    """Two runs of one seed and setting would be one replicate counted twice (and one run id)."""
    from quadriga.errors import ConfigError

    with pytest.raises(ConfigError, match=needle):
        parse(text)


def test_distinct_values_that_python_calls_equal_stay_distinct():
    assert parse_grid("stage.a.x=1,true") == ("stage.a.x", [1, True])  # an int and a boolean
    with pytest.raises(Exception, match=r"gives stage\.a\.alpha more than once"):
        plan([0], [("stage.a.alpha", [1]), ("stage.a.alpha", [2])])


def test_a_grid_key_also_given_by_set_is_refused():
    """``--set k=0.5 --grid k=0.1,0.2`` would silently drop the ``--set`` value."""
    from quadriga.errors import ConfigError

    with pytest.raises(ConfigError, match=r"--grid and --set both give stage\.a\.alpha"):
        plan([0], [("stage.a.alpha", [1, 2])], fixed=["stage.a.alpha = 3"])
    runs = plan([0], [("stage.a.alpha", [1, 2])], fixed=["stage.a.beta=3"])  # other keys combine
    assert runs[1].overrides == ("stage.a.beta=3", "stage.a.alpha=2")


def test_aggregate_matches_closed_forms():
    rows = [{"stage": "s", "metric": "m", "k": 1, "value": v} for v in (1.0, 2.0, 4.0)]
    (entry,) = aggregate(rows, ["k"])
    assert entry["mean"] == pytest.approx(7 / 3)
    assert entry["stderr"] == pytest.approx(
        math.sqrt(((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2 + (4 - 7 / 3) ** 2) / 2 / 3)
    )
    low, high = bootstrap_ci([1.0, 2.0, 4.0])
    assert 1.0 <= low <= 7 / 3 <= high <= 4.0


def _sweep(site, out, *extra):
    return run_cli(
        ["sweep", "toy-pipeline", "--seeds", "0:3", "--workers", "2", "--out", str(out), *extra],
        site=site,
        timeout=600,
    )


def test_local_sweep_table_summary_and_figure(plugin_path, tmp_path):
    proc = _sweep(plugin_path, tmp_path / "sw", "--grid", "stage.draw.num_samples=40,400")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pq = pytest.importorskip(
        "pyarrow.parquet", reason="pyarrow writes results.parquet (quadriga[test] installs it)"
    )
    table = pq.read_table(tmp_path / "sw" / "results.parquet").to_pylist()
    # 2 grid points x 3 seeds x (estimate, estimate_stderr, draw/mean_error)
    assert len(table) == 18
    assert {r["stage.draw.num_samples"] for r in table} == {40, 400} and {r["seed"] for r in table} == {
        0,
        1,
        2,
    }
    errors = [
        r["value"]
        for r in table
        if (r["subject"], r["metric"]) == ("draw", "mean_error") and r["stage.draw.num_samples"] == 400
    ]
    summary = [
        row
        for row in __import__("csv").DictReader((tmp_path / "sw" / "summary.csv").read_text().splitlines())
        if row["metric"] == "draw/mean_error" and row["stage.draw.num_samples"] == "400"
    ]
    assert float(summary[0]["mean"]) == pytest.approx(sum(errors) / 3)
    assert (tmp_path / "sw" / "summary.png").stat().st_size > 1000
    assert (tmp_path / "sw" / "runs").is_dir() and len(list((tmp_path / "sw" / "runs").iterdir())) == 6
    assert all((d / "log.txt").is_file() for d in (tmp_path / "sw" / "runs").iterdir())
    # compare re-prints from saved results without running anything
    proc = run_cli(["compare", str(tmp_path / "sw"), "--out", str(tmp_path / "cmp")], site=plugin_path)
    assert (
        proc.returncode == 0 and "draw/mean_error" in proc.stdout.replace("\n", "").replace(" ", "")
    ) or "mean_err" in proc.stdout
    assert (tmp_path / "cmp" / "summary.png").is_file()


def test_killed_worker_fails_only_its_run_and_rerun_completes_the_rest(plugin_path, tmp_path):
    marker = tmp_path / "died"
    out = tmp_path / "sw"
    proc = _sweep(plugin_path, out, "--grid", f'stage.draw.die_once="","{marker}"')
    assert proc.returncode == 1, proc.stdout + proc.stderr
    runs = json.loads((out / "runs.json").read_text())
    failed = [r for r in runs if r["status"] != "finished"]
    assert len(runs) == 6 and len(failed) == 1
    assert "worker process died" in failed[0]["error"] and "-9" in failed[0]["error"]
    status = json.loads((out / "runs" / failed[0]["run_id"] / "status.json").read_text())
    assert status["status"] == "failed"
    finished = [r for r in runs if r["status"] == "finished"]
    mtimes = {r["run_id"]: (out / "runs" / r["run_id"] / "results.json").stat().st_mtime_ns for r in finished}
    proc = _sweep(plugin_path, out, "--grid", f'stage.draw.die_once="","{marker}"')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6 runs, 5 already finished (reused), 1 to run" in proc.stdout
    runs = json.loads((out / "runs.json").read_text())
    assert all(r["status"] == "finished" for r in runs)
    assert sum(r["skipped"] for r in runs) == 5
    for run_id, mtime in mtimes.items():
        assert (out / "runs" / run_id / "results.json").stat().st_mtime_ns == mtime


@pytest.mark.slow
def test_ray_backend_gives_the_same_per_run_results_as_local(plugin_path, tmp_path):
    pytest.importorskip("ray")
    local = _sweep(plugin_path, tmp_path / "local")
    assert local.returncode == 0, local.stderr
    ray = _sweep(plugin_path, tmp_path / "ray", "--backend", "ray")
    assert ray.returncode == 0, ray.stdout + ray.stderr
    runs = json.loads((tmp_path / "local" / "runs.json").read_text())
    assert len(runs) == 3
    for r in runs:
        a = (tmp_path / "local" / "runs" / r["run_id"] / "results.json").read_text()
        b = (tmp_path / "ray" / "runs" / r["run_id"] / "results.json").read_text()
        assert a == b


def test_table_falls_back_to_csv_without_pyarrow(tmp_path, monkeypatch):
    import builtins
    import csv

    from quadriga.summary import write_outputs

    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    rows = [{"seed": s, "stage.a.x": 1, "stage": "e", "metric": "m", "value": float(s)} for s in range(3)]
    summary = aggregate(rows, ["stage.a.x"])
    table, figure = write_outputs(tmp_path, rows, summary, ["stage.a.x"])
    assert table.name == "results.csv" and figure.is_file()
    read = list(csv.DictReader(table.read_text().splitlines()))
    assert [float(r["value"]) for r in read] == [0.0, 1.0, 2.0]


@pytest.mark.parametrize(
    ("grids", "fixed", "flag"),
    [
        ([("pipeline.seed", [1, 2])], [], "--grid"),
        ([("stage.a.alpha", [1, 2])], ["pipeline.seed = 3"], "--set"),
    ],
)
def test_the_pipeline_seed_in_a_grid_or_set_is_refused(grids, fixed, flag):
    """Each run's seed is its --seeds value: a grid of pipeline.seed would be silently replaced."""
    from quadriga.errors import ConfigError

    with pytest.raises(ConfigError, match="sweep seeds with --seeds") as info:
        plan([0, 1], grids, fixed)
    assert info.value.key == flag and f"{flag} pipeline.seed" in str(info.value)


@pytest.mark.parametrize(("code", "what"), [(143, "terminated (SIGTERM)"), (130, "interrupted")])
def test_a_stopped_sweep_says_so_within_80_columns(plugin_path, monkeypatch, capsys, code, what):
    import sys

    import quadriga.cli.sweep as cli_sweep
    from quadriga.cli import main

    def stop(*args, **kwargs):
        exc = KeyboardInterrupt()
        exc.exit_code = code  # type: ignore[attr-defined]
        raise exc

    monkeypatch.setattr(cli_sweep, "_sweep", stop)
    monkeypatch.setattr(sys, "argv", ["quadriga", "sweep", "toy-pipeline", "--seeds", "0:2"])
    assert main(["sweep", "toy-pipeline", "--seeds", "0:2"]) == code
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == f"{what}: the runs it started are recorded interrupted,"
    assert "their finished stages kept" in lines[1] and "  quadriga sweep toy-pipeline --seeds 0:2" in lines
    assert max(len(line) for line in lines) <= 80, lines
