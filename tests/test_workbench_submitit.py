"""The submitit sweep backend, run through submitit's local executor (and a stand-in sbatch)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from qtest_helpers import run_cli

from quadriga.errors import ConfigError

pytest.importorskip("submitit", reason="the submitit backend needs submitit (quadriga[slurm])")


def _sweep(site, out, *extra, backend=("--backend", "submitit", "--max-jobs", "2")):
    return run_cli(
        ["sweep", "toy-pipeline", "--out", str(out), *backend, *extra],
        site=site,
        # no srun on the PATH: submitit's local executor, whatever the machine has
        env={"PATH": os.path.dirname(sys.executable) + os.pathsep + "/usr/bin:/bin"},
        timeout=600,
    )


def _table(directory: Path) -> list[dict]:
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow writes results.parquet (quadriga[test])")
    rows = pq.read_table(directory / "results.parquet").to_pylist()
    return sorted(rows, key=lambda r: (r["run_id"], r["stage"], r["metric"]))


def _most_at_once(intervals: list[tuple[float, float]]) -> int:
    """The largest number of the ``(start, end)`` intervals that hold one instant."""
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    alive = most = 0
    for _, step in events:  # at equal times an end (-1) sorts before a start (+1)
        alive += step
        most = max(most, alive)
    return most


def test_submitit_sweep_gives_the_local_table_and_keeps_the_job_cap(plugin_path, tmp_path):
    grid = ("--seeds", "0:2", "--grid", "stage.draw.num_samples=40,400", "--set", "stage.draw.sleep=2")
    local = _sweep(plugin_path, tmp_path / "local", *grid, backend=("--workers", "2"))
    assert local.returncode == 0, local.stdout + local.stderr
    proc = _sweep(plugin_path, tmp_path / "sub", *grid)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "submitit logs:" in proc.stdout and proc.stdout.count("finished after") == 4
    # the header says once that submitit runs on its local executor here, before any run ends
    lines = proc.stdout.splitlines()
    fallback = [i for i, line in enumerate(lines) if "submitit's local executor" in line]
    assert len(fallback) == 1 and "no srun here" in lines[fallback[0]]
    assert lines[fallback[0]].startswith("  executor: ") and len(lines[fallback[0]]) <= 80
    assert lines[fallback[0] - 1] == "  backend: submitit, at most 2 runs at a time"
    assert fallback[0] < min(i for i, line in enumerate(lines) if "finished after" in line)
    # the same tidy table at the same seeds, value for value
    a, b = _table(tmp_path / "local"), _table(tmp_path / "sub")
    assert len(a) == 12 and a == b
    for run in json.loads((tmp_path / "local" / "runs.json").read_text()):
        results = (tmp_path / "local" / "runs" / run["run_id"] / "results.json").read_text()
        assert results == (tmp_path / "sub" / "runs" / run["run_id"] / "results.json").read_text()
        assert (tmp_path / "sub" / "runs" / run["run_id"] / "log.txt").is_file()
    jobs = json.loads((tmp_path / "sub" / "submitit" / "jobs.json").read_text())
    assert len(jobs) == 4 and {j["cluster"] for j in jobs.values()} == {"local"}
    assert all(j["status"] == "finished" and Path(j["stdout"]).is_file() for j in jobs.values())
    assert all(Path(j["stdout"]).parent == tmp_path / "sub" / "submitit" for j in jobs.values())
    # at most --max-jobs 2 alive at once, and two did run side by side (each sleeps 2 s)
    assert _most_at_once([(j["started"], j["ended"]) for j in jobs.values()]) == 2
    sweep = json.loads((tmp_path / "sub" / "sweep.json").read_text())
    assert sweep["backend"] == "submitit"
    # resume: nothing left to run
    again = _sweep(plugin_path, tmp_path / "sub", *grid)
    assert again.returncode == 0 and "4 already finished (reused)" in again.stdout
    assert _table(tmp_path / "sub") == a


def test_submitit_failed_and_killed_jobs_are_recorded_and_a_rerun_resumes(plugin_path, tmp_path):
    marker = tmp_path / "died"
    grid = (
        "--seeds",
        "0:1",
        "--grid",
        f'stage.draw.die_once="","{marker}"',
        "--grid",
        "stage.draw.fail=false,true",
    )
    out = tmp_path / "sw"
    proc = _sweep(plugin_path, out, *grid, "--max-jobs", "1")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    runs = {
        (r["params"]["stage.draw.die_once"], r["params"]["stage.draw.fail"]): r
        for r in json.loads((out / "runs.json").read_text())
    }
    assert runs["", False]["status"] == "finished"
    assert runs["", True]["status"] == "failed" and "asked to fail" in runs["", True]["error"]
    # the first run given the marker SIGKILLs its job: it ends without a result
    killed = [r for (die, _), r in runs.items() if die and "submitit job" in (r["error"] or "")]
    assert len(killed) == 1, runs
    assert "its stderr:" in killed[0]["error"] and "UncompletedJobError" in killed[0]["error"]
    assert json.loads((out / "runs" / killed[0]["run_id"] / "status.json").read_text())["status"] == "failed"
    assert json.loads((out / "submitit" / "jobs.json").read_text())[killed[0]["run_id"]]["status"] == "failed"
    # the rerun skips the finished runs and runs the others again; a stage that raises fails again
    proc = _sweep(plugin_path, out, *grid, "--max-jobs", "1")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    finished_before = sum(r["status"] == "finished" for r in runs.values())
    assert f"{finished_before} already finished (reused)" in proc.stdout
    for r in json.loads((out / "runs.json").read_text()):
        fails = r["params"]["stage.draw.fail"]
        assert r["status"] == ("failed" if fails else "finished"), r
        if fails:
            assert "asked to fail" in r["error"]


def test_sbatch_script_carries_the_slurm_settings_and_the_cap(tmp_path, monkeypatch):
    """submitit writes the array's sbatch script; stand-in ``srun``/``sbatch`` record it."""
    from quadriga.sweep.submitit_backend import make_executor, parse_slurm

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "srun").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "sbatch").write_text(
        f'#!/bin/sh\ncp "$1" {tmp_path}/script.sh\necho "Submitted batch job 4242"\n'
    )
    for tool in ("srun", "sbatch"):
        (bin_dir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    settings = parse_slurm(
        [
            "partition=gpu",
            "time=02:30:00",
            "cpus_per_task=4",
            "mem=16G",
            "qos=low",
            "setup=module load cuda",
            "setup=export A=1",
        ]
    )
    assert settings["setup"] == ["module load cuda", "export A=1"]
    executor = make_executor(tmp_path / "logs", name="quadriga-x", max_jobs=2, slurm=settings)
    assert executor.cluster == "slurm"
    with executor.batch():
        jobs = [executor.submit(abs, -i) for i in range(4)]
    assert [j.job_id for j in jobs] == ["4242_0", "4242_1", "4242_2", "4242_3"]
    lines = set((tmp_path / "script.sh").read_text().splitlines())
    for line in (
        "#SBATCH --array=0-3%2",  # 4 runs, at most 2 at once
        "#SBATCH --partition=gpu",
        "#SBATCH --time=150",
        "#SBATCH --cpus-per-task=4",
        "#SBATCH --mem=16G",
        "#SBATCH --qos=low",
        "#SBATCH --job-name=quadriga-x",
        f"#SBATCH --output={tmp_path}/logs/%A_%a_0_log.out",
        "module load cuda",  # the setup lines, before the job's command
        "export A=1",
    ):
        assert line in lines


def test_an_interrupted_sweep_cancels_its_jobs_and_records_their_runs(plugin_path, tmp_path, monkeypatch):
    """Ctrl-C (here raised by the first outcome's callback) cancels the job still running."""
    from qtest_helpers import TOY

    from quadriga.sweep.grid import plan
    from quadriga.sweep.submitit_backend import run_submitit

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TOY), str(plugin_path)]))
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + "/usr/bin:/bin")
    specs = plan([0], [("stage.draw.sleep", [0, 120])])
    tasks = [("toy-pipeline", spec, str(tmp_path / "runs" / spec.run_id)) for spec in specs]
    seen: list = []

    def stop(outcome):
        seen.append(outcome)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_submitit(tasks, tmp_path, stop, max_jobs=2)
    fast, slow = specs
    assert [o["run_id"] for o in seen] == [fast.run_id] and seen[0]["status"] == "finished"
    status = json.loads((tmp_path / "runs" / slow.run_id / "status.json").read_text())
    assert status["status"] == "interrupted"
    jobs = json.loads((tmp_path / "submitit" / "jobs.json").read_text())
    assert jobs[slow.run_id]["status"] == "interrupted" and jobs[fast.run_id]["status"] == "finished"


