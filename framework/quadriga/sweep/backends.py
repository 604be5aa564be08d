"""Execution backends of a sweep: local long-lived worker processes (default), Ray tasks, or submitit jobs.

The local backend keeps one process per worker (torch is imported once per worker, not per run),
caps each worker's BLAS/OpenMP/torch threads so that ``workers x threads <= cores``, and replaces a
worker that dies, recording its run as failed. While the workers run, the parent, which otherwise
only waits, imports at low priority what the tidy table, the summary and the figure need afterwards
(scipy.stats, pyarrow, matplotlib: seconds that would come after the last run otherwise).
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing as mp
import os
import signal
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

from quadriga.errors import ConfigError, Terminated, sigterm_interrupts
from quadriga.fileio import DirectoryLocked, lock_dir
from quadriga.rundir import RunDir
from quadriga.sweep.execute import _mark_failed, execute_one
from quadriga.sweep.grid import RunSpec

#: the names ``--backend`` takes; ``submitit`` lives in :mod:`quadriga.sweep.submitit_backend`
BACKENDS = ("local", "ray", "submitit")

_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")

#: what :func:`quadriga.sweep.run_sweep` imports after the runs (``quadriga.summary``'s deferred
#: imports: bootstrap intervals, the parquet table, the figure), imported by the parent meanwhile
AGGREGATION_MODULES = (
    "quadriga.summary",
    "quadriga.stats",
    "scipy.stats",
    "pyarrow",
    "pyarrow.parquet",
    "matplotlib.figure",
    "matplotlib.backends.backend_agg",
)


def _first_use() -> None:
    """Write a one-row parquet table and draw a labelled figure, both in memory.

    Their first use in a process initialises pyarrow's writer (about half a second) and
    matplotlib's fonts; done here, the sweep's own table and figure do not wait for it.
    """
    import io

    with contextlib.suppress(Exception):
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist([{"value": 1.0, "metric": "m"}]), io.BytesIO())
    with contextlib.suppress(Exception):
        from matplotlib.figure import Figure

        fig = Figure(figsize=(2, 2), layout="constrained")  # as quadriga.summary.plot_summary draws
        fig.suptitle("t", fontsize=10)
        ax = fig.add_subplot(1, 1, 1)
        ax.bar([0], [1.0], yerr=[[0.1], [0.1]], capsize=3)
        ax.set_xticks([0], ["a"], rotation=30, ha="right", fontsize=8)
        ax.plot([0.0, 1.0], [1.0, 2.0], marker="o", label="a")
        ax.fill_between([0.0, 1.0], [0.5, 1.5], [1.5, 2.5], alpha=0.2)
        ax.set_title("t")
        ax.set_ylabel("y")
        ax.legend(fontsize=7)
        fig.savefig(io.BytesIO(), format="png", dpi=20)


def _import_in_background(modules: tuple[str, ...]) -> threading.Thread:
    """Import ``modules`` (then :func:`_first_use`) in a daemon thread, at a low priority where allowed.

    A module that is missing or fails is skipped (the code that needs it reports that later).
    Imports take Python's per-module locks, so a later import of the same module waits for this
    one instead of doing the work twice.
    """

    def work() -> None:
        with contextlib.suppress(Exception):  # Linux: a thread's own nice value; elsewhere the default
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        for name in modules:
            if name in sys.modules:
                continue
            with contextlib.suppress(Exception):
                importlib.import_module(name)
        _first_use()

    thread = threading.Thread(target=work, name="quadriga-sweep-imports", daemon=True)
    thread.start()
    return thread


def worker_threads(workers: int) -> int:
    """Threads per worker process so that ``workers * threads <= cores`` (at least 1).

    Cores are those this process may run on (``os.sched_getaffinity``), else ``os.cpu_count()``.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, cores // max(1, workers))


