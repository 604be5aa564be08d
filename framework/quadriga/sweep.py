"""Sweeps: the Cartesian product of parameter grids and seeds, each a normal run.

``quadriga sweep NAME --seeds 0:10 --grid stage.srmc.alpha=0.5,1,2`` runs every
combination in its own run directory under the sweep directory, on local worker
processes (default) or Ray tasks, then writes one tidy table, a summary with
means, standard errors and bootstrap 95% intervals, and a figure.

A run that fails, or whose worker is killed, is recorded as failed and the sweep
goes on; running the same sweep again (same output directory) skips the runs
that finished. The local backend keeps one long-lived process per worker (torch
is imported once per worker, not per run) and replaces a worker that dies, which
:class:`concurrent.futures.ProcessPoolExecutor` cannot do: there one dead worker
breaks the whole pool and every pending run with it.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import json
import multiprocessing as mp
import os
import shutil
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

import attrs

from quadriga.errors import ConfigError
from quadriga.fileio import LOCK, atomic_write_text, lock_dir, refuse_symlinks
from quadriga.pipeline import parse_override
from quadriga.rundir import make_dir
from quadriga.runs import atomic_write_json, safe_name

__all__ = ["RunSpec", "SweepResult", "execute_one", "parse_grid", "parse_seeds", "plan", "run_sweep"]


@attrs.frozen
class RunSpec:
    """One run of a sweep.

    Attributes:
        run_id: directory name, ``seed<seed>-<hash>`` (stable across re-runs of the same sweep).
        seed: the root seed.
        params: ``{override key: value}`` of this grid point.
        overrides: ``--set`` strings (the sweep's fixed ones plus the grid point's).
    """

    run_id: str
    seed: int
    params: dict[str, Any]
    overrides: tuple[str, ...]


#: the most seeds one sweep may run
MAX_SEEDS = 10_000
#: the most runs (grid points times seeds) one sweep may hold
MAX_RUNS = 100_000


def parse_seeds(text: str) -> list[int]:
    """``"0:10"`` -> 0..9, ``"3"`` -> [3], ``"1,4,9"`` -> [1, 4, 9].

    Raises:
        ConfigError: anything else, more than :data:`MAX_SEEDS` seeds, or a seed beyond int64
            (checked before the list is built).
    """
    from quadriga.pipeline_source import INT64

    short = text if len(text) <= 40 else text[:37] + "..."
    try:
        if ":" in text:
            lo, hi = (int(v) for v in text.split(":", 1))
            count = max(hi - lo, 0)
            ends = (lo, hi - 1)
        else:
            values = [int(s) for s in text.split(",") if s.strip()]
            count, ends = len(values), (min(values, default=0), max(values, default=0))
    except ValueError:
        raise ConfigError(
            f"'{short}' is not START:STOP or a comma-separated list of integers (e.g. --seeds 0:10).",
            key="--seeds",
        ) from None
    if count > MAX_SEEDS:
        raise ConfigError(
            f"'{short}' selects {count} seeds; a sweep takes at most {MAX_SEEDS}. "
            "Split it into several sweeps.",
            key="--seeds",
        )
    if count and not (INT64[0] <= ends[0] and ends[1] <= INT64[1]):
        raise ConfigError(
            f"'{short}' holds a seed that does not fit in a signed 64-bit integer.", key="--seeds"
        )
    seeds = list(range(lo, hi)) if ":" in text else values
    if not seeds:
        raise ConfigError(f"'{short}' selects no seed (STOP must be larger than START).", key="--seeds")
    return seeds


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def parse_grid(text: str) -> tuple[str, list[Any]]:
    """``"stage.srmc.alpha=0.5,1,2"`` -> ``("stage.srmc.alpha", [0.5, 1, 2])`` (values parsed as TOML).

    Raises:
        ConfigError: no ``=`` or no value.
    """
    key, sep, raw = text.partition("=")
    if not sep:
        raise ConfigError(f"'{text}' must be KEY=V1,V2,... (e.g. stage.srmc.alpha=0.5,1,2).", key="--grid")
    values = [parse_override(f"x={v}")[1] for v in _split_top(raw)]
    if not sep or not key.strip() or not values:
        raise ConfigError(f"'{text}' must be KEY=V1,V2,... (e.g. stage.srmc.alpha=0.5,1,2).", key="--grid")
    return key.strip(), values


def _toml_value(value: Any) -> str:
    import tomli_w

    return tomli_w.dumps({"v": value}).split("=", 1)[1].strip()


def plan(
    seeds: Sequence[int], grids: Sequence[tuple[str, list[Any]]], fixed: Sequence[str] = ()
) -> list[RunSpec]:
    """The runs of a sweep: every grid point (Cartesian product) times every seed."""
    keys = [k for k, _ in grids]
    runs = []
    for point in itertools.product(*[values for _, values in grids]):
        params = dict(zip(keys, point, strict=False))
        overrides = tuple(fixed) + tuple(f"{k}={_toml_value(v)}" for k, v in params.items())
        digest = hashlib.sha256(json.dumps([overrides], sort_keys=True).encode()).hexdigest()[:8]
        for seed in seeds:
            runs.append(RunSpec(f"seed{seed}-{digest}", seed, params, overrides))
    return runs


def execute_one(source: str, spec: RunSpec, run_dir: str) -> dict[str, Any]:
    """Run one sweep point in this process, logging to ``run_dir/log.txt``; never raises.

    The run directory is locked while it runs (:func:`~quadriga.fileio.lock_dir`), so two identical
    sweeps started at once do not run it twice: the second waits, then finds it finished and skips
    it. A directory left by an earlier attempt that failed, was interrupted or was killed is resumed
    (its finished stages are kept) when it holds the saved configuration, and started afresh
    otherwise. Whatever happens, the status left on disk keeps the finished stages and is never
    ``running``.

    Returns:
        ``{"run_id", "status", "error", "seconds"}`` (and ``"skipped": True`` for a run another
        sweep finished meanwhile).
    """
    os.environ.setdefault("MPLBACKEND", "Agg")
    start = time.perf_counter()
    directory = Path(run_dir)
    log = io.StringIO()
    status, error = "failed", None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with lock_dir(directory, wait=True):
            if _status_of(directory) == "finished":  # another sweep ran it while this one waited
                return {"run_id": spec.run_id, "status": "finished", "error": None, "skipped": True}
            resumable = (directory / "pipeline.toml").is_file() and (directory / "manifest.json").is_file()
            if not resumable:  # an attempt that died before saving its configuration: start afresh
                for entry in directory.iterdir():
                    if entry.name == LOCK:
                        continue
                    if entry.is_dir() and not entry.is_symlink():
                        shutil.rmtree(entry)
                    else:
                        entry.unlink()
            try:
                with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                    from quadriga.api import run

                    if resumable:  # an earlier attempt failed or was killed: keep its finished stages
                        result = run(source, resume=directory, raise_on_failure=False)
                    else:
                        result = run(
                            source,
                            overrides=spec.overrides,
                            seed=spec.seed,
                            out=directory,
                            raise_on_failure=False,
                        )
                    status = result.status
                    error = None if result.error is None else f"{type(result.error).__name__}: {result.error}"
            except BaseException as exc:  # Ctrl-C included: record it, keep what finished
                status = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
                error = f"{type(exc).__name__}: {exc}"
                log.write(traceback.format_exc())
                _mark_failed(run_dir, error, status)
            with contextlib.suppress(OSError):
                atomic_write_text(directory / "log.txt", log.getvalue())
    except BaseException as exc:
        status, error = "failed", f"{type(exc).__name__}: {exc}"
    return {"run_id": spec.run_id, "status": status, "error": error, "seconds": time.perf_counter() - start}


_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


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


def _status_of(directory: Path) -> str | None:
    """The ``status`` in ``directory/status.json``, ``None`` when there is none or it cannot be read."""
    try:
        data = json.loads((directory / "status.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get("status") if isinstance(data, dict) else None


def _worker(conn: Any, threads: int = 0) -> None:
    if threads:
        cap_threads(threads)
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        source, spec, run_dir = task
        if threads:  # a run may have loaded torch or another BLAS since the last call
            cap_threads(threads)
        conn.send(execute_one(source, spec, run_dir))


def _run_local(
    tasks: list[tuple[str, RunSpec, str]], workers: int, on_done: Callable[[dict[str, Any]], None]
) -> None:
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
                outcome = None
                try:
                    if conn.poll():
                        outcome = conn.recv()
                except (EOFError, OSError):
                    outcome = None
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
    finally:
        for proc, conn in idle + [(p, c) for p, c, _ in busy.values()]:
            with contextlib.suppress(Exception):
                conn.send(None)
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()


def _mark_failed(run_dir: str, error: str, state: str = "failed") -> None:
    """Record a run that ended abnormally: the finished stages are kept, none stays ``running``.

    A status the run wrote itself on the way out (``failed``, ``interrupted``) is kept as it is.
    """
    path = Path(run_dir) / "status.json"
    status: dict[str, Any] = {"stages": {}}
    if path.is_file():
        with contextlib.suppress(Exception):
            loaded = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(loaded, dict) and isinstance(loaded.get("stages", {}), dict):
                status = loaded
    if status.get("status") in ("failed", "interrupted", "finished"):
        return
    for stage in status.get("stages", {}).values():
        if isinstance(stage, dict) and stage.get("status") == "running":
            stage["status"] = state
    status.update(status=state, error=error)
    with contextlib.suppress(OSError):
        atomic_write_json(path, status)


def _run_ray(
    tasks: list[tuple[str, RunSpec, str]],
    workers: int,
    address: str | None,
    on_done: Callable[[dict[str, Any]], None],
) -> None:
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
    try:
        refs = {remote.remote(*task): task for task in tasks}
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
    finally:
        if started:
            ray.shutdown()


@attrs.define
class SweepResult:
    """What :func:`run_sweep` returns.

    Attributes:
        dir: the sweep directory.
        runs: one dict per run: ``run_id``, ``seed``, ``params``, ``status``, ``error``, ``skipped``.
        rows: the tidy table (one dict per run x stage x metric).
        summary: rows grouped by settings with ``mean``, ``stderr``, ``ci_low``, ``ci_high``, ``n``.
        table_path: ``results.parquet`` or ``results.csv``.
        figure_path: the PNG, or ``None`` when there was nothing to plot.
    """

    dir: Path
    runs: list[dict[str, Any]]
    rows: list[dict[str, Any]]
    summary: list[dict[str, Any]]
    table_path: Path | None
    figure_path: Path | None


def default_sweep_dir(
    source: str, seeds: Sequence[int], grids: Sequence[tuple[str, list[Any]]], fixed: Sequence[str]
) -> Path:
    """``sweeps/<pipeline>-<hash of the sweep's definition>``: the same sweep gets the same directory.

    So running a sweep again resumes it.
    """
    digest = hashlib.sha256(
        json.dumps([str(source), list(seeds), [[k, v] for k, v in grids], list(fixed)], default=str).encode()
    ).hexdigest()[:8]
    return Path("sweeps") / f"{safe_name(Path(str(source)).stem)}-{digest}"


def run_sweep(
    source: str | Path,
    *,
    seeds: Iterable[int],
    grids: Sequence[tuple[str, list[Any]]] = (),
    fixed: Sequence[str] = (),
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    out: str | Path | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_done: Callable[[dict[str, Any]], None] | None = None,
) -> SweepResult:
    """Run a sweep and aggregate its results.

    Args:
        source: a registered pipeline name or a TOML path.
        seeds: root seeds.
        grids: ``[(override key, [values])]``; every combination is run.
        fixed: ``--set`` overrides applied to every run.
        backend: ``"local"`` (worker processes) or ``"ray"``.
        workers: parallel runs (default: the number of CPU cores).
        address: a Ray cluster address (ray backend only; default: start a local Ray instance).
        out: the sweep directory (default :func:`default_sweep_dir`, so a re-run resumes).
        on_start: called once with ``(runs to do, runs already finished)``.
        on_done: called with each run's outcome dict.

    Returns:
        :class:`SweepResult`.

    Raises:
        ConfigError: an invalid pipeline or grid (checked on the first grid point before anything runs),
            an unknown backend.
    """
    from quadriga.api import check
    from quadriga.summary import aggregate, collect_rows, write_outputs

    seeds = list(seeds)
    if backend not in ("local", "ray"):
        raise ConfigError(f"unknown backend '{backend}'; use local or ray.", key="--backend")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ConfigError(
            f"the number of parallel runs must be an integer >= 1, got {workers!r} (omit it for one per "
            "CPU core).",
            key="--workers",
        )
    total = len(seeds)
    for _, values in grids:
        total *= len(values)
    if total > MAX_RUNS:
        raise ConfigError(
            f"the grid times the seeds makes {total} runs; a sweep holds at most {MAX_RUNS}. "
            "Use fewer values or seeds.",
            key="--grid",
        )
    specs = plan(seeds, grids, fixed)
    source = str(Path(source).resolve()) if Path(str(source)).is_file() else str(source)
    for spec in {s.overrides: s for s in specs}.values():
        check(source, overrides=spec.overrides, seed=spec.seed)  # every grid point, before anything runs
    sweep_dir = Path(out) if out is not None else default_sweep_dir(source, seeds, grids, fixed)
    refuse_symlinks(sweep_dir)
    make_dir(sweep_dir, "--out")
    refuse_symlinks(sweep_dir / "runs", sweep_dir)
    atomic_write_json(
        sweep_dir / "sweep.json",
        {
            "source": source,
            "seeds": seeds,
            "grid": {k: v for k, v in grids},
            "fixed": list(fixed),
            "backend": backend,
            "runs": [attrs.asdict(s) for s in specs],
            "command": sys.argv,
        },
    )
    outcomes: dict[str, dict[str, Any]] = {}
    tasks = []
    for spec in specs:
        run_dir = sweep_dir / "runs" / spec.run_id
        refuse_symlinks(run_dir, sweep_dir)
        if _status_of(run_dir) == "finished":
            outcomes[spec.run_id] = {
                "run_id": spec.run_id,
                "status": "finished",
                "error": None,
                "skipped": True,
            }
            continue
        tasks.append((source, spec, str(run_dir)))
    if on_start:
        on_start(len(tasks), len(outcomes))

    def done(outcome: dict[str, Any]) -> None:
        outcomes[outcome["run_id"]] = outcome
        if on_done:
            on_done(outcome)

    workers = workers or os.cpu_count() or 1
    if tasks:
        if backend == "local":
            _run_local(tasks, workers, done)
        else:
            _run_ray(tasks, workers, address, done)
    runs = []
    for spec in specs:
        o = outcomes.get(spec.run_id, {"status": "failed", "error": "not run"})
        runs.append(
            {
                "run_id": spec.run_id,
                "seed": spec.seed,
                "params": spec.params,
                "status": o["status"],
                "error": o.get("error"),
                "skipped": bool(o.get("skipped")),
            }
        )
    atomic_write_json(sweep_dir / "runs.json", runs)
    rows = collect_rows(sweep_dir / "runs", runs)
    summary = aggregate(rows, [k for k, _ in grids])
    table_path, figure_path = write_outputs(sweep_dir, rows, summary, [k for k, _ in grids])
    return SweepResult(sweep_dir, runs, rows, summary, table_path, figure_path)
