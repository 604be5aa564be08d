"""quadriga-mlflow against real local MLflow stores (SQLite and file), read back with MlflowClient."""

from __future__ import annotations

import json

import pytest
from quadriga_mlflow.tracker import flatten_params, metric_key

from quadriga import tracking
from quadriga.testing.trackers import (
    modules_after_listing,
    tracker_pipeline,
    tracker_registry,
    tracker_sweep_toml,
)

mlflow = pytest.importorskip("mlflow")


PIPELINE = tracker_pipeline("mlflow-demo")


@pytest.fixture
def registry():
    return tracker_registry()


@pytest.fixture(params=["sqlite", "file"])
def store(request, tmp_path, monkeypatch):
    """A fresh local MLflow store: SQLite (the default backend) or a file store."""
    monkeypatch.chdir(tmp_path)  # artifacts of the SQLite store go to ./mlruns
    if request.param == "sqlite":
        uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    else:
        uri = (tmp_path / "mlruns-files").as_uri()
        monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.delenv(tracking.ENV, raising=False)
    return mlflow.MlflowClient(tracking_uri=uri)


def test_keys_follow_mlflow_rules():
    assert metric_key("energy", "mala[0]", "energy_distance") == "energy/mala.0/energy_distance"
    assert metric_key("s", "a+b") == "s/a_b"
    flat = flatten_params({"stage": {"m": {"step_size": 0.1, "init": "normal", "inputs": {"target": "t"}}}})
    assert flat == {"stage.m.step_size": "0.1", "stage.m.init": "normal", "stage.m.inputs.target": "t"}


def test_a_run_is_logged_only_when_chosen(registry, store, tmp_path, capsys):
    from quadriga.api import run

    run(PIPELINE, out=tmp_path / "quiet", registry=registry)
    assert store.get_experiment_by_name("mlflow-demo") is None  # installed, not chosen: nothing logged
    assert "MLflow" not in capsys.readouterr().err
    with tracking.using("mlflow"):
        result = run(PIPELINE, out=tmp_path / "tracked", registry=registry)
    assert result.warnings == []
    experiment = store.get_experiment_by_name("mlflow-demo")
    (logged,) = store.search_runs([experiment.experiment_id])  # one MLflow run per quadriga run
    # where it went is printed once, on stderr: the run id, the experiment and the store
    err = capsys.readouterr().err.splitlines()
    start = err.index(f"MLflow run: {logged.info.run_id}")
    assert err[start + 1 : start + 3] == [
        "  experiment: mlflow-demo",
        f"  tracking URI: {store.tracking_uri}",
    ]
    # within 80 columns, but for the URI (a path is never wrapped)
    assert all(len(line) <= 80 for line in err[start : start + 2] + err[start + 3 : start + 5])
    assert logged.info.status == "FINISHED"
    assert logged.data.tags["quadriga.run_dir"] == str((tmp_path / "tracked").resolve())
    # parameters: the resolved pipeline, flattened, as TOML writes the values
    import tomllib

    resolved = tomllib.loads((tmp_path / "tracked" / "pipeline.toml").read_text())
    assert logged.data.params == flatten_params(resolved)
    assert logged.data.params["stage.mala.step_size"] == str(resolved["stage"]["mala"]["step_size"])
    # metrics: every evaluator value and sampler diagnostic, as in results.json
    saved = json.loads((tmp_path / "tracked" / "results.json").read_text())["stages"]
    for subject in ("mala", "rwm"):
        key = f"{subject}/energy_distance"
        assert logged.data.metrics[f"energy/{key}"] == pytest.approx(
            saved["energy"]["values"][key], rel=1e-12
        )
    acc = saved["mala"]["info"]["acceptance_rate"]
    assert logged.data.metrics["mala/acceptance_rate"] == pytest.approx(acc, rel=1e-12)
    # per-step metrics: the whole streamed history, step by step
    history = store.get_metric_history(logged.info.run_id, "count/loss")
    assert sorted((m.step, m.value) for m in history) == [(s, 1.0 / (s + 1)) for s in range(20)]
    # artifacts: figures and the manifest, byte for byte
    names = {a.path for a in store.list_artifacts(logged.info.run_id)}
    assert {"manifest.json", "pipeline.toml", "results.json", "figures"} <= names
    figures = [a.path for a in store.list_artifacts(logged.info.run_id, "figures")]
    assert figures == [f"figures/{f}" for f in saved["energy"]["figures"]]
    local = mlflow.artifacts.download_artifacts(
        run_id=logged.info.run_id,
        artifact_path="manifest.json",
        dst_path=str(tmp_path / "dl"),
        tracking_uri=store.tracking_uri,
    )
    with open(local) as fh:
        assert json.load(fh) == json.loads((tmp_path / "tracked" / "manifest.json").read_text())