def cap_threads(threads: int) -> None:
    """Cap the BLAS/OpenMP pools and torch's intra-op threads of this process at ``threads``.

    The environment variables cover libraries loaded later (a fresh worker has not imported
    numpy or torch yet); ``threadpoolctl.threadpool_limits`` covers the ones already loaded;
    ``torch.set_num_threads`` is called when torch is imported. A smaller value already set in
    the environment is kept.
    """
    for var in _THREAD_VARS:
        current = os.environ.get(var, "")
        if not (current.isdigit() and 0 < int(current) <= threads):
            os.environ[var] = str(threads)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads)
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() > threads:
        torch.set_num_threads(threads)


def _worker_context() -> Any:
    """Where workers start: a fork server that has imported torch once, else fresh interpreters.

    Each worker of a ``spawn`` context imports torch and the core again before its first run (seconds
    of CPU each on a loaded machine). The ``forkserver`` context (POSIX) preloads them once in a
    clean single-threaded server process and forks every worker from it, so workers start with
    them imported and without the parent's threads or state.
    """
    import importlib.util

    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    preload = ["quadriga.api", "quadriga.sweep"]
    if importlib.util.find_spec("torch") is not None:
        preload.insert(0, "torch")
    ctx.set_forkserver_preload(preload)
    return ctx


def _interrupt_once(signum: int, frame: Any) -> None:
    """A worker's SIGINT and SIGTERM handler: raise KeyboardInterrupt (:class:`Terminated` for SIGTERM) once.

    Both signals are then ignored until the next run, so that a second one (SIGTERM sent to the
    whole process group by ``timeout`` or a batch system, then the SIGINT the sweep passes on)
    does not cut short the run's recording of its end.

    Raises:
        KeyboardInterrupt: always (:class:`Terminated` for SIGTERM).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt


def _worker(conn: Any, threads: int = 0) -> None:
    """A local worker: run each task received on ``conn`` and send back its outcome, until ``None`` or EOF.

    SIGINT and SIGTERM stop the run under way as Ctrl-C stops a plain run (it records itself
    interrupted with its finished stages, :func:`_interrupt_once`): SIGTERM's default action would
    end the process without a word and leave the run ``running`` on disk. Between runs either
    signal ends the worker quietly.
    """
    if threads:
        cap_threads(threads)
    try:
        while True:
            signal.signal(signal.SIGINT, _interrupt_once)
            signal.signal(signal.SIGTERM, _interrupt_once)
            try:
                task = conn.recv()
            except EOFError:
                return
            if task is None:
                return
            source, spec, run_dir = task
            if threads:  # a run may have loaded torch or another BLAS since the last call
                cap_threads(threads)
            outcome = execute_one(source, spec, run_dir)
            with contextlib.suppress(OSError):  # the sweep is gone: nobody to tell
                conn.send(outcome)
    except KeyboardInterrupt:
        return


def _run_local(
    tasks: list[tuple[str, RunSpec, str]], workers: int, on_done: Callable[[dict[str, Any]], None]
) -> None:
    """Run ``tasks`` on ``workers`` local processes, calling ``on_done`` with each outcome in the parent.

    Workers come from :func:`_worker_context`, never forked from this process: once torch has run
    an OpenMP parallel region here, a forked child hangs in its first one. Ctrl-C reaches the
    workers from the terminal; SIGTERM (:class:`~quadriga.errors.Terminated`) sent to this process
    alone (``kill``) is passed on to the busy workers as SIGINT, and SIGTERM sent to the whole process
    group (``timeout``, a batch system) is handled by each worker as SIGINT (:func:`_worker`), so
    either way each run is recorded interrupted with its finished stages. A worker that has not ended 5 s
    after it was told to (deaf to SIGINT in a long native call) is killed, and its run is then
    recorded interrupted here (:func:`_mark_stopped`): no run this sweep started stays ``running``
    on disk.

    Raises:
        KeyboardInterrupt: Ctrl-C or :class:`~quadriga.errors.Terminated` (SIGTERM), re-raised once
            the workers have stopped and their runs are recorded.
    """
    ctx = _worker_context()
    threads = worker_threads(workers)  # workers x threads <= cores
    pending = list(tasks)
    busy: dict[Any, tuple[Any, Any, tuple[str, RunSpec, str]]] = {}  # conn -> (process, conn, task)
    idle: list[tuple[Any, Any]] = []

    def start() -> tuple[Any, Any]:
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(child, threads), daemon=True)
        proc.start()
        child.close()
        return proc, parent

    for _ in range(min(workers, len(pending))):
        idle.append(start())
    imports = _import_in_background(AGGREGATION_MODULES)
    try:
        while pending or busy:
            while idle and pending:
                proc, conn = idle.pop()
                task = pending.pop(0)
                conn.send(task)
                busy[conn] = (proc, conn, task)
            ready = wait(list(busy) + [p.sentinel for p, _, _ in busy.values()])
            for conn in list(busy):
                proc, _, task = busy[conn]
                if conn not in ready and proc.sentinel not in ready:
                    continue
                outcome = _received(conn)
                if outcome is None and proc.is_alive():
                    continue
                del busy[conn]
                if outcome is not None:
                    on_done(outcome)
                else:
                    proc.join()
                    error = f"worker process died (exit code {proc.exitcode}) while running this run"
                    _mark_failed(task[2], error)
                    on_done({"run_id": task[1].run_id, "status": "failed", "error": error, "seconds": None})
                if proc.is_alive():
                    idle.append((proc, conn))
                else:
                    conn.close()
                    if pending:
                        idle.append(start())
    except BaseException as exc:  # Ctrl-C, SIGTERM (Terminated) or an error here: stop every run
        if isinstance(exc, Terminated):  # SIGTERM reached this process only: stop the runs as Ctrl-C would
            for proc, _, _ in busy.values():
                with contextlib.suppress(OSError):
                    os.kill(proc.pid, signal.SIGINT)  # each marks its run interrupted, keeps what finished
        _stop_workers(idle + [(p, c) for p, c, _ in busy.values()])
        for _, _, task in busy.values():  # a worker killed before it wrote its end left "running"
            _mark_stopped(task[2], _stopped_by(exc))
        raise
    _stop_workers(idle)
    imports.join()  # usually long done; the aggregation would wait for these imports anyway


def _stopped_by(exc: BaseException) -> str:
    """What stopped a sweep, in words: ``SIGTERM``, ``Ctrl-C``, or the error's type and message."""
    if isinstance(exc, Terminated):
        return "SIGTERM"
    if isinstance(exc, KeyboardInterrupt):
        return "Ctrl-C"
    return f"{type(exc).__name__}: {exc}"


