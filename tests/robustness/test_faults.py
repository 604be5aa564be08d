"""Faults during a run: each recorded (exit code != 0, a status of failed or interrupted, never
running), nothing finished lost, nothing written outside the run directory."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from robust_helpers import GOOD, assert_clean

#: three stages: draw (fast), slow (sleeps or misbehaves), check
THREE = GOOD.replace(
    "[stage.check]",
    '[stage.slow]\nuse = "toy-iid"\ninputs = { target = "normal" }\nnum_samples = 10\n{slow}\n\n'
    "[stage.check]",
)


def pipeline(tmp_path: Path, slow: str = "", text: str = THREE) -> str:
    (tmp_path / "p.toml").write_text(text.replace("{slow}", slow))
    return "p.toml"


def status(run: Path) -> dict:
    """The raw status.json (not merged with the stage records)."""
    return json.loads((run / "status.json").read_text())


def states(run: Path) -> dict[str, str]:
    return {n: s["status"] for n, s in status(run)["stages"].items()}


def assert_never_running(root: Path) -> None:
    for path in root.rglob("status.json"):
        data = json.loads(path.read_text())
        assert data["status"] != "running", (path, data)
        assert all(s["status"] != "running" for s in data["stages"].values()), (path, data)


def assert_nothing_outside(tmp_path: Path, allowed: set[str]) -> None:
    assert {p.name for p in tmp_path.iterdir()} <= allowed | {"p.toml", "runs", "sweeps", "outside"}


# ---------------------------------------------------------------- in-process faults
#: (id, parameters of the failing stage, exit code, what the message and status.json error must hold)
STAGE_FAULTS = [
    ("raises", "fail = true", 1, "RuntimeError: asked to fail"),
    ("nan-artifact", "nan = true", 1, "non-finite"),
]


@pytest.mark.parametrize(
    ("slow", "rc", "needle"), [c[1:] for c in STAGE_FAULTS], ids=[c[0] for c in STAGE_FAULTS]
)
def test_stage_fault_is_recorded_and_earlier_stages_kept(cli, tmp_path, slow, rc, needle):
    o = cli("run", pipeline(tmp_path, slow), "--out", "r", "--quiet")
    assert_clean(o, rc, needle, "stage 'slow' failed")
    run = tmp_path / "r"
    assert status(run)["status"] == "failed" and needle in status(run)["error"]
    assert states(run) == {"draw": "finished", "slow": "failed"}
    assert (run / "error.txt").is_file() and (run / "stages" / "draw" / "artifact.pt").is_file()
    assert_never_running(tmp_path)


@pytest.mark.parametrize("code", [3, 0, 1])
def test_sys_exit_in_a_component_is_a_failed_stage(cli, tmp_path, code):
    text = THREE.replace(
        'use = "toy-iid"\ninputs = { target = "normal" }\nnum_samples = 10',
        f'use = "exits"\ninputs = {{ target = "normal" }}\ncode = {json.dumps(code)}',
    )
    o = cli("run", pipeline(tmp_path, text=text), "--out", "r", "--quiet")
    assert_clean(o, 1, "sys.exit", "stage 'slow' failed")
    assert (
        status(tmp_path / "r")["status"] == "failed"
        and f"sys.exit({code!r})" in status(tmp_path / "r")["error"]
    )
    assert states(tmp_path / "r")["draw"] == "finished"


def _raise_in(monkeypatch, stage: str, exc: BaseException) -> None:  # a monkeypatch.context()
    """Make ``run_stage`` raise ``exc`` for ``stage``."""
    import quadriga.runner as runner

    real = runner.run_stage

    def fake(node, *a, **k):
        if node.name == stage:
            raise exc
        return real(node, *a, **k)

    monkeypatch.setattr(runner, "run_stage", fake)


def test_ctrl_c_in_a_stage_keeps_finished_stages_and_resume_completes(cli, tmp_path, monkeypatch):
    with monkeypatch.context() as m:
        _raise_in(m, "slow", KeyboardInterrupt())
        o = cli("run", pipeline(tmp_path), "--out", "r", "--quiet")
    assert_clean(o, 130, "interrupted", "--resume r")
    assert status(tmp_path / "r")["status"] == "interrupted"
    assert states(tmp_path / "r") == {"draw": "finished", "slow": "interrupted"}
    o = cli("run", "--resume", "r", "--quiet")
    assert_clean(o, 0, "reloading draw")
    assert status(tmp_path / "r")["status"] == "finished"


@pytest.mark.parametrize(
    "exc", [KeyboardInterrupt(), SystemExit(9), RuntimeError("boom")], ids=["ctrl-c", "exit", "crash"]
)
def test_crash_during_resume_keeps_the_record_of_finished_stages(cli, tmp_path, monkeypatch, exc):
    """The resume dies in its first re-run stage: status.json itself still lists draw as finished."""
    marker = tmp_path / "marker"
    o = cli("run", pipeline(tmp_path, f'fail_once = "{marker}"'), "--out", "r", "--quiet")
    assert o.rc == 1 and states(tmp_path / "r") == {"draw": "finished", "slow": "failed"}
    with monkeypatch.context() as m:
        _raise_in(m, "slow", exc)
        o = cli("run", "--resume", "r", "--quiet")
    assert o.rc != 0 and "Traceback" not in o.text
    assert states(tmp_path / "r")["draw"] == "finished", status(tmp_path / "r")
    assert status(tmp_path / "r")["status"] in ("failed", "interrupted")
    assert_never_running(tmp_path)
    o = cli("run", "--resume", "r", "--quiet")
    assert_clean(o, 0, "reloading draw")


def _disk_full_after(monkeypatch, module, name: str, allowed: int) -> list[int]:
    """Let ``module.name`` succeed ``allowed`` times, then raise OSError(ENOSPC)."""
    real = getattr(module, name)
    calls = [0]

    def fake(*a, **k):
        calls[0] += 1
        if calls[0] > allowed:
            raise OSError(errno.ENOSPC, "No space left on device", str(a[0]) if a else None)
        return real(*a, **k)

    monkeypatch.setattr(module, name, fake)
    return calls


def test_disk_full_saving_an_artifact(cli, tmp_path, monkeypatch):
    from quadriga.rundir import RunDir

    _disk_full_after(monkeypatch, RunDir, "save_artifact", 1)
    o = cli("run", pipeline(tmp_path), "--out", "r", "--quiet")
    assert_clean(o, 1, "No space left on device")
    assert status(tmp_path / "r")["status"] == "failed"
    assert states(tmp_path / "r") == {"draw": "finished", "slow": "failed"}


def test_disk_full_everywhere_including_the_error_handler(cli, tmp_path, monkeypatch):
    """After the first stage nothing can be written: no crash, exit 1, the status is not left running."""
    import quadriga.fileio as fileio

    with monkeypatch.context() as m:
        _disk_full_after(m, fileio, "atomic_write_text", 6)
        o = cli("run", pipeline(tmp_path), "--out", "r", "--quiet")
    assert o.rc == 1 and "Traceback" not in o.text and "internal error" not in o.text, o.text
    assert "No space left on device" in o.text
    assert not [p for p in (tmp_path / "r").rglob(".*tmp")], "temporary files left behind"
    from quadriga.rundir import RunDir

    assert RunDir(tmp_path / "r").read_status().status in ("failed", "interrupted")
    o = cli("run", "--resume", "r", "--quiet")
    assert_clean(o, 0)
    assert status(tmp_path / "r")["status"] == "finished"


def test_disk_full_in_the_error_handler_only(cli, tmp_path, monkeypatch):
    from quadriga.rundir import RunDir

    def no_space(self, text):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(RunDir, "write_error", no_space)
    o = cli("run", pipeline(tmp_path, "fail = true"), "--out", "r", "--quiet")
    assert_clean(o, 1, "asked to fail", "could not write error.txt")
    assert status(tmp_path / "r")["status"] == "failed"


def test_disk_full_before_the_run_starts(cli, tmp_path, monkeypatch):
    import quadriga.fileio as fileio

    _disk_full_after(monkeypatch, fileio, "atomic_write_text", 0)
    o = cli("run", pipeline(tmp_path), "--out", "r", "--quiet")
    assert o.rc == 1 and "Traceback" not in o.text and "internal error" not in o.text, o.text
    assert "No space left on device" in o.err and "\n\n" not in o.err.strip()


def test_disk_full_streaming_metrics(cli, tmp_path, monkeypatch):
    import quadriga.rundir as rundir

    _disk_full_after(monkeypatch, rundir, "append_jsonl", 2)
    text = GOOD.replace(
        "[stage.check]", '[stage.learn]\nuse = "toy-counter"\ninputs = { task = "normal" }\n\n[stage.check]'
    )
    o = cli("run", pipeline(tmp_path, text=text), "--out", "r", "--quiet")
    assert_clean(o, 1, "No space left on device", "stage 'learn' failed")
    assert states(tmp_path / "r") == {"draw": "finished", "learn": "failed"}


@pytest.mark.parametrize("link", ["stages", "metrics.jsonl", "stages/draw"])
def test_symlink_inside_a_run_directory_is_refused_on_resume(cli, tmp_path, link):
    marker = tmp_path / "marker"
    cli("run", pipeline(tmp_path, f'fail_once = "{marker}"'), "--out", "r", "--quiet")
    outside = tmp_path / "outside"
    outside.mkdir()
    target = tmp_path / "r" / link
    if target.is_dir():
        import shutil

        shutil.rmtree(target)
    else:
        target.unlink(missing_ok=True)
    target.symlink_to(outside, target_is_directory=True)
    o = cli("run", "--resume", "r", "--quiet")
    assert o.rc in (1, 2) and "symbolic link" in o.text and "Traceback" not in o.text, o.text
    assert list(outside.iterdir()) == [], "nothing may be written through the link"


def test_symlink_as_the_runs_folder_of_a_sweep_is_refused(cli, tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "runs").symlink_to(tmp_path / "outside", target_is_directory=True)
    o = cli("sweep", pipeline(tmp_path), "--seeds", "0:1", "--out", "s", "--workers", "1")
    assert_clean(o, 2, "symbolic link")
    assert list((tmp_path / "outside").iterdir()) == []


def test_resume_while_another_process_runs_it_is_refused(cli, tmp_path):
    from quadriga.fileio import lock_dir

    marker = tmp_path / "marker"
    cli("run", pipeline(tmp_path, f'fail_once = "{marker}"'), "--out", "r", "--quiet")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,os,sys,time; fd=os.open(sys.argv[1], os.O_RDWR|os.O_CREAT); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(30)",
            str(tmp_path / "r" / ".lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        assert_clean(cli("run", "--resume", "r", "--quiet"), 2, "another quadriga process")
    finally:
        holder.kill()
        holder.communicate()
    assert_clean(cli("run", "--resume", "r", "--quiet"), 0)
    with lock_dir(tmp_path / "r"):
        pass


# ---------------------------------------------------------------- faults that need a real process
def _spawn(args, env, cwd):
    return subprocess.Popen(
        [sys.executable, "-m", "quadriga", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _wait_for(predicate, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_sigkill_leaves_no_running_status_behind(tmp_path, subprocess_env):
    """A hard kill cannot write anything: the next reader sees the run as interrupted, --resume works."""
    pipeline(tmp_path, "sleep = 30")
    proc = _spawn(["run", "p.toml", "--out", "r", "--quiet"], subprocess_env, tmp_path)
    try:
        assert _wait_for(lambda: (tmp_path / "r" / "stages" / "draw" / "record.json").is_file())
        time.sleep(0.3)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    from quadriga.rundir import RunDir

    rec = RunDir(tmp_path / "r").read_status()
    assert rec.status == "interrupted" and rec.stages["draw"].status == "finished"
    assert all(s.status != "running" for s in rec.stages.values())


def test_ctrl_c_on_a_sweep_keeps_the_run_s_finished_stages(tmp_path, subprocess_env):
    """A real Ctrl-C (SIGINT to the process group: the sweep and its worker)."""
    pipeline(tmp_path, "sleep = 30")
    proc = _spawn(
        ["sweep", "p.toml", "--seeds", "0:1", "--workers", "1", "--out", "s"], subprocess_env, tmp_path
    )
    try:
        found = _wait_for(
            lambda: bool(list((tmp_path / "s" / "runs").glob("*/stages/draw/record.json"))), 120
        )
        assert found
        time.sleep(0.5)
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, (out, err)
    (run,) = (tmp_path / "s" / "runs").iterdir()
    data = status(run)
    assert data["status"] == "interrupted" and data["stages"]["draw"]["status"] == "finished", data
    assert_never_running(tmp_path / "s")


def _one_sweep_run(tmp_path: Path, text: str):
    from quadriga.sweep import plan

    (tmp_path / "p.toml").write_text(text)
    (spec,) = plan([0], [])
    return str(tmp_path / "p.toml"), spec, str(tmp_path / "s" / "runs" / spec.run_id)


@pytest.mark.parametrize(
    "exc", [KeyboardInterrupt(), SystemExit(4), MemoryError()], ids=["ctrl-c", "exit", "memory"]
)
def test_sweep_run_interrupted_in_a_stage_keeps_its_finished_stages(site, tmp_path, monkeypatch, exc):
    """What a worker records when its run is stopped: the finished stages stay, none is running."""
    from quadriga.sweep import execute_one

    source, spec, run_dir = _one_sweep_run(tmp_path, THREE.replace("{slow}", ""))
    with monkeypatch.context() as m:
        _raise_in(m, "slow", exc)
        outcome = execute_one(source, spec, run_dir)
    want = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
    assert outcome["status"] == want
    data = status(Path(run_dir))
    assert data["status"] == want and data["stages"]["draw"]["status"] == "finished", data
    assert_never_running(tmp_path)
    again = execute_one(source, spec, run_dir)  # the next sweep resumes: draw is reloaded
    assert again["status"] == "finished" and status(Path(run_dir))["stages"]["draw"].get("resumed")


#: THREE with draw saved thinned and slow saved not at all: check reads every draw of draw
THINNED = THREE.replace("num_samples = 50\n", "num_samples = 50\nsave_thin = 7\n")


def test_interrupted_run_of_a_thinned_stage_resumes_to_the_uninterrupted_results(cli, tmp_path, monkeypatch):
    """Interrupted after draw (saved thinned): --resume reloads draw's full copy, and results.json
    is byte for byte that of the same run left uninterrupted; the finished run keeps no copy."""
    import quadriga.runner as runner

    pipeline(tmp_path, "sleep = 0", THINNED)
    with monkeypatch.context() as m:
        _raise_in(m, "slow", KeyboardInterrupt())
        o = cli("run", "p.toml", "--out", "r", "--quiet")
    assert o.rc == 130 and states(tmp_path / "r") == {"draw": "finished", "slow": "interrupted"}
    assert sorted(p.name for p in (tmp_path / "r" / ".resume").iterdir()) == ["draw"]
    ran: list[str] = []
    real = runner.run_stage
    with monkeypatch.context() as m:
        m.setattr(runner, "run_stage", lambda node, *a, **k: ran.append(node.name) or real(node, *a, **k))
        o = cli("run", "--resume", "r", "--quiet")
    assert_clean(o, 0, "reloading draw from its full copy in .resume/")
    assert ran == ["slow", "check"]
    assert not (tmp_path / "r" / ".resume").exists()
    o = cli("run", "p.toml", "--out", "whole", "--quiet")
    assert o.rc == 0 and not (tmp_path / "whole" / ".resume").exists()
    assert (tmp_path / "r" / "results.json").read_bytes() == (
        tmp_path / "whole" / "results.json"
    ).read_bytes()
    # the thinned file is what stages/ holds in both
    from quadriga.artifacts import Samples

    assert Samples.load(tmp_path / "r" / "stages" / "draw").x.shape == (8, 2)


def test_a_damaged_full_copy_is_named_and_its_stage_runs_again(cli, tmp_path):
    pipeline(tmp_path, "fail = true", THINNED)
    assert cli("run", "p.toml", "--out", "r", "--quiet").rc == 1
    copy = tmp_path / "r" / ".resume" / "draw" / "artifact.pt"
    copy.write_bytes(copy.read_bytes()[:100])
    o = cli("run", "--resume", "r")
    assert "Traceback" not in o.text
    assert "stage 'draw': its saved r/.resume/draw/artifact.pt" in " ".join(o.text.split()), o.text
    record = status(tmp_path / "r")["stages"]["draw"]
    assert record["status"] == "finished" and not record.get("resumed"), record


def test_sweep_run_interrupted_after_a_thinned_stage_reloads_its_full_copy(site, tmp_path, monkeypatch):
    """A sweep's worker resumes through the same runner: draw's full copy is reloaded, then dropped."""
    from quadriga.sweep import execute_one

    source, spec, run_dir = _one_sweep_run(tmp_path, THINNED.replace("{slow}", ""))
    with monkeypatch.context() as m:
        _raise_in(m, "slow", KeyboardInterrupt())
        assert execute_one(source, spec, run_dir)["status"] == "interrupted"
    assert (Path(run_dir) / ".resume" / "draw" / "artifact.pt").is_file()
    again = execute_one(source, spec, run_dir)
    assert again["status"] == "finished" and status(Path(run_dir))["stages"]["draw"].get("resumed")
    assert not (Path(run_dir) / ".resume").exists()


def _execute_in_child(args):
    from quadriga.sweep import execute_one

    return execute_one(*args)


def test_two_identical_sweeps_at_once_run_each_run_once(site, tmp_path):
    """Two processes run the same sweep runs at once: the lock makes each run execute exactly once."""
    import multiprocessing as mp

    from quadriga.sweep import plan

    tally = tmp_path / "tally.txt"
    text = GOOD.replace(
        'use = "toy-iid"\ninputs = { target = "normal" }\nnum_samples = 50',
        f'use = "tally"\ninputs = {{ target = "normal" }}\ntally = "{tally}"\nsleep = 0.5',
    )
    (tmp_path / "p.toml").write_text(text)
    specs = plan([0, 1, 2], [])
    tasks = [(str(tmp_path / "p.toml"), s, str(tmp_path / "s" / "runs" / s.run_id)) for s in specs]
    with mp.get_context("fork").Pool(2) as pool:
        first = pool.map_async(_execute_in_child, tasks)
        second = pool.map_async(_execute_in_child, tasks[::-1])
        outcomes = first.get(120) + second.get(120)
    assert all(o["status"] == "finished" for o in outcomes), outcomes
    assert tally.read_text().count("ran") == 3, "every run must run exactly once"
    assert sum(bool(o.get("skipped")) for o in outcomes) == 3
    assert_never_running(tmp_path / "s")


def test_sweep_worker_that_dies_is_recorded_and_retried(cli, tmp_path):
    marker = tmp_path / "died"
    pipeline(tmp_path, f'die_once = "{marker}"')
    o = cli("sweep", "p.toml", "--seeds", "0:2", "--workers", "1", "--out", "s")
    assert_clean(o, 1, "worker process died", "1 of 2 runs failed")
    statuses = sorted(status(r)["status"] for r in (tmp_path / "s" / "runs").iterdir())
    assert statuses == ["failed", "finished"], statuses
    assert_never_running(tmp_path / "s")
    from quadriga.sweep import execute_one, plan

    failed = next(r for r in (tmp_path / "s" / "runs").iterdir() if status(r)["status"] == "failed")
    spec = next(sp for sp in plan([0, 1], []) if sp.run_id == failed.name)
    assert (
        execute_one(str(tmp_path / "p.toml"), spec, str(failed))["status"] == "finished"
    )  # what a re-run does
    assert status(failed)["stages"]["draw"].get("resumed"), "the retry keeps the finished stage"


def test_sigint_on_a_run_saves_and_says_how_to_resume(tmp_path, subprocess_env):
    pipeline(tmp_path, "sleep = 30")
    proc = _spawn(["run", "p.toml", "--out", "r", "--quiet"], subprocess_env, tmp_path)
    try:
        assert _wait_for(lambda: (tmp_path / "r" / "stages" / "draw" / "record.json").is_file())
        time.sleep(0.3)
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "--resume r" in err and "Traceback" not in err, (out, err)
    assert status(tmp_path / "r")["status"] == "interrupted"
    assert states(tmp_path / "r") == {"draw": "finished", "slow": "interrupted"}


@pytest.mark.parametrize("thin", [False, True], ids=["saved", "thinned"])
def test_sigterm_on_a_run_is_handled_like_ctrl_c_and_the_run_resumes(tmp_path, subprocess_env, thin):
    """SIGTERM to the process alone, as `kill`, `timeout` and a batch system's time limit send it.

    With ``save_thin`` on the finished sampler, the resume reloads its full copy from .resume/.
    """
    text = THREE.replace("num_samples = 50\n", "num_samples = 50\nsave_thin = 5\n") if thin else THREE
    pipeline(tmp_path, "sleep = 3", text)
    proc = _spawn(["run", "p.toml", "--out", "r", "--quiet"], subprocess_env, tmp_path)
    try:
        assert _wait_for(lambda: (tmp_path / "r" / "stages" / "draw" / "record.json").is_file())
        time.sleep(0.3)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, (proc.returncode, out, err)
    assert "Traceback" not in out + err
    lines = err.splitlines()
    assert "terminated (SIGTERM): finished stages are saved in" in lines
    assert "  quadriga run --resume r" in lines
    assert status(tmp_path / "r")["status"] == "interrupted"
    assert states(tmp_path / "r") == {"draw": "finished", "slow": "interrupted"}
    assert (tmp_path / "r" / ".resume" / "draw" / "artifact.pt").is_file() is thin
    proc = _spawn(["run", "--resume", "r", "--quiet"], subprocess_env, tmp_path)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "reloading draw" in out, (out, err)
    assert ("reloading draw from its full copy in .resume/" in " ".join(out.split())) is thin, out
    assert status(tmp_path / "r")["status"] == "finished"
    assert status(tmp_path / "r")["stages"]["draw"]["resumed"] is True
    assert not (tmp_path / "r" / ".resume").exists()


def test_corpus_size():
    import inspect

    tests = [n for n, f in globals().items() if n.startswith("test_") and inspect.isfunction(f)]
    assert len(tests) + 1 + 2 + 2 + 2 + 2 >= 15


def test_a_library_writer_that_hides_a_full_disk_is_named_a_full_disk(cli, tmp_path, monkeypatch):
    """torch's zip writer reports ENOSPC as "unexpected pos 64 vs 0": the message says the disk is full."""
    import collections

    import torch

    import quadriga.artifacts as artifacts
    import quadriga.fileio as fileio

    real_save = torch.save

    def save(obj, f, *a, **k):
        if str(f).endswith(".tmp") and "slow" in str(f):
            raise RuntimeError("[enforce fail at inline_container.cc:626] . unexpected pos 64 vs 0")
        return real_save(obj, f, *a, **k)

    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(torch, "save", save)
    monkeypatch.setattr(artifacts, "IN_MEMORY_BYTES", -1)  # every artifact through torch's file writer
    monkeypatch.setattr(fileio.shutil, "disk_usage", lambda p: usage(10**9, 10**9, 0))
    o = cli("run", pipeline(tmp_path), "--out", "r", "--quiet")
    assert_clean(o, 1, "No space left on device")
    assert "unexpected pos" not in o.text.split("No space left")[0]
    assert states(tmp_path / "r") == {"draw": "finished", "slow": "failed"}


