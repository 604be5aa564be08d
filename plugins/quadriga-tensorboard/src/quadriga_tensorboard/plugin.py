"""The hooks of the ``tensorboard`` tracker; each returns at once unless the run chose it.

Chosen with ``quadriga run NAME --with tensorboard`` (or ``quadriga.tracking.using("tensorboard")``).
Importing this module imports neither tensorboardX nor torch (``quadriga list`` stays fast); the
writer is imported by the first hook of a run that chose it. The work is done by
:class:`quadriga_tensorboard.writer.TensorBoardRun`.
"""

from __future__ import annotations

from typing import Any

import quadriga
from quadriga import tracking

#: the tracker's name for ``--with`` (this plugin's entry-point name)
NAME = "tensorboard"

_ACTIVE: dict[int, Any] = {}  # id(run) -> TensorBoardRun, for the runs of this process that chose it


@quadriga.hookimpl
def quadriga_register(registry: Any) -> None:
    """Nothing to register: this plugin only implements lifecycle hooks."""


@quadriga.hookimpl
def quadriga_run_start(run: Any) -> None:
    """Open this run's event directory and write the resolved pipeline as text."""
    if not tracking.enabled(NAME):
        return
    from quadriga_tensorboard.writer import TensorBoardRun

    _ACTIVE[id(run)] = TensorBoardRun.start(run)


@quadriga.hookimpl
def quadriga_step_metrics(run: Any, stage: str, record: dict[str, Any]) -> None:
    """Write a streamed record (``progress.log``) as scalars ``<stage>/<key>`` at its step."""
    writer = _ACTIVE.get(id(run))
    if writer is not None:
        writer.log_step(stage, record)


@quadriga.hookimpl
def quadriga_stage_end(run: Any, stage: str, artifact: Any, seconds: float) -> None:
    """Write the stage's numbers (metrics, diagnostics, estimate) and its seconds as scalars."""
    writer = _ACTIVE.get(id(run))
    if writer is not None:
        writer.log_stage(stage, artifact, seconds)


@quadriga.hookimpl
def quadriga_run_end(run: Any, status: str, error: BaseException | None) -> None:
    """Write the run's figures as images and its status as text, then close the event file."""
    writer = _ACTIVE.pop(id(run), None)
    if writer is not None:
        writer.end(status, error)
