"""Every read of a run directory goes through ``quadriga.rundir``; ``--resume`` builds once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from quadriga.errors import ConfigError
from quadriga.rundir import RunDir

FIXTURE = Path(__file__).parent / "fixtures" / "run_v1"


def test_resume_builds_the_saved_pipeline_once(registry, tmp_path, monkeypatch):
    import quadriga.api as api

    first = api.run("toy-pipeline", registry=registry, out=tmp_path / "r")
    built = []
    real = api.load_pipeline
    monkeypatch.setattr(api, "load_pipeline", lambda *a, **k: built.append(a[0]) or real(*a, **k))
    pipeline = api.load_resumed(None, first.dir, registry)
    assert pipeline.name == "toy-pipeline" and len(built) == 1
    assert api.load_resumed("toy-pipeline", first.dir, registry).name == "toy-pipeline" and len(built) == 2
    with pytest.raises(ConfigError, match="is a run of pipeline 'toy-pipeline', not 'other'"):
        api.load_resumed({"pipeline": {"name": "other"}, "stage": {}}, first.dir, registry)
    assert len(built) == 3  # the other source was read for its name, never built


def test_a_sweep_run_that_died_gets_a_typed_status(tmp_path):
    from quadriga.sweep.execute import _mark_failed, _status_of

    run_dir = tmp_path / "r"
    run_dir.mkdir()
    (run_dir / "status.json").write_text(
        json.dumps(
            {
                "status": "running",
                "stages": {
                    "a": {"status": "finished", "seconds": 1.5},
                    "b": {"status": "running"},
                },
            }
        )
    )
    assert _status_of(run_dir) == "running"
    _mark_failed(str(run_dir), "worker process died (signal -9)")
    status = RunDir(run_dir).read_status()
    assert status.status == "failed" and status.error == "worker process died (signal -9)"
    assert {n: s.status for n, s in status.stages.items()} == {"a": "finished", "b": "failed"}
    assert status.stages["a"].seconds == 1.5
    _mark_failed(str(run_dir), "a second report", "interrupted")  # a final status is kept
    assert RunDir(run_dir).recorded_status() == "failed"
    assert _status_of(tmp_path / "missing") is None


def test_run_files_are_read_through_the_run_directory(tmp_path):
    run_dir = shutil.copytree(FIXTURE, tmp_path / "run_v1")
    rd = RunDir(run_dir)
    assert rd.read_pipeline()["stage"]["fit"]["num_steps"] == 3
    assert rd.read_pipeline_text().startswith("[pipeline]") and rd.resumable()
    assert [p.name for p in rd.record_files()] == [
        "manifest.json",
        "pipeline.toml",
        "results.json",
        "status.json",
    ]
    (run_dir / "pipeline.toml").write_text("[pipeline\n")
    with pytest.raises(ConfigError, match="cannot be read as TOML"):
        rd.read_pipeline(key="report")