def test_disk_full_writing_a_small_artifact_written_in_one_call(cli, tmp_path, monkeypatch):
    """A small artifact is serialized in memory and written by one ``os.write``: ENOSPC there fails
    the stage with the disk-full reason, leaves no temporary file, and the earlier stage is kept."""
    import quadriga.fileio as fileio

    real_write = os.write
    failed = []

    def write(fd, data):
        name = os.readlink(f"/proc/self/fd/{fd}") if os.path.exists(f"/proc/self/fd/{fd}") else ""
        if "/slow/.artifact.pt." in name:
            failed.append(name)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(fileio.os, "write", write)
    o = cli("run", pipeline(tmp_path), "--out", "r", "--quiet")
    assert_clean(o, 1, "No space left on device")
    assert len(failed) == 1, failed
    assert not [p for p in (tmp_path / "r").rglob(".*tmp")], "temporary files left behind"
    assert not (tmp_path / "r" / "stages" / "slow" / "artifact.pt").exists()
    assert states(tmp_path / "r") == {"draw": "finished", "slow": "failed"}


@pytest.mark.parametrize("damage", ["truncate", "garbage", "nan"])
def test_a_damaged_saved_artifact_is_named_and_its_stage_runs_again(cli, tmp_path, damage):
    import torch

    o = cli("run", pipeline(tmp_path, "fail = true"), "--out", "r", "--quiet")
    assert o.rc == 1
    saved = tmp_path / "r" / "stages" / "draw" / "artifact.pt"
    if damage == "truncate":
        saved.write_bytes(saved.read_bytes()[:100])
    elif damage == "garbage":
        saved.write_bytes(b"not a zip file at all")
    else:  # a readable file whose draws are NaN: invalid, not reloaded
        from quadriga.artifacts import Samples

        good = Samples.load(saved.parent)
        Samples(x=torch.full_like(good.x, float("nan")), info=good.info).save(saved.parent)
    o = cli("run", "--resume", "r")
    assert "Traceback" not in o.text and "zip" not in o.err.lower(), o.text
    assert "stage 'draw': its saved r/stages/draw/artifact.pt" in " ".join(o.text.split()), o.text
    assert "the stage runs again" in " ".join(o.text.split())
    record = status(tmp_path / "r")["stages"]["draw"]
    assert record["status"] == "finished" and not record.get("resumed"), record