def _mark_stopped(run_dir: str, why: str) -> None:
    """Record the run in ``run_dir``, which this sweep started and stopped (``why``), as interrupted.

    Called after its worker has exited or been killed: a run that wrote its own end (Ctrl-C
    reached it) keeps that (:meth:`~quadriga.rundir.RunDir.mark_ended`); one whose worker did not
    stop in time and was killed is ``running`` on disk and becomes ``interrupted`` with its finished
    stages. Skipped when another process holds the run's lock (another sweep took it up meanwhile)
    or the directory cannot be written.
    """
    try:
        with lock_dir(Path(run_dir)):
            RunDir(Path(run_dir)).mark_ended(
                "interrupted",
                f"interrupted: the sweep was stopped ({why}); resume it by running the sweep again",
            )
    except (DirectoryLocked, ConfigError, OSError):
        pass


def _received(conn: Any) -> dict[str, Any] | None:
    """The outcome a worker has sent on ``conn``; ``None`` when nothing is there or the pipe broke."""
    try:
        if conn.poll():
            return conn.recv()
    except (EOFError, OSError):
        pass
    return None


def _stop_workers(every: list[tuple[Any, Any]]) -> None:
    """Tell every ``(process, pipe)`` worker to exit, wait up to 5 s each, kill the rest, close the pipes.

    Returns once every worker process is gone (its locks on run directories released). The
    process's own ``join`` is not enough: a worker comes from the fork server, whose report of
    the exit is an end of file (exit code 255) as soon as the fork server itself is gone (SIGTERM
    to the process group reaches it too), while the worker may still be running.
    """
    for _, conn in every:  # all told first, so that they exit side by side
        with contextlib.suppress(Exception):
            conn.send(None)
    for proc, conn in every:
        proc.join(timeout=5)
        if not _gone(proc.pid, 5):
            with contextlib.suppress(OSError):  # Process.kill does nothing once join saw an exit code
                os.kill(proc.pid, signal.SIGKILL)
            proc.join(timeout=5)
            _gone(proc.pid, 5)
        conn.close()