def test_a_failed_run_is_marked_failed(registry, store, tmp_path):
    from quadriga.api import run

    bad = {**PIPELINE, "stage": {"b": {"use": "broken", "inputs": {"target": "normal"}}}}
    bad["pipeline"] = {"name": "mlflow-broken", "seed": 0}
    with tracking.using("mlflow"):
        result = run(bad, out=tmp_path / "bad", registry=registry, raise_on_failure=False)
    assert result.status == "failed"
    (logged,) = store.search_runs([store.get_experiment_by_name("mlflow-broken").experiment_id])
    assert logged.info.status == "FAILED" and "asked to fail" in logged.data.tags["quadriga.error"]


def test_the_command_line_chooses_trackers_by_name(capsys):
    from quadriga.cli import main

    assert main(["run", "gmm-mcmc-baselines", "--with", "mlfow", "--check"]) == 2
    err = capsys.readouterr().err
    assert "'mlfow' is not an installed tracker" in err and "Did you mean 'mlflow'" in err
    assert main(["run", "gmm-mcmc-baselines", "--with", "quadriga-mlflow", "--check"]) == 0


def test_the_command_line_prints_the_mlflow_run_after_the_results(store, tmp_path, monkeypatch):
    """The reader reads the results first, then where they are logged: on the one stream a
    terminal shows (stdout and stderr together), the MLflow block follows the results table."""
    import io
    import sys

    from quadriga.cli import main

    pipeline = tmp_path / "ordered.toml"
    pipeline.write_text(tracker_sweep_toml("mlflow-ordered"))
    both = io.StringIO()
    monkeypatch.setattr(sys, "stdout", both)
    monkeypatch.setattr(sys, "stderr", both)
    monkeypatch.setenv("COLUMNS", "80")
    code = main(["run", str(pipeline), "--with", "mlflow", "--out", str(tmp_path / "run"), "--quiet"])
    lines = both.getvalue().splitlines()
    assert code == 0, "\n".join(lines)
    (logged,) = store.search_runs([store.get_experiment_by_name("mlflow-ordered").experiment_id])
    block = lines.index(f"MLflow run: {logged.info.run_id}")
    results = next(i for i, line in enumerate(lines) if "energy_distance" in line)
    directory = next(i for i, line in enumerate(lines) if line.startswith("run directory: "))
    assert results < directory < block
    assert lines[block + 1] == "  experiment: mlflow-ordered"


def test_held_notes_wait_for_the_flush_and_an_early_end(capsys):
    with tracking.held_notes() as flush:
        tracking.note("MLflow run: abc")
        assert capsys.readouterr().err == ""  # held
        flush()
        assert capsys.readouterr().err == "MLflow run: abc\n"
        tracking.note("MLflow run: def")
    assert capsys.readouterr().err == "MLflow run: def\n"  # printed when the block ends
    tracking.note("now")  # outside a block: at once
    assert capsys.readouterr().err == "now\n"


def test_listing_imports_neither_mlflow_nor_torch():
    assert modules_after_listing("mlflow", {"mlflow", "torch"}) == []


SWEEP_TOML = tracker_sweep_toml("mlflow-sweep")