def test_sbatch_refusing_the_array_is_a_config_error(tmp_path, monkeypatch):
    from quadriga.sweep.grid import plan
    from quadriga.sweep.submitit_backend import run_submitit

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "srun").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "sbatch").write_text(
        '#!/bin/sh\necho "sbatch: error: invalid partition specified: nope" >&2\nexit 1\n'
    )
    for tool in ("srun", "sbatch"):
        (bin_dir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    tasks = [("toy-pipeline", spec, str(tmp_path / "runs" / spec.run_id)) for spec in plan([0, 1], [])]
    outcomes: list = []
    with pytest.raises(ConfigError) as info:
        run_submitit(tasks, tmp_path, outcomes.append, slurm={"partition": "nope"})
    assert info.value.key == "--slurm" and "invalid partition specified: nope" in str(info.value)
    assert outcomes == [] and not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("text", "minutes"), [("90", 90), ("02:30:00", 150), ("45:30", 46), ("1-00:00:00", 1440), ("2-6", 3240)]
)
def test_time_limits_in_minutes(text, minutes):
    from quadriga.sweep.submitit_backend import parse_slurm

    assert parse_slurm([f"time={text}"]) == {"time": minutes}


@pytest.mark.parametrize(
    ("kwargs", "key", "words"),
    [
        ({"backend": "submitit", "max_jobs": 0}, "--max-jobs", "integer >= 1"),
        ({"backend": "local", "max_jobs": 2}, "--max-jobs", "--backend submitit"),
        ({"backend": "ray", "slurm": ["partition=cpu"]}, "--slurm", "--backend submitit"),
        ({"backend": "submitit", "workers": 2}, "--workers", "--max-jobs"),
        ({"backend": "submitit", "slurm": ["partiton=cpu"]}, "--slurm", "partition"),
        ({"backend": "submitit", "slurm": ["partition"]}, "--slurm", "KEY=VALUE"),
        ({"backend": "submitit", "slurm": ["time=soon"]}, "--slurm", "HH:MM:SS"),
        ({"backend": "submitit", "slurm": ["array_parallelism=4"]}, "--slurm", "--max-jobs"),
        (
            {"backend": "submitit", "slurm": ["gpus_per_node=-1"]},
            "--slurm",
            "gpus_per_node=-1: give a whole number >= 0",
        ),
        (
            {"backend": "submitit", "slurm": ["cpus_per_task=0"]},
            "--slurm",
            "cpus_per_task=0: give a whole number >= 1",
        ),
        ({"backend": "submitit", "slurm": ["nodes=two"]}, "--slurm", "nodes='two': give a whole number >= 1"),
    ],
)
def test_bad_submitit_options_are_config_errors_before_anything_runs(
    plugin_path, tmp_path, kwargs, key, words
):
    from quadriga.sweep import run_sweep

    with pytest.raises(ConfigError) as info:
        run_sweep("toy-pipeline", seeds=[0], out=tmp_path / "sw", **kwargs)
    assert info.value.key == key and words in str(info.value)
    assert not (tmp_path / "sw").exists()


