"""The submitit backend of a sweep: each run a job on a SLURM cluster (or submitit's local executor).

``quadriga sweep NAME --seeds 0:10 --backend submitit --max-jobs 8 --slurm partition=cpu
--slurm time=120`` submits every run that is not finished yet as one job of a SLURM job array
(``sbatch --array=0-N%8``: at most ``--max-jobs`` run at once), or, where ``srun`` is not on the
``PATH``, as a process of submitit's :class:`~submitit.LocalExecutor`, started at most
``--max-jobs`` at a time. Each job runs :func:`~quadriga.sweep.execute.execute_one`, the same
function as the local and Ray backends, in the run's directory under the sweep directory, so the
run's lock, its ``status.json``, its ``log.txt``, resuming and the tidy table are the same. A job
that dies (killed, out of memory, past its time limit) is recorded as failed; running the same
sweep again skips the finished runs and resumes the others from their finished stages. Ctrl-C or
SIGTERM (``timeout``, ``kill``, a batch system ending the sweep's own job) cancels the jobs still
queued or running and records their runs as interrupted; ``quadriga sweep`` then exits with 130
(Ctrl-C) or 143 (SIGTERM).

submitit's own files (the submission scripts, pickled calls and results, and each job's stdout and
stderr, and ``controllers.log``, the stderr of the local executor's job controllers) go to
``<sweep dir>/submitit/``; ``submitit/jobs.json`` maps each run to its job id, its
log files and the time its job started and ended.

Source: submitit (https://github.com/facebookincubator/submitit), ``AutoExecutor``,
``slurm_array_parallelism``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from quadriga.errors import ConfigError, Terminated, sigterm_interrupts
from quadriga.runs import atomic_write_json, safe_name
from quadriga.sweep.backends import cap_threads, worker_threads
from quadriga.sweep.execute import _mark_failed, execute_one
from quadriga.sweep.grid import RunSpec

__all__ = [
    "CLUSTERS",
    "DEFAULT_TIME_MIN",
    "INSTALL",
    "Terminated",
    "check_options",
    "make_executor",
    "parse_slurm",
    "run_submitit",
]

#: the install command named when submitit is missing
INSTALL = "pip install 'quadriga[slurm]'"
#: each job's time limit when ``--slurm time=...`` is not given, in minutes (submitit's own is 5)
DEFAULT_TIME_MIN = 60
#: the executors the backend can use (``None``: SLURM where ``srun`` is found, else local)
CLUSTERS = ("slurm", "local")
#: the sbatch settings that are lists (shell lines, srun arguments): repeated ``--slurm`` entries add up
_LISTS = ("setup", "teardown", "srun_args")
#: the SLURM options that apply to the local executor as well
_SHARED = {"time", "gpus_per_node"}

#: the numeric SLURM options and the least value each takes (``gpus_per_node=0``: no GPU)
_LEAST = {
    "gpus_per_node": 0,
    "gpus_per_task": 0,
    "num_gpus": 0,
    "cpus_per_task": 1,
    "cpus_per_gpu": 1,
    "nodes": 1,
    "ntasks_per_node": 1,
    "signal_delay_s": 0,
}

_Task = tuple[str, RunSpec, str]


@contextlib.contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    """File descriptor 2 redirected to ``path`` inside the block (for the processes started in it).

    submitit's local executor starts a controller process per job that inherits this process's
    stderr; on Ctrl-C or a cancel it prints a ``KeyboardInterrupt`` traceback there. Started inside
    this block, its stderr is ``path`` (``<sweep dir>/submitit/controllers.log``) instead.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stderr.flush()
    saved = os.dup(2)
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(log, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(log)


def _submitit() -> Any:
    """The submitit module.

    Raises:
        ConfigError: submitit is not installed (key ``--backend``, with :data:`INSTALL`).
    """
    try:
        import submitit
    except ImportError:
        raise ConfigError(
            f"the submitit backend needs submitit: {INSTALL} (or pip install -c constraints.txt submitit).",
            key="--backend",
        ) from None
    return submitit


def _minutes(value: str) -> int:
    """A SLURM time limit in whole minutes: ``90``, ``MM:SS``, ``HH:MM:SS``, ``D-HH[:MM[:SS]]``.

    Raises:
        ConfigError: another form or a limit under one minute (key ``--slurm``).
    """
    text = value.strip()
    try:
        days = 0
        if "-" in text:
            head, text = text.split("-", 1)
            days = int(head)
            parts = [int(p) for p in text.split(":")] + [0] * (3 - len(text.split(":")))
            hours, mins, secs = parts
        else:
            parts = [int(p) for p in text.split(":")]
            if len(parts) == 1:
                hours, mins, secs = 0, parts[0], 0
            elif len(parts) == 2:
                hours, mins, secs = 0, parts[0], parts[1]
            elif len(parts) == 3:
                hours, mins, secs = parts
            else:
                raise ValueError(text)
        total = days * 1440 + hours * 60 + mins + (1 if secs > 0 else 0)
        if min(days, hours, mins, secs) < 0 or total < 1:
            raise ValueError(text)
    except ValueError:
        raise ConfigError(
            f"--slurm time={value!r} is not a time limit; give minutes (time=120) or SLURM's "
            "[D-]HH:MM:SS (time=02:00:00, time=1-00:00:00), at least one minute.",
            key="--slurm",
        ) from None
    return total


def _value(text: str) -> Any:
    """``"4"`` -> 4, ``"true"``/``"false"`` -> bool, anything else the string itself."""
    if text.lstrip("-").isdigit():
        return int(text)
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def parse_slurm(settings: Iterable[str] | Mapping[str, Any]) -> dict[str, Any]:
    """``["partition=cpu", "time=120", "mem=16G"]`` -> ``{"partition": "cpu", "time": 120, "mem": "16G"}``.

    Keys are sbatch options as submitit names them (underscores for dashes): ``partition``,
    ``time`` (minutes or ``[D-]HH:MM:SS``; stored in minutes), ``cpus_per_task``, ``mem`` (e.g.
    ``16G``), ``gpus_per_node``, ``account``, ``qos``, ``constraint``, ``exclude``, ``gres``,
    ``setup`` and the others of :class:`submitit.SlurmExecutor`. Digits become integers;
    ``setup``, ``teardown`` and ``srun_args`` are lists, one entry per ``--slurm`` (e.g. two
    ``setup=...`` lines run before the job's command).

    Raises:
        ConfigError: an entry without ``=``, an unknown key (the message lists the known ones),
            ``array_parallelism`` (use ``--max-jobs``), a bad time, a numeric option (``gpus_per_node``,
            ``cpus_per_task``, ``nodes``, ``ntasks_per_node``, ...) not a whole number at least
            its least value (0 for the GPU counts and ``signal_delay_s``, else 1), or submitit
            missing (key ``--slurm`` or ``--backend``).
    """
    items = list(settings.items()) if isinstance(settings, Mapping) else []
    if not isinstance(settings, Mapping):
        for entry in settings:
            key, sep, raw = str(entry).partition("=")
            if not sep or not key.strip():
                raise ConfigError(
                    f"--slurm {entry!r} is not KEY=VALUE; e.g. --slurm partition=cpu --slurm time=120.",
                    key="--slurm",
                )
            items.append((key.strip().replace("-", "_"), _value(raw.strip())))
    known = set(_submitit().SlurmExecutor._valid_parameters()) - {
        "array_parallelism",
        "additional_parameters",
    }
    out: dict[str, Any] = {}
    for key, value in items:
        if key in _LISTS:  # one line each, repeatable: --slurm setup="module load x" --slurm setup=...
            out.setdefault(key, []).extend(value if isinstance(value, list) else [str(value)])
            continue
        if key == "array_parallelism":
            raise ConfigError(
                "--slurm array_parallelism is set by --max-jobs N (at most N runs at once).", key="--slurm"
            )
        if key not in known:
            from quadriga.errors import suggest

            raise ConfigError(
                f"--slurm {key}: not an option submitit passes to sbatch.{suggest(key, sorted(known))} "
                f"Known: {', '.join(sorted(known))}.",
                key="--slurm",
            )
        if key in _LEAST and (isinstance(value, bool) or not isinstance(value, int) or value < _LEAST[key]):
            raise ConfigError(
                f"--slurm {key}={value!r}: give a whole number >= {_LEAST[key]} (e.g. --slurm {key}="
                f"{max(_LEAST[key], 1)}).",
                key="--slurm",
            )
        out[key] = _minutes(str(value)) if key == "time" else value
    return out


def check_options(
    backend: str, workers: int | None, max_jobs: int | None, slurm: Iterable[str] | Mapping[str, Any]
) -> dict[str, Any]:
    """Check the submitit-only options of :func:`quadriga.sweep.run_sweep`; the parsed ``--slurm``.

    Raises:
        ConfigError: ``--max-jobs`` or ``--slurm`` with another backend, ``--workers`` with this one,
            ``--max-jobs`` not an integer >= 1, a bad ``--slurm`` entry, or submitit missing.
    """
    settings = dict(slurm) if isinstance(slurm, Mapping) else list(slurm)
    if backend != "submitit":
        if max_jobs is not None or settings:
            flag = "--max-jobs" if max_jobs is not None else "--slurm"
            raise ConfigError(
                f"{flag} applies to the submitit backend only; add --backend submitit (the local and ray "
                "backends take --workers).",
                key=flag,
            )
        return {}
    if workers is not None:
        raise ConfigError(
            "the submitit backend takes --max-jobs N (at most N jobs at once), not --workers.",
            key="--workers",
        )
    if max_jobs is not None and (isinstance(max_jobs, bool) or not isinstance(max_jobs, int) or max_jobs < 1):
        raise ConfigError(
            f"--max-jobs must be an integer >= 1, got {max_jobs!r} (omit it for one job per CPU core "
            "with the local executor, 256 on SLURM).",
            key="--max-jobs",
        )
    _submitit()
    return parse_slurm(settings)


def make_executor(
    folder: Path, *, name: str, max_jobs: int | None, slurm: Mapping[str, Any], cluster: str | None = None
) -> Any:
    """A :class:`submitit.AutoExecutor` writing to ``folder``, with the sweep's SLURM settings.

    Args:
        folder: where submitit writes scripts, pickles and each job's ``stdout``/``stderr``.
        name: the job name.
        max_jobs: the array's parallelism on SLURM (``slurm_array_parallelism``); the local
            executor's cap is kept by :func:`run_submitit`.
        slurm: parsed ``--slurm`` settings (:func:`parse_slurm`); ``time`` and ``gpus_per_node``
            apply to the local executor too, the others to SLURM only.
        cluster: ``"slurm"``, ``"local"``, or ``None`` for SLURM where ``srun`` is found, else local.

    Raises:
        ConfigError: an unknown cluster, or settings submitit refuses (key ``--slurm``).
    """
    submitit = _submitit()
    if cluster is None:
        cluster = "slurm" if shutil.which("srun") else "local"
    if cluster not in CLUSTERS:
        raise ConfigError(f"unknown submitit cluster {cluster!r}; use slurm or local.", key="cluster")
    settings = dict(slurm)
    params: dict[str, Any] = {"name": name, "timeout_min": int(settings.pop("time", DEFAULT_TIME_MIN))}
    if "gpus_per_node" in settings:
        params["gpus_per_node"] = settings.pop("gpus_per_node")
    params.update({f"slurm_{k}": v for k, v in settings.items()})
    if max_jobs is not None:
        params["slurm_array_parallelism"] = max_jobs
    try:
        executor = submitit.AutoExecutor(folder=folder, cluster=cluster)
        executor.update_parameters(**params)
    except (AssertionError, NameError, TypeError, ValueError) as exc:
        raise ConfigError(
            f"submitit refused the --slurm settings {dict(slurm)}: {exc}", key="--slurm"
        ) from None
    return executor


def _job(source: str, spec: RunSpec, run_dir: str, threads: int) -> dict[str, Any]:
    """What each job runs: cap its threads, then :func:`execute_one`, timed.

    On SLURM the cap is the job's ``SLURM_CPUS_PER_TASK`` when set, else ``threads``.
    """
    started = time.time()
    slurm_cpus = os.environ.get("SLURM_CPUS_PER_TASK", "")
    cap_threads(int(slurm_cpus) if slurm_cpus.isdigit() and int(slurm_cpus) > 0 else threads)
    outcome = execute_one(source, spec, run_dir)
    return {**outcome, "started": started, "ended": time.time()}


def _failure(job: Any, exc: BaseException) -> str:
    """One line for a job that produced no result, naming its stderr file."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return (
        f"submitit job {job.job_id} ended without a result ({type(exc).__name__}: {first[:300]}); "
        f"its stderr: {job.paths.stderr}"
    )


def run_submitit(
    tasks: list[_Task],
    sweep_dir: Path,
    on_done: Callable[[dict[str, Any]], None],
    *,
    max_jobs: int | None = None,
    slurm: Mapping[str, Any] | None = None,
    cluster: str | None = None,
    poll_s: float = 0.5,
) -> None:
    """Run ``tasks`` as submitit jobs, calling ``on_done`` with each run's outcome as its job ends.

    On SLURM every task is one element of a job array whose parallelism is ``max_jobs`` (default
    256, submitit's); with the local executor at most ``max_jobs`` jobs (default: the CPU cores) are
    alive at once, each capping its BLAS/torch threads so that ``jobs x threads <= cores``.

    Args:
        tasks: ``(source, spec, run directory)`` per run, as for the local backend.
        sweep_dir: the sweep directory; submitit writes to ``sweep_dir/submitit``.
        on_done: called in this process with ``{"run_id", "status", "error", "seconds", ...}``.
        max_jobs: at most this many jobs at once.
        slurm: parsed ``--slurm`` settings (:func:`parse_slurm`).
        cluster: ``"slurm"``, ``"local"`` or ``None`` (SLURM where ``srun`` is found).
        poll_s: seconds between checks of the jobs' states.

    Raises:
        ConfigError: submitit is missing or refuses the settings, or ``sbatch`` refuses the array
            (an unknown partition, account or QOS; nothing was submitted).
        KeyboardInterrupt: re-raised after cancelling the jobs still queued or running and
            recording their runs as interrupted; :class:`Terminated` (a KeyboardInterrupt) where
            the process got SIGTERM while the jobs ran, handled the same way.
    """
    folder = Path(sweep_dir) / "submitit"
    name = f"quadriga-{safe_name(Path(tasks[0][0]).stem)}" if tasks else "quadriga"
    executor = make_executor(folder, name=name, max_jobs=max_jobs, slurm=slurm or {}, cluster=cluster)
    local = executor.cluster != "slurm"
    cap = (max_jobs or os.cpu_count() or 1) if local else len(tasks)  # SLURM: the array's parallelism caps
    slurm_cpus = (slurm or {}).get("cpus_per_task")
    threads = worker_threads(cap) if local else int(slurm_cpus or 1)
    pending = list(tasks)
    running: dict[Any, _Task] = {}  # job -> task
    records: dict[str, dict[str, Any]] = {}

    def submit(batch: list[_Task]) -> None:
        jobs = _submit_batch(executor, batch, threads, folder, local)
        for job, task in zip(jobs, batch, strict=True):
            running[job] = task
            records[task[1].run_id] = {
                "job_id": str(job.job_id),
                "cluster": executor.cluster,
                "stdout": str(job.paths.stdout),
                "stderr": str(job.paths.stderr),
            }
        atomic_write_json(folder / "jobs.json", records)

    with sigterm_interrupts():  # SIGTERM cancels the jobs as Ctrl-C does
        try:
            while pending or running:
                room = cap - len(running)
                if pending and room > 0:
                    batch, pending = pending[:room], pending[room:]
                    submit(batch)
                ended = [job for job in running if job.done()]
                for job in ended:
                    task = running.pop(job)
                    on_done(_outcome_of(job, task, records[task[1].run_id]))
                if ended:
                    atomic_write_json(folder / "jobs.json", records)
                elif running:
                    time.sleep(poll_s)
        except KeyboardInterrupt:
            _cancel(running, records, local)
            raise
        finally:
            if records:
                atomic_write_json(folder / "jobs.json", records)


def _submit_batch(executor: Any, batch: list[_Task], threads: int, folder: Path, local: bool) -> list[Any]:
    """Submit one job per task of ``batch``; returns the jobs, in the order of ``batch``.

    On SLURM the batch is one ``sbatch --array``; with the local executor each controller's
    stderr (its tracebacks on Ctrl-C or a cancel) goes to ``folder/controllers.log``.

    Raises:
        ConfigError: ``sbatch`` refused the array (key ``--slurm``; nothing was submitted).
    """
    if local:
        with _stderr_to(folder / "controllers.log"):
            return [executor.submit(_job, *task, threads) for task in batch]
    errors = _submitit().core.utils
    try:
        with executor.batch():  # one sbatch --array=0-N%max_jobs
            delayed = [executor.submit(_job, *task, threads) for task in batch]
    except (errors.FailedJobError, errors.FailedSubmissionError) as exc:
        raise ConfigError(
            f"sbatch refused the sweep's job array: {str(exc).strip()[:500]} (check the --slurm "
            "settings: partition, account, qos, time, mem).",
            key="--slurm",
        ) from None
    return list(delayed)


def _outcome_of(job: Any, task: _Task, record: dict[str, Any]) -> dict[str, Any]:
    """The outcome dict of an ended ``job``; its status and start/end times go to ``record`` (``jobs.json``).

    A job that produced no result (killed, out of memory, past its time limit, lost) is a failed
    run, marked so in its run directory, with an error naming the job's stderr file.
    """
    try:
        outcome = job.result()
    except Exception as exc:
        error = _failure(job, exc)
        _mark_failed(task[2], error)
        outcome = {"run_id": task[1].run_id, "status": "failed", "error": error, "seconds": None}
    record.update(status=outcome["status"])
    for key in ("started", "ended"):
        if key in outcome:
            record[key] = outcome.pop(key)
    return outcome


def _cancel(running: Mapping[Any, _Task], records: dict[str, dict[str, Any]], local: bool) -> None:
    """Cancel the jobs still queued or running and record their runs as interrupted.

    Local job processes get up to 15 s to end (and be reaped) before their runs are recorded.
    """
    for job in running:
        with contextlib.suppress(Exception):  # best effort; the run is recorded either way
            job.cancel(check=False)
    deadline = time.monotonic() + 15
    for job in running:
        while local and not job.done() and time.monotonic() < deadline:
            time.sleep(0.1)
    for task in running.values():
        _mark_failed(task[2], "interrupted: the sweep was stopped and its job cancelled", "interrupted")
        records[task[1].run_id]["status"] = "interrupted"