def test_a_sweep_parent_gets_the_fixed_sets_as_params_and_the_summary_as_metrics(
    tmp_path, monkeypatch, capsys
):
    from quadriga_mlflow.tracker import PARENT_ENV, SweepTracker

    uri = (tmp_path / "mlruns").as_uri()
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.delenv(PARENT_ENV, raising=False)
    pipeline = tmp_path / "sweep.toml"
    pipeline.write_text(SWEEP_TOML)
    sweep = {
        "source": str(pipeline),
        "seeds": [0, 1, 2],
        "grid": {"stage.mala.step_size": [0.1, 0.5]},
        "fixed": ["stage.mala.num_samples=500", "stage.mala.burn_in = 20"],
        "dir": None,
    }
    parent = SweepTracker.start(sweep)
    sweep_dir = tmp_path / "sw"
    sweep_dir.mkdir()
    (sweep_dir / "summary.csv").write_text(
        "stage.mala.step_size,stage,metric,n,mean,stderr,ci_low,ci_high,ci_method\n"
        '0.1,energy,mala/energy_distance,3,0.25,0.01,0.2069738,0.2930262,"Student t, 95%"\n'
        "0.5,energy,mala/energy_distance,1,0.125,,,,no interval: n = 1\n"
        '0.1,mala,acceptance_rate,3,0.9,0.0,0.9,0.9,"none (constant data, n=3), 95%"\n'
    )
    parent.end({**sweep, "dir": str(sweep_dir)}, "finished")
    client = mlflow.MlflowClient(tracking_uri=uri)
    logged = client.get_run(parent.run_id)
    assert logged.data.params["set.stage.mala.num_samples"] == "500"
    assert logged.data.params["set.stage.mala.burn_in"] == "20"
    assert json.loads(logged.data.params["sweep.grid.stage.mala.step_size"]) == [0.1, 0.5]
    base = "summary/energy/mala/energy_distance/step_size_0.1"
    assert logged.data.metrics[f"{base}/mean"] == 0.25
    assert logged.data.metrics[f"{base}/ci_low"] == pytest.approx(0.2069738)
    assert logged.data.metrics[f"{base}/ci_high"] == pytest.approx(0.2930262)
    one = "summary/energy/mala/energy_distance/step_size_0.5"
    assert logged.data.metrics[f"{one}/mean"] == 0.125 and f"{one}/ci_low" not in logged.data.metrics
    assert logged.data.metrics["summary/mala/acceptance_rate/step_size_0.1/mean"] == 0.9
    err = capsys.readouterr().err
    assert f"MLflow sweep: {parent.run_id}" in err and "  experiment: mlflow-sweep" in err
    assert PARENT_ENV not in __import__("os").environ  # the environment is restored


@pytest.mark.slow
def test_a_sweep_is_one_parent_run_with_the_runs_nested(tmp_path, monkeypatch):
    import os
    import subprocess
    import sys

    pipeline = tmp_path / "sweep.toml"
    pipeline.write_text(SWEEP_TOML)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", tracking.ENV)}
    env["MLFLOW_TRACKING_URI"] = uri
    args = [
        "sweep",
        str(pipeline),
        "--seeds",
        "0:2",
        "--grid",
        "stage.mala.step_size=0.1,0.5",
        "--workers",
        "1",
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "quadriga", *args, "--out", str(tmp_path / "sw"), "--with", "mlflow"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream, in the order a terminal shows it
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "warning" not in proc.stdout
    # the results, then the files, then where the sweep is logged
    lines = proc.stdout.splitlines()
    block = next(i for i, line in enumerate(lines) if line.startswith("MLflow sweep: "))
    table = next(i for i, line in enumerate(lines) if "energy_distance" in line)
    figure = next(i for i, line in enumerate(lines) if line.startswith("figure: "))
    assert table < figure < block, proc.stdout
    client = mlflow.MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("mlflow-sweep")
    runs = client.search_runs([experiment.experiment_id])
    (parent,) = [r for r in runs if "quadriga.sweep" in r.data.tags]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert len(runs) == 5 and len(children) == 4  # 2 seeds x 2 step sizes, all nested
    assert parent.info.status == "FINISHED" and json.loads(parent.data.params["sweep.seeds"]) == [0, 1]
    assert {a.path for a in client.list_artifacts(parent.info.run_id)} >= {"summary.csv", "summary.png"}
    for child in children:
        run_dir = child.data.tags["quadriga.run_dir"]
        with open(os.path.join(run_dir, "results.json")) as fh:
            values = json.load(fh)["stages"]["energy"]["values"]
        assert child.data.metrics["energy/mala/energy_distance"] == pytest.approx(
            values["mala/energy_distance"]
        )
    assert {c.data.params["stage.mala.step_size"] for c in children} == {"0.1", "0.5"}


def test_a_new_store_s_setup_lines_are_not_printed(tmp_path):
    """The first run into a new ``mlflow.db`` prints quadriga's lines, not MLflow's INFO chatter."""
    import os
    import subprocess
    import sys

    (tmp_path / "p.toml").write_text(tracker_sweep_toml("mlflow-quiet"))
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}", "COLUMNS": "80"}
    env.pop(tracking.ENV, None)
    proc = subprocess.run(
        [sys.executable, "-m", "quadriga", "run", "p.toml", "--with", "mlflow", "--quiet"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "MLflow run: " in proc.stderr
    assert "Creating initial MLflow database tables" not in proc.stderr, proc.stderr
    assert "INFO" not in proc.stderr, proc.stderr
