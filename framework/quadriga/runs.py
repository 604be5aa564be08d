"""Runs: the public names of the runner, the run directory and its file I/O, in one place.

The work is split by job: :mod:`quadriga.fileio` (atomic writes, names, no symlinks),
:mod:`quadriga.rundir` (the run directory: status record, results, manifest, stage
artifacts, resume plan) and :mod:`quadriga.runner` (the loop over stages). Import from here.
"""

from __future__ import annotations

from pathlib import Path

from quadriga.fileio import atomic_path, atomic_write_json, atomic_write_text, safe_name, stage_dir_name
from quadriga.rundir import ResumePlan, RunDir, RunStatus, StageStatus, new_run_dir
from quadriga.runner import Run, RunResult, execute, manifest, run_stage

__all__ = [
    "ResumePlan",
    "Run",
    "RunDir",
    "RunResult",
    "RunStatus",
    "StageStatus",
    "atomic_path",
    "atomic_write_json",
    "atomic_write_text",
    "execute",
    "manifest",
    "new_run_dir",
    "resume_plan",
    "run_stage",
    "safe_name",
    "stage_dir_name",
]


def resume_plan(run_dir: Path) -> ResumePlan:
    """Stages of an earlier run that ``--resume`` reloads, and finished ones it must re-run.

    Returns:
        A :class:`~quadriga.rundir.ResumePlan`; it unpacks as ``(reloaded, rerun)``.
    """
    return RunDir(run_dir).resume_plan()
