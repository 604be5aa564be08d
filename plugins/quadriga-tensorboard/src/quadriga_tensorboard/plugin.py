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

#: the per-run hooks: ``TensorBoardRun.start(run)`` for a run that chose this tracker, then its
#: ``log_step``, ``log_stage`` and ``end``
_RUNS = tracking.RunHooks(NAME, "quadriga_tensorboard.writer:TensorBoardRun")
quadriga_run_start = _RUNS.run_start
quadriga_step_metrics = _RUNS.step_metrics
quadriga_stage_end = _RUNS.stage_end
quadriga_run_end = _RUNS.run_end


@quadriga.hookimpl
def quadriga_register(registry: Any) -> None:
    """Nothing to register: this plugin only implements lifecycle hooks."""
