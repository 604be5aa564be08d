"""The run directory's cost per stage is constant, and nothing finished is lost on a hard kill."""

from __future__ import annotations

import json

import torch
from qtest_helpers import run_cli

from quadriga import rundir
from quadriga.api import run
from quadriga.rundir import RunDir


def repeated(n: int, **extra_stages) -> dict:
    return {
        "pipeline": {"name": "sync", "seed": 3},
        "task": {"normal": {"use": "toy-normal", "dimension": 2}},
        "stage": {
            "draw": {"use": "toy-iid", "inputs": {"target": "normal"}, "num_samples": 5, "repeat": n},
            **extra_stages,
        },
    }


def test_status_and_results_are_rewritten_a_bounded_number_of_times(registry, tmp_path, monkeypatch):
    writes = []
    original = RunDir.write_status
    monkeypatch.setattr(RunDir, "write_status", lambda self, s: (writes.append(1), original(self, s)))
    monkeypatch.setattr(rundir, "SYNC_SECONDS", 1e9)
    lazy = run(repeated(40), registry=registry, out=tmp_path / "lazy")
    assert lazy.status == "finished"
    assert len(writes) == 2  # at the start and at the end, not once per stage
    monkeypatch.setattr(rundir, "SYNC_SECONDS", 0.0)
    writes.clear()
    eager = run(repeated(40), registry=registry, out=tmp_path / "eager")
    assert len(writes) > 2  # intermediate rewrites (at most one per stage, a tenth of the time)
    # the same files either way: every stage, in pipeline order
    for name in ("results.json",):
        assert (lazy.dir / name).read_text() == (eager.dir / name).read_text()
    results = json.loads((lazy.dir / "results.json").read_text())
    assert list(results["stages"]) == [f"draw[{i}]" for i in range(40)]
    status = json.loads((lazy.dir / "status.json").read_text())
    assert status["status"] == "finished" and len(status["stages"]) == 40
    assert all(s["status"] == "finished" for s in status["stages"].values())


def test_a_hard_kill_leaves_every_finished_stage_and_resume_reloads_them(registry, plugin_path, tmp_path):
    import tomli_w

    data = repeated(
        6, boom={"use": "toy-iid", "inputs": {"target": "normal"}, "die_once": str(tmp_path / "died")}
    )
    source = tmp_path / "sync.toml"
    source.write_text(tomli_w.dumps(data))
    out = tmp_path / "killed"
    proc = run_cli(["run", str(source), "--out", str(out)], site=plugin_path)
    assert proc.returncode != 0 and (tmp_path / "died").exists()  # SIGKILL in stage 'boom'
    rd = RunDir(out)
    status = rd.read_status()  # status.json may lag; the stage records fill it in
    finished = [n for n, s in status.stages.items() if s.status == "finished"]
    assert sorted(finished) == sorted(f"draw[{i}]" for i in range(6))
    assert set(rd.read_results()["stages"]) == set(finished)
    resumed = run(source, registry=registry, resume=out)
    assert resumed.status == "finished"
    saved = json.loads((out / "status.json").read_text())["stages"]
    assert all(saved[f"draw[{i}]"].get("resumed") is True for i in range(6))
    assert "resumed" not in saved["boom"]
    clean = run(source, registry=registry, out=tmp_path / "clean")
    for i in range(6):
        assert torch.equal(resumed.artifacts[f"draw[{i}]"].x, clean.artifacts[f"draw[{i}]"].x)
    assert (out / "results.json").read_text() == (clean.dir / "results.json").read_text()


def test_a_rerun_stage_that_fails_does_not_keep_its_earlier_record(registry, tmp_path):
    data = repeated(2, boom={"use": "toy-iid", "inputs": {"target": "normal"}})
    first = run(data, registry=registry, out=tmp_path / "r")
    assert first.status == "finished"
    rd = RunDir(first.dir)
    assert (rd.stage_dir("boom") / "record.json").is_file()
    rd.clear_stage_record("boom")
    assert not (rd.stage_dir("boom") / "record.json").exists()
    rd.clear_stage_record("boom")  # a missing record is fine


def test_a_new_run_directory_clears_the_records_it_wrote_and_looks_up_no_other(tmp_path, monkeypatch):
    from quadriga.rundir.records import StageStatus

    rd = RunDir.create(tmp_path / "new", tmp_path, "p")
    looked: list[str] = []
    real = RunDir._file
    monkeypatch.setattr(RunDir, "_file", lambda self, name: looked.append(name) or real(self, name))
    rd.clear_stage_record("never-written")  # nothing there in a directory this object made
    assert looked == []
    rd.write_stage_record("a", StageStatus("finished", "toy-iid", "sampler"), {"type": "Samples"})
    assert (rd.stage_dir("a") / "record.json").is_file()
    rd.clear_stage_record("a")
    assert not (rd.stage_dir("a") / "record.json").exists()
    reopened = RunDir(rd.path)  # not made by this object: records are looked for on disk
    rd.write_stage_record("b", StageStatus("finished", "toy-iid", "sampler"), {"type": "Samples"})
    reopened.clear_stage_record("b")
    assert not (rd.stage_dir("b") / "record.json").exists()