def test_disk_full_frees_the_partial_artifact_before_recording_the_failure(cli, tmp_path, monkeypatch):
    """The writer that hit the full disk still holds its file open: its space is freed first, then
    error.txt and status.json (failed, the disk-full reason) are written."""
    import torch

    import quadriga.artifacts as artifacts
    from quadriga.rundir import RunDir

    real_save, held, seen = torch.save, [], []

    def save(obj, f, *a, **k):
        if str(f).endswith(".tmp") and "slow" in str(f):
            fh = open(f, "wb")  # kept open, as torch's zip writer is by the traceback
            fh.write(b"x" * 200_000)
            fh.flush()
            held.append(fh)
            raise OSError(errno.ENOSPC, "No space left on device", str(f))
        return real_save(obj, f, *a, **k)

    def taken(rd: RunDir) -> tuple[list[int], list[str]]:
        return [os.fstat(h.fileno()).st_size for h in held], [p.name for p in rd.path.rglob(".*.tmp")]

    real_status, real_error = RunDir.write_status, RunDir.write_error

    def write_status(self, record):
        seen.append(("status.json", record.status, *taken(self)))
        return real_status(self, record)

    def write_error(self, text):
        seen.append(("error.txt", None, *taken(self)))
        return real_error(self, text)

    monkeypatch.setattr(torch, "save", save)
    monkeypatch.setattr(artifacts, "IN_MEMORY_BYTES", -1)  # every artifact through torch's file writer
    monkeypatch.setattr(RunDir, "write_status", write_status)
    monkeypatch.setattr(RunDir, "write_error", write_error)
    try:
        o = cli("run", pipeline(tmp_path), "--out", "r", "--quiet")
    finally:
        for fh in held:
            fh.close()
    assert_clean(
        o, 1, "stage 'slow' failed: it ran, but its result could not be saved: No space left on device"
    )
    assert "details: error.txt in the run directory" in o.text
    assert len(held) == 1
    failed = [s for s in seen if s[0] == "error.txt" or s[1] == "failed"]
    assert [s[:2] for s in failed] == [("error.txt", None), ("status.json", "failed")]
    assert all(s[2:] == ([0], []) for s in failed), failed  # emptied and removed before both
    record = status(tmp_path / "r")
    assert record["status"] == "failed" and "No space left on device" in record["error"]
    assert states(tmp_path / "r") == {"draw": "finished", "slow": "failed"}
    assert "No space left on device" in (tmp_path / "r" / "error.txt").read_text()