def _gone(pid: int, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for process ``pid`` to end; whether it has (a zombie has ended).

    Its open files, and so its locks, are released by the time it is a zombie.
    """
    import time

    deadline = time.monotonic() + timeout
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:  # another user's process: not ours any more
            return True
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[-1].split()[0] in (b"Z", b"X"):
                    return True
        except (OSError, IndexError):
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _run_ray(
    tasks: list[tuple[str, RunSpec, str]],
    workers: int,
    address: str | None,
    on_done: Callable[[dict[str, Any]], None],
) -> None:
    """Run ``tasks`` as Ray tasks (a local Ray instance of ``workers`` CPUs, or the cluster at ``address``).

    ``ray.init`` replaces the process's SIGTERM handler with one that aborts it; SIGTERM is made
    :class:`~quadriga.errors.Terminated` again for the time the tasks run. On Ctrl-C or SIGTERM the
    tasks still running are cancelled (Ray raises KeyboardInterrupt in each, which records its run
    interrupted with its finished stages), given up to 10 s to end, then force-cancelled; once Ray is
    shut down, a run that could not record its end is recorded interrupted here (:func:`_mark_stopped`,
    which needs the run directories on a file system this process sees, as the sweep's summary does).

    Raises:
        ConfigError: Ray is not installed (key ``--backend``).
        KeyboardInterrupt: Ctrl-C or :class:`~quadriga.errors.Terminated`, re-raised after the above.
    """
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "the ray backend needs Ray: pip install 'quadriga[ray]'.", key="--backend"
        ) from None
    started = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        started = True
    remote = ray.remote(num_cpus=1, max_retries=0)(execute_one)
    refs: dict[Any, tuple[str, RunSpec, str]] = {}
    try:
        with sigterm_interrupts():  # in place of the handler ray.init installed
            try:
                refs.update({remote.remote(*task): task for task in tasks})
                _collect_ray(ray, refs, on_done)
            except KeyboardInterrupt as exc:
                # Ray's wait turns the handler's Terminated into a plain KeyboardInterrupt; the
                # handler fires once and sets SIGTERM to SIG_IGN, so that says it was SIGTERM
                if not isinstance(exc, Terminated) and signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
                    raise Terminated from None
                raise
    except BaseException as exc:
        _cancel_ray(ray, list(refs))
        if started:
            started = False
            with contextlib.suppress(Exception):
                ray.shutdown()
        for task in refs.values():
            _mark_stopped(task[2], _stopped_by(exc))
        raise
    finally:
        if started:
            ray.shutdown()


def _collect_ray(
    ray: Any, refs: dict[Any, tuple[str, RunSpec, str]], on_done: Callable[[dict[str, Any]], None]
) -> None:
    """Wait for the Ray tasks ``refs`` (removed as they end), calling ``on_done`` with each outcome.

    A task that raised (its worker died) is a failed run, recorded so in its run directory.
    """
    while refs:
        done, _ = ray.wait(list(refs), num_returns=1)
        for ref in done:
            task = refs.pop(ref)
            try:
                on_done(ray.get(ref))
            except Exception as exc:
                error = f"Ray task failed: {type(exc).__name__}: {exc}"
                _mark_failed(task[2], error)
                on_done({"run_id": task[1].run_id, "status": "failed", "error": error, "seconds": None})


def _cancel_ray(ray: Any, refs: list[Any]) -> None:
    """Cancel the Ray tasks ``refs``: KeyboardInterrupt in each, up to 10 s to end, then force."""
    if not refs:
        return
    for ref in refs:
        with contextlib.suppress(Exception):
            ray.cancel(ref)
    with contextlib.suppress(Exception):
        ray.wait(refs, num_returns=len(refs), timeout=10)
    for ref in refs:
        with contextlib.suppress(Exception):
            ray.cancel(ref, force=True)
