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

_ACTIVE: dict[int, Any] = {}  # id(run) -> MlflowTracker, for the runs of this process that chose mlflow


def _tracker(run: Any) -> Any:
    return _ACTIVE.get(id(run))


@quadriga.hookimpl
def quadriga_register(registry: Any) -> None:
    """Nothing to register: this plugin only implements lifecycle hooks."""


@quadriga.hookimpl
def quadriga_run_start(run: Any) -> None:
    """Open one MLflow run for this quadriga run and log the resolved pipeline as parameters."""
    if not tracking.enabled(NAME):
        return
    from quadriga_mlflow.tracker import MlflowTracker

    _ACTIVE[id(run)] = MlflowTracker.start(run)


@quadriga.hookimpl
def quadriga_step_metrics(run: Any, stage: str, record: dict[str, Any]) -> None:
    """Log a streamed record (``progress.log``) as metrics ``<stage>/<key>`` at its step."""
    tracker = _tracker(run)
    if tracker is not None:
        tracker.log_step(stage, record)


@quadriga.hookimpl
def quadriga_stage_end(run: Any, stage: str, artifact: Any, seconds: float) -> None:
    """Log the stage's numbers (metrics, diagnostics, estimate) and its wall-clock seconds."""
    tracker = _tracker(run)
    if tracker is not None:
        tracker.log_stage(stage, artifact, seconds)


@quadriga.hookimpl
def quadriga_run_end(run: Any, status: str, error: BaseException | None) -> None:
    """Log figures, manifest, pipeline and results as artifacts and close the MLflow run."""
    tracker = _ACTIVE.pop(id(run), None)
    if tracker is not None:
        tracker.end(status, error)


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