def test_a_run_that_could_not_write_error_txt_does_not_point_to_it(cli, tmp_path, monkeypatch):
    from quadriga.rundir import RunDir

    def no_space(self, text):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(RunDir, "write_error", no_space)
    o = cli("run", pipeline(tmp_path, "fail = true"), "--out", "r", "--quiet")
    assert_clean(o, 1, "asked to fail", "could not write error.txt", "this re-runs only the rest:")
    assert "error.txt in the run directory" not in o.text
    assert not (tmp_path / "r" / "error.txt").exists()


PREPARE = GOOD.replace('use = "toy-normal"', 'use = "unprepared"\nfail = "{fail}"')


@pytest.mark.parametrize(
    ("fail", "rc", "needles"),
    [
        ("config", 2, ["p.toml, [task.normal], key 'scale': 'scale' must be a positive number"]),
        ("memory", 1, ["[task.normal] could not be prepared", "needs more memory", "14,901 GiB asked for"]),
    ],
)
def test_a_task_that_fails_in_prepare_is_a_recorded_failed_run(cli, tmp_path, fail, rc, needles):
    text = PREPARE.replace("{fail}", fail)
    assert cli("run", pipeline(tmp_path, text=text), "--check").rc == 0  # only running finds it
    o = cli("run", "p.toml", "--out", "r", "--quiet")
    assert o.rc == rc and "Traceback" not in o.text and "internal error" not in o.text, o.text
    for n in needles:
        assert n in o.text, (n, o.text)
    assert "alloc_cpu" not in o.text and "details: error.txt in the run directory" in o.text
    record = status(tmp_path / "r")
    assert record["status"] == "failed" and needles[0] in record["error"], record
    assert record["stages"] == {}
    assert (tmp_path / "r" / "error.txt").is_file()
    o = cli("compare", "r")
    assert "neither a sweep directory nor a run directory" not in o.text, o.text
    assert "is failed" in o.text and needles[0] in " ".join(o.text.split()), o.text


def test_a_stage_out_of_memory_says_what_to_lower(cli, tmp_path):
    text = THREE.replace(
        'use = "toy-iid"\ninputs = { target = "normal" }\nnum_samples = 10',
        'use = "hungry"\ninputs = { target = "normal" }',
    )
    pipeline(tmp_path, text=text)
    assert cli("run", "p.toml", "--check", "--set", "stage.slow.num_chains=1000000000000").rc == 0
    o = cli("run", "p.toml", "--out", "r", "--quiet", "--set", "stage.slow.num_chains=1000000000000")
    message = "stage 'slow' failed: it needs more memory than this machine can give (14,901 GiB asked for)"
    assert_clean(o, 1, "Lower the parameter that sets a size (num_chains, num_samples, dim, widths)")
    assert message in " ".join(o.text.split()), o.text
    assert "alloc_cpu" not in o.text and "enforce fail" not in o.text
    record = status(tmp_path / "r")
    assert record["status"] == "failed" and message in record["error"] and "alloc_cpu" not in record["error"]
    assert "alloc_cpu.cpp" in (tmp_path / "r" / "error.txt").read_text()  # the allocator's words kept there
