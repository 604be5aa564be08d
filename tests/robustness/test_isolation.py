"""Processes that end without a word: a plugin ending the process at import (os._exit, a signal) is
reported broken while every other command works; a run whose process is gone (SIGKILL, os._exit in
a stage) reads as interrupted in every reader and resumes; SIGTERM stops sweep and verify as Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from robust_helpers import GOOD, assert_clean
from test_faults import THREE, _spawn, _wait_for, assert_never_running, pipeline, status

SWEEP = ["sweep", "p.toml", "--seeds", "0:1", "--workers", "1", "--out", "s"]
DRAWN = "*/stages/draw/record.json"
EXIT_AT_IMPORT = {
    "os._exit": ("import os\nos._exit(3)\n", "exit code 3"),
    "SIGKILL": ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "signal SIGKILL"),
}


def _dist(root: Path, name: str, plugin: str, module: str, source: str) -> None:
    """A throwaway distribution ``name`` with entry point ``plugin = module`` under ``root``."""
    info = root / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[quadriga]\n{plugin} = {module}\n")
    (root / f"{module}.py").write_text(source)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    """The registry cache and import record of this file's tests (the installed plugins probed once)."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def env_with(subprocess_env, cache_dir):
    """``env_with(root) -> env``: the subprocess environment with ``root`` on its path, its own caches."""

    def make(root: Path) -> dict[str, str]:
        env = dict(subprocess_env)
        env["PYTHONPATH"] = os.pathsep.join([str(root), env["PYTHONPATH"]])
        env["QUADRIGA_CACHE_DIR"] = str(cache_dir)
        return env

    return make


def _quadriga(args, env, cwd, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "quadriga", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize("how", list(EXIT_AT_IMPORT))
def test_a_plugin_that_ends_the_process_at_import_is_broken_and_everything_else_works(
    tmp_path, env_with, how
):
    body, ended = EXIT_AT_IMPORT[how]
    root = tmp_path / "extra"
    _dist(root, "quadriga-exits-hard", "exitshard", "exitshard_mod", body)
    env = env_with(root)
    (tmp_path / "p.toml").write_text(GOOD)
    if how != "os._exit":
        o = _quadriga(["list", "--json"], env, tmp_path)
        assert o.returncode == 0, (o.returncode, o.stdout, o.stderr)
        data = json.loads(o.stdout)
        assert "toy-iid" in {c["name"] for c in data["components"]}  # the other plugins work
        (broken,) = [b for b in data["broken"] if b["distribution"] == "quadriga-exits-hard"]
        assert broken["plugin"] == "exitshard" and f"ended the process ({ended})" in broken["error"], broken
        return
    o = _quadriga(["list"], env, tmp_path)
    assert o.returncode == 0, (o.returncode, o.stdout, o.stderr)
    text = " ".join((o.stdout + o.stderr).split())
    assert "toy-iid" in o.stdout and "exitshard" in text and ended in text, text
    o = _quadriga(["doctor"], env, tmp_path)
    assert o.returncode == 1 and "quadriga-exits-hard" in o.stdout and ended in o.stdout, (o.stdout, o.stderr)
    o = _quadriga(["run", "p.toml", "--check"], env, tmp_path)
    assert o.returncode == 0 and "Traceback" not in o.stderr, (o.stdout, o.stderr)


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("raise KeyboardInterrupt\n", "raised KeyboardInterrupt by itself"),
        ("raise GeneratorExit\n", "GeneratorExit"),
    ],
)
def test_a_plugin_raising_a_base_exception_at_import_is_broken_and_everything_else_works(
    tmp_path, env_with, body, needle
):
    """Not Exception, not SystemExit: still that plugin's failure, not a Ctrl-C or a traceback."""
    root = tmp_path / "extra"
    _dist(root, "quadriga-raises-base", "raisesbase", "raisesbase_mod", body)
    o = _quadriga(["list", "--json"], env_with(root), tmp_path)
    assert o.returncode == 0 and "Traceback" not in o.stderr, (o.returncode, o.stdout, o.stderr)
    data = json.loads(o.stdout)
    assert "toy-iid" in {c["name"] for c in data["components"]}
    (broken,) = [b for b in data["broken"] if b["distribution"] == "quadriga-raises-base"]
    assert broken["plugin"] == "raisesbase" and needle in broken["error"], broken


