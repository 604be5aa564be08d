"""Execution of one sweep run in the current process, and the status records it leaves on disk.

:func:`execute_one` is what every backend runs (a local worker process or a Ray task);
:func:`_mark_failed` records a run that ended abnormally; :func:`_status_of` reads a run's status.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import time
import traceback
from pathlib import Path
from typing import Any

from quadriga.fileio import LOCK, atomic_write_text, lock_dir
from quadriga.rundir import RunDir
from quadriga.sweep.grid import RunSpec


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
            resumable = RunDir(directory).resumable()
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


def _status_of(directory: Path) -> str | None:
    """The ``status`` in ``directory/status.json``, ``None`` when there is none or it cannot be read."""
    return RunDir(directory).recorded_status()


def _mark_failed(run_dir: str, error: str, state: str = "failed") -> None:
    """Record a run that ended abnormally through the typed status record (:meth:`RunDir.mark_ended`).

    The finished stages are kept, none stays ``running``; a status the run wrote itself on the way
    out (``failed``, ``interrupted``) is kept as it is.
    """
    with contextlib.suppress(OSError):
        RunDir(Path(run_dir)).mark_ended(state, error)