def test_missing_submitit_names_the_install_command(plugin_path, tmp_path, monkeypatch):
    from quadriga.sweep import run_sweep

    monkeypatch.setitem(sys.modules, "submitit", None)  # import submitit raises ImportError
    with pytest.raises(ConfigError) as info:
        run_sweep("toy-pipeline", seeds=[0], backend="submitit", out=tmp_path / "sw")
    assert info.value.key == "--backend"
    assert "pip install 'quadriga[slurm]'" in str(info.value)
    assert not (tmp_path / "sw").exists()


def _stopped_sweep(site: Path, out: Path, sig: int) -> tuple[subprocess.Popen, str, list[dict]]:
    """Start a two-run submitit sweep of 120 s runs, send ``sig`` once both run; (process, stderr, jobs).

    SIGINT goes to the whole process group, as Ctrl-C at a terminal sends it; SIGTERM to the sweep's
    process alone, as ``kill`` and most batch systems send it.
    """
    from qtest_helpers import TOY

    env = dict(os.environ)
    env.pop("QUADRIGA_DISABLE", None)
    env["PYTHONPATH"] = os.pathsep.join([str(TOY), str(site)])
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + "/usr/bin:/bin"  # no srun: local jobs
    args = ["sweep", "toy-pipeline", "--seeds", "0:2", "--set", "stage.draw.sleep=120", "--out", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "quadriga", *args, "--backend", "submitit", "--max-jobs", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own process group, as a shell's foreground job has
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        states = [_status(p) for p in (out / "runs").glob("*/status.json")] if (out / "runs").is_dir() else []
        if len(states) == 2 and all(s == "running" for s in states):
            break
        time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail(f"the sweep's runs did not start: {proc.communicate()}")
    time.sleep(1.0)  # the jobs are inside the stage (its sleep), past submitit's start-up
    jobs = list(json.loads((out / "submitit" / "jobs.json").read_text()).values())
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    return proc, err, jobs


def _status(path: Path) -> str:
    try:
        return json.loads(path.read_text())["status"]
    except (OSError, ValueError, KeyError):  # being written
        return ""


def _gone(pid: int, within: float = 10.0) -> bool:
    """Whether process ``pid`` has ended (or is a zombie) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_sigterm_and_ctrl_c_cancel_the_jobs_and_print_no_tracebacks(plugin_path, tmp_path, sig, code):
    """SIGTERM (``timeout``, a batch system) is handled like Ctrl-C: jobs cancelled, runs interrupted."""
    out = tmp_path / "sw"
    proc, err, jobs = _stopped_sweep(plugin_path, out, sig)
    assert proc.returncode == code, err
    assert "Traceback" not in err and ("terminated" if code == 143 else "interrupted") in err, err
    # the jobs' controllers (job id = its pid for the local executor) and their runs have ended
    assert len(jobs) == 2 and all(_gone(int(j["job_id"])) for j in jobs), jobs
    states = [_status(p) for p in (out / "runs").glob("*/status.json")]
    assert states == ["interrupted", "interrupted"]
    recorded = json.loads((out / "submitit" / "jobs.json").read_text())
    assert {j["status"] for j in recorded.values()} == {"interrupted"}
    # the controllers' own tracebacks went to their log file, not to the terminal
    assert (out / "submitit" / "controllers.log").is_file()