def test_a_known_plugin_is_not_probed_again_until_its_files_change(site, tmp_path, monkeypatch):
    """The record of clean imports: a second discovery starts no child; an edited module is probed again."""
    from quadriga.registry import Registry, probe

    monkeypatch.setenv("QUADRIGA_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "extra"
    _dist(root, "quadriga-fine", "fine", "fine_mod", "X = 1\n")
    monkeypatch.syspath_prepend(str(root))
    children = []
    real = probe._run_child

    def spy(left, *args):
        children.append([n for n, _, _ in left])
        return real(left, *args)

    monkeypatch.setattr(probe, "_run_child", spy)
    assert Registry(use_env=False).load().plugins["fine"].status == "ok"
    assert children and "fine" in children[0] and "toy" in children[0]
    record = json.loads(Path(probe.record_path()).read_text())["imports"]
    assert str(root / "fine_mod.py") in record["quadriga-fine 1.0 fine = fine_mod"]
    children.clear()
    assert Registry(use_env=False).load().plugins["fine"].status == "ok"
    assert children == []  # every plugin known: imported in-process at once
    time.sleep(0.01)
    (root / "fine_mod.py").write_text("X = 2  # edited\n")
    sys.modules.pop("fine_mod", None)
    assert Registry(use_env=False).load().plugins["fine"].status == "ok"
    assert children == [["fine"]]


def test_a_plugin_edited_to_end_the_process_is_caught_on_the_next_call(tmp_path, env_with):
    root = tmp_path / "extra"
    _dist(root, "quadriga-edited", "edited", "edited_mod", "X = 1\n")
    env = env_with(root)
    o = _quadriga(["--no-cache", "list", "--json"], env, tmp_path)
    assert o.returncode == 0 and not json.loads(o.stdout)["broken"], (o.stdout, o.stderr)
    time.sleep(0.01)
    (root / "edited_mod.py").write_text("import os\nos._exit(7)\n")
    o = _quadriga(["list", "--json"], env, tmp_path)
    assert o.returncode == 0, (o.returncode, o.stdout, o.stderr)
    (broken,) = json.loads(o.stdout)["broken"]
    assert "exit code 7" in broken["error"], broken


def test_a_plugin_that_hangs_in_the_probe_is_named_after_the_deadline(site, tmp_path, monkeypatch):
    from quadriga.registry import Registry

    monkeypatch.setenv("QUADRIGA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("QUADRIGA_IMPORT_TIMEOUT", "0.5")
    root = tmp_path / "extra"
    _dist(root, "quadriga-hangs-hard", "hangshard", "hangshard_mod", "import time\ntime.sleep(600)\n")
    monkeypatch.syspath_prepend(str(root))
    start = time.monotonic()
    reg = Registry(use_env=False).load()
    assert time.monotonic() - start < 30
    assert "did not finish within 0.5 s" in reg.plugins["hangshard"].error
    assert reg.plugins["toy"].status == "ok" and "hangshard_mod" not in sys.modules


# ---------------------------------------------------------------- a run whose process is gone
@pytest.mark.parametrize("how", ["sigkill", "os._exit"])
def test_a_run_whose_process_is_gone_reads_as_interrupted_everywhere_and_resumes(
    cli, tmp_path, subprocess_env, how
):
    """The second stage is SIGKILLed, or ends its process with os._exit(3), the first time it runs."""
    marker = tmp_path / "marker"
    if how == "sigkill":
        pipeline(tmp_path, f'die_once = "{marker}"')
    else:
        slow = 'use = "toy-iid"\ninputs = { target = "normal" }\nnum_samples = 10\n{slow}'
        hard = f'use = "exits-hard"\ninputs = {{ target = "normal" }}\nonce = "{marker}"'
        (tmp_path / "p.toml").write_text(THREE.replace(slow, hard))
    proc = _spawn(["run", "p.toml", "--out", "r", "--quiet"], subprocess_env, tmp_path)
    proc.communicate(timeout=300)
    assert proc.returncode == (-signal.SIGKILL if how == "sigkill" else 3) and marker.is_file()
    run = tmp_path / "r"
    assert status(run)["status"] == "running"  # what the dead process left on disk
    from quadriga.rundir import GONE, RunDir
    from quadriga.rundir.loaded import load_run

    rec = RunDir(run).read_status()
    assert rec.status == "interrupted" and rec.error == GONE and rec.stages["draw"].status == "finished"
    assert load_run(run).status == "interrupted"
    o = cli("report", "r", "--out", "report.html")
    assert o.rc == 0, o.text
    html = (tmp_path / "report.html").read_text()
    assert "status-interrupted" in html and "status-running" not in html and "ended without recording" in html
    o = cli("compare", "r", "--out", "cmp")  # draw (toy-iid) has no numbers a summary keeps: rc 1
    said = " ".join(o.out.split())
    assert "r is interrupted: the process running it ended without recording" in said, said
    assert "is running" not in said
    o = cli("run", "--resume", "r", "--quiet")
    assert_clean(o, 0)
    assert status(run)["status"] == "finished" and status(run)["stages"]["draw"]["resumed"] is True


def test_a_sweep_killed_before_it_summarised_reads_its_runs_as_they_are(cli, tmp_path, subprocess_env):
    """SIGKILL to a sweep and its worker: no runs.json; report and compare read each run's own status."""
    pipeline(tmp_path, "sleep = 30")
    proc = _spawn(SWEEP, subprocess_env, tmp_path)
    try:
        assert _wait_for(lambda: bool(list((tmp_path / "s" / "runs").glob(DRAWN))), 120)
        time.sleep(0.3)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert not (tmp_path / "s" / "runs.json").exists()
    from quadriga.summary import sweep_runs

    (run,) = sweep_runs(tmp_path / "s")
    assert run["status"] == "interrupted" and run["seed"] == 0, run
    o = cli("compare", "s", "--out", "cmp")
    assert "0 of 1 runs finished (1 interrupted)" in " ".join(o.out.split()), o.text
    o = cli("report", "s", "--out", "report.html")
    assert o.rc == 0 and "0 of 1 runs finished" in (tmp_path / "report.html").read_text(), o.text


def test_liveness_needs_the_lock_held_by_a_live_process_of_this_host(tmp_path):
    """A lock held by a process that outlived the run (a forked child) does not make the run alive."""
    from quadriga.fileio import LOCK, lock_dir, lock_owner, run_alive

    d = tmp_path / "r"
    d.mkdir()
    assert run_alive(d) is None  # no lock file: nothing can be said
    with lock_dir(d):
        assert run_alive(d) is True and lock_owner(d)[0] == os.getpid()
    assert run_alive(d) is False
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,os,sys,time; fd=os.open(sys.argv[1], os.O_RDWR); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(30)",
            str(d / LOCK),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        import socket

        (d / LOCK).write_text(f"{holder.pid} {socket.gethostname()}\n")
        assert run_alive(d) is True
        dead = subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
        )
        (d / LOCK).write_text(f"{int(dead.stdout)} {socket.gethostname()}\n")
        assert run_alive(d) is False  # the lock is held, but not by the process that ran there
        (d / LOCK).write_text(f"{int(dead.stdout)} another-host.example\n")
        assert run_alive(d) is True  # on another host only the lock can tell
    finally:
        holder.kill()
        holder.communicate()


# ---------------------------------------------------------------- SIGTERM as Ctrl-C
def test_sigterm_on_a_sweep_is_handled_like_ctrl_c(tmp_path, subprocess_env):
    """SIGTERM to the sweep process alone: its worker's run is marked interrupted, exit code 143."""
    pipeline(tmp_path, "sleep = 30")
    proc = _spawn(SWEEP, subprocess_env, tmp_path)
    try:
        assert _wait_for(lambda: bool(list((tmp_path / "s" / "runs").glob(DRAWN))), 120)
        time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "Traceback" not in err, (proc.returncode, out, err)
    assert "terminated (SIGTERM)" in err, err
    (run,) = (tmp_path / "s" / "runs").iterdir()
    data = status(run)
    assert data["status"] == "interrupted" and data["stages"]["draw"]["status"] == "finished", data
    assert_never_running(tmp_path / "s")


def test_sigterm_on_verify_is_handled_like_ctrl_c(cli, tmp_path, monkeypatch):
    """SIGTERM in the middle of a verify's run: exit code 143, the run interrupted, and verify runs again."""
    import quadriga.runner as runner

    real = runner.run_stage

    def terminated_in_check(node, *a, **k):
        if node.name.startswith("check"):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises here
        return real(node, *a, **k)

    before = signal.getsignal(signal.SIGTERM)
    with monkeypatch.context() as m:
        m.setattr(runner, "run_stage", terminated_in_check)
        o = cli("verify", "toy-claim", "--out", "v")
    assert o.rc == 143 and "terminated (SIGTERM)" in o.err and "Traceback" not in o.text, o.text
    (run,) = [p.parent for p in (tmp_path / "v").rglob("status.json")]
    assert status(run)["status"] == "interrupted", status(run)
    assert signal.getsignal(signal.SIGTERM) is before  # the handler is the caller's again
    o = cli("verify", "toy-claim", "--out", "v")
    assert o.rc == 0, o.text


def test_verify_does_not_replace_a_run_that_is_still_running(cli, tmp_path):
    """verify into the --out of a verify still running is refused; once its process is gone, replaced."""
    from quadriga.fileio import lock_dir

    assert cli("verify", "toy-claim", "--out", "v").rc == 0
    (run,) = [p.parent for p in (tmp_path / "v" / "toy-claim").rglob("status.json")]
    with lock_dir(run):  # as the other verify's run holds it
        o = cli("verify", "toy-claim", "--out", "v")
    assert_clean(o, 2, "is being run by another quadriga process", str(run.name))
    assert run.is_dir()
    assert cli("verify", "toy-claim", "--out", "v").rc == 0


STUBBORN = THREE.replace(
    'use = "toy-iid"\ninputs = { target = "normal" }\nnum_samples = 10\n{slow}',
    'use = "stubborn"\ninputs = { target = "normal" }\nsleep = 60',
)


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT"])
def test_a_stopped_sweep_leaves_no_run_recorded_running(tmp_path, subprocess_env, how):
    """Two workers in a stage deaf to Ctrl-C: the sweep stops them and records both runs interrupted.

    SIGTERM goes to the sweep process alone, SIGINT to its process group (Ctrl-C in a terminal). The
    workers ignore the SIGINT, so the sweep kills them; it then writes each run it had started and
    that did not end as interrupted, keeping the finished stage, instead of leaving ``running``.
    """
    (tmp_path / "p.toml").write_text(STUBBORN)
    proc = _spawn(
        ["sweep", "p.toml", "--seeds", "0:4", "--workers", "2", "--out", "s"], subprocess_env, tmp_path
    )
    try:
        assert _wait_for(lambda: len(list((tmp_path / "s" / "runs").glob(DRAWN))) == 2, 120)
        time.sleep(0.5)  # both in the stubborn stage
    finally:
        if how == "SIGTERM":
            proc.send_signal(signal.SIGTERM)
        else:
            os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == (143 if how == "SIGTERM" else 130), (proc.returncode, out, err)
    assert "Traceback" not in err, err
    runs = sorted((tmp_path / "s" / "runs").iterdir())
    assert [r.name for r in runs] == ["seed0", "seed1"]  # seeds 2 and 3 never started
    for run in runs:
        data = status(run)
        assert data["status"] == "interrupted", (run, data)
        assert data["stages"]["draw"]["status"] == "finished", data
        assert data["stages"].get("slow", {}).get("status") in (None, "interrupted"), data
        assert "stopped" in data["error"], data
    assert_never_running(tmp_path / "s")


@pytest.mark.parametrize("how", ["SIGTERM to the group", "SIGINT to the group", "SIGTERM to the sweep"])
def test_a_stopped_sweep_records_each_run_interrupted_in_the_stage_it_was_in(tmp_path, subprocess_env, how):
    """Workers in an interruptible stage after a finished one, stopped as ``timeout``, Ctrl-C or ``kill`` do.

    SIGTERM to the whole process group (``timeout``, a batch system) reaches the workers and the fork
    server as well as the sweep: each worker records its run interrupted in the stage it was in (not
    killed by SIGTERM's default action), the sweep waits for the workers to be gone although the
    fork server is, and no run stays ``running``. The sweep says how to resume.
    """
    from quadriga.fileio import run_alive

    pipeline(tmp_path, "sleep = 60")
    proc = _spawn(
        ["sweep", "p.toml", "--seeds", "0:4", "--workers", "2", "--out", "s"], subprocess_env, tmp_path
    )
    try:
        assert _wait_for(lambda: len(list((tmp_path / "s" / "runs").glob(DRAWN))) == 2, 120)
        time.sleep(0.5)  # both in the slow stage
    finally:
        if how == "SIGTERM to the sweep":
            proc.send_signal(signal.SIGTERM)
        else:
            os.killpg(proc.pid, signal.SIGTERM if how == "SIGTERM to the group" else signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == (130 if how == "SIGINT to the group" else 143), (proc.returncode, out, err)
    assert "Traceback" not in err, err
    assert "resume by running the same sweep command again" in " ".join(err.lower().split()), err
    assert "quadriga sweep p.toml --seeds 0:4 --workers 2 --out s" in err, err
    runs = sorted((tmp_path / "s" / "runs").iterdir())
    assert [r.name for r in runs] == ["seed0", "seed1"]
    for run in runs:
        data = status(run)
        assert data["status"] == "interrupted", (run, data)
        assert data["stages"]["draw"]["status"] == "finished", data
        assert data["stages"]["slow"]["status"] == "interrupted", data  # written by the run itself
        assert run_alive(run) is False  # its worker is gone
    assert_never_running(tmp_path / "s")


def test_sigterm_on_a_ray_sweep_stops_its_tasks_and_records_them_interrupted(tmp_path, subprocess_env):
    """``--backend ray``: ray.init's own SIGTERM handler (it aborts) is replaced while the tasks run;
    the tasks are cancelled, Ray is shut down (no process holds a run's lock), every run is interrupted."""
    pytest.importorskip("ray")
    from quadriga.fileio import run_alive

    pipeline(tmp_path, "sleep = 60")
    argv = ["sweep", "p.toml", "--seeds", "0:2", "--workers", "2", "--backend", "ray", "--out", "s"]
    proc = _spawn(argv, subprocess_env, tmp_path)
    try:
        assert _wait_for(lambda: len(list((tmp_path / "s" / "runs").glob(DRAWN))) == 2, 240)
        time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143 and "terminated (SIGTERM)" in err, (proc.returncode, out, err)
    runs = sorted((tmp_path / "s" / "runs").iterdir())
    assert [r.name for r in runs] == ["seed0", "seed1"]
    for run in runs:
        data = status(run)
        assert data["status"] == "interrupted" and data["stages"]["draw"]["status"] == "finished", data
        assert run_alive(run) is False  # the Ray worker that ran it is gone
    assert_never_running(tmp_path / "s")
