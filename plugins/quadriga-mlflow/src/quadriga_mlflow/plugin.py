"""The hooks of the ``mlflow`` tracker; each returns at once unless the run chose it (``--with mlflow``).

Importing this module imports neither mlflow nor torch (``quadriga list`` stays fast); mlflow is
imported by the first hook of a run that chose it. The work is done by
:class:`quadriga_mlflow.tracker.MlflowTracker`.
"""

from __future__ import annotations

from typing import Any

import quadriga
from quadriga import tracking

#: the tracker's name for ``--with`` (this plugin's entry-point name)
NAME = "mlflow"

#: the per-run hooks: ``MlflowTracker.start(run)`` for a run that chose this tracker, then its
#: ``log_step``, ``log_stage`` and ``end``
_RUNS = tracking.RunHooks(NAME, "quadriga_mlflow.tracker:MlflowTracker")
quadriga_run_start = _RUNS.run_start
quadriga_step_metrics = _RUNS.step_metrics
quadriga_stage_end = _RUNS.stage_end
quadriga_run_end = _RUNS.run_end


@quadriga.hookimpl
def quadriga_register(registry: Any) -> None:
    """Nothing to register: this plugin only implements lifecycle hooks."""


_SWEEPS: list[Any] = []  # the open parent run of a sweep in this process (at most one)


@quadriga.hookimpl
def quadriga_sweep_start(sweep: dict[str, Any]) -> None:
    """Open the sweep's parent MLflow run; the runs of the sweep are nested under it."""
    if not tracking.enabled(NAME):
        return
    from quadriga_mlflow.tracker import SweepTracker

    _SWEEPS.append(SweepTracker.start(sweep))


@quadriga.hookimpl
def quadriga_sweep_end(sweep: dict[str, Any], status: str) -> None:
    """Log the sweep's summary table and figure to the parent run and close it."""
    if _SWEEPS:
        _SWEEPS.pop().end(sweep, status)
