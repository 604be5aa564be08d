"""Choosing experiment trackers per run: ``quadriga run NAME --with mlflow``.

A tracker is a plugin (for example ``quadriga-mlflow``) whose lifecycle hooks
(:func:`~quadriga.hookspecs.quadriga_run_start`, :func:`~quadriga.hookspecs.quadriga_stage_end`,
:func:`~quadriga.hookspecs.quadriga_step_metrics`, :func:`~quadriga.hookspecs.quadriga_run_end`)
log a run somewhere else. Installed trackers stay silent unless chosen: the choice is the
environment variable ``QUADRIGA_WITH`` (comma-separated names), so that sweep workers started by
the run inherit it. From Python::

    with quadriga.tracking.using("mlflow"):
        quadriga.api.run("gmm-mcmc-baselines")

A tracker's hooks start with ``if not quadriga.tracking.enabled("mlflow"): return``;
:class:`RunHooks` writes the four per-run hooks once for a tracker object with ``start(run)``,
``log_step``, ``log_stage`` and ``end``, so a tracker plugin's ``plugin.py`` only names them.

Where a run or sweep was logged (an MLflow run id, a TensorBoard folder) is a tracker's closing
:func:`note`: printed on stderr at once, or, inside :func:`held_notes` (``quadriga run`` and
``quadriga sweep``), after the results tables, so that the reader reads the results first and
then where they are logged.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from quadriga.errors import ConfigError

if TYPE_CHECKING:
    from quadriga.registry import Registry

__all__ = ["ENV", "RunHooks", "available", "check", "enabled", "held_notes", "note", "selected", "using"]

#: the environment variable holding the chosen trackers
ENV = "QUADRIGA_WITH"

#: the lifecycle hooks a tracker implements (at least one of them)
TRACKER_HOOKS = (
    "quadriga_run_start",
    "quadriga_stage_end",
    "quadriga_step_metrics",
    "quadriga_run_end",
    "quadriga_sweep_start",
    "quadriga_sweep_end",
)


def selected() -> set[str]:
    """The trackers chosen for runs of this process (``QUADRIGA_WITH``)."""
    return {n.strip() for n in os.environ.get(ENV, "").split(",") if n.strip()}


def enabled(name: str) -> bool:
    """Whether tracker ``name`` (its plugin's entry-point name) was chosen for this run."""
    return name in selected()


def available(registry: Registry) -> dict[str, str]:
    """``{plugin name: distribution}`` of the loaded plugins that implement a lifecycle hook."""
    registry.load()
    names: dict[str, str] = {}
    for hook in TRACKER_HOOKS:
        for impl in getattr(registry.pm.hook, hook).get_hookimpls():
            status = registry.plugins.get(impl.plugin_name)
            names[impl.plugin_name] = status.distribution if status is not None else impl.plugin_name
    return names


def check(names: Iterable[str], registry: Registry) -> list[str]:
    """The plugin names of the trackers ``names`` (plugin or distribution names), checked.

    The names already chosen in ``QUADRIGA_WITH`` are checked the same way, so that a misspelt
    ``QUADRIGA_WITH=mlfow`` is refused like ``--with mlfow`` instead of logging nothing.

    Raises:
        ConfigError: a name is not an installed tracker (key ``--with``, or ``QUADRIGA_WITH`` for a
            name of the environment variable); the message lists those that are, the closest
            name, and how to install ``quadriga-mlflow``.
    """
    from quadriga.errors import suggest

    known = available(registry)
    by_dist = {dist: plugin for plugin, dist in known.items()}

    def resolve(name: str, key: str) -> str:
        plugin = name if name in known else by_dist.get(name)
        if plugin is None:
            listed = ", ".join(sorted(known)) or "none"
            what = f"'{name}' (in {ENV}={os.environ.get(ENV, '')!r})" if key == ENV else f"'{name}'"
            raise ConfigError(
                f"{what} is not an installed tracker (installed: {listed}).{suggest(name, list(known))} "
                "For MLflow: `pip install -c constraints.txt -e plugins/quadriga-mlflow` in the checkout.",
                key=key,
            )
        return plugin

    out = [resolve(name, "--with") for name in names]
    for name in sorted(selected()):
        resolve(name, ENV)
    return out


@contextlib.contextmanager
def using(*names: str) -> Iterator[None]:
    """Choose trackers for the runs inside the block (added to those already chosen)."""
    before = os.environ.get(ENV)
    os.environ[ENV] = ",".join(sorted(selected() | set(names)))
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before


#: the notes held by the innermost :func:`held_notes` block (a stack: blocks may nest)
_HELD: list[list[str]] = []


def _print_notes(notes: list[str]) -> None:
    for text in notes:
        print(text, file=sys.stderr, flush=True)
    notes.clear()


def note(text: str) -> None:
    """A tracker's closing note (where the run went), printed on stderr now or held.

    Inside :func:`held_notes` the note waits for the block's ``flush()`` (or its end); elsewhere
    (``quadriga.api.run`` from Python) it is printed at once.

    Args:
        text: the note, one or more lines, each within 80 columns but for paths and URIs.
    """
    if _HELD:
        _HELD[-1].append(text)
    else:
        _print_notes([text])


@contextlib.contextmanager
def held_notes() -> Iterator[Callable[[], None]]:
    """Hold trackers' :func:`note` s until the caller has printed its results.

    Yields ``flush()``, which prints the notes held so far on stderr; what is still held when the
    block ends (an error or Ctrl-C cut it short) is printed then.
    """
    held: list[str] = []
    _HELD.append(held)
    try:
        yield lambda: _print_notes(held)
    finally:
        _HELD.remove(held)
        _print_notes(held)


class RunHooks:
    """The per-run lifecycle hooks of a tracker plugin, written once for every tracker.

    Each hook returns at once unless the run chose the tracker (:func:`enabled`). At
    ``quadriga_run_start`` the tracker class is imported (only then: ``quadriga list`` imports no
    tracking library) and ``Class.start(run)`` opens the tracker of that run; the other hooks call
    its ``log_step(stage, record)``, ``log_stage(stage, artifact, seconds)`` and ``end(status,
    error)``, and ``end`` forgets it. A tracker plugin's ``plugin.py``::

        _RUNS = tracking.RunHooks("tensorboard", "quadriga_tensorboard.writer:TensorBoardRun")
        quadriga_run_start = _RUNS.run_start
        quadriga_step_metrics = _RUNS.step_metrics
        quadriga_stage_end = _RUNS.stage_end
        quadriga_run_end = _RUNS.run_end

    Args:
        name: the tracker's name for ``--with`` (its plugin's entry-point name).
        target: ``"module:Class"`` of the tracker class.

    Attributes:
        active: ``{id(run): tracker}`` for the runs of this process that chose it.
    """

    def __init__(self, name: str, target: str) -> None:
        from quadriga.hookspecs import hookimpl

        self.name, self.target = name, target
        self.active: dict[int, Any] = {}

        @hookimpl
        def quadriga_run_start(run: Any) -> None:
            """Open this run's tracker when the run chose it."""
            if not enabled(self.name):
                return
            import importlib

            module, _, attr = self.target.partition(":")
            self.active[id(run)] = getattr(importlib.import_module(module), attr).start(run)

        @hookimpl
        def quadriga_step_metrics(run: Any, stage: str, record: dict[str, Any]) -> None:
            """Log a streamed record (``progress.log``) at its step."""
            tracker = self.active.get(id(run))
            if tracker is not None:
                tracker.log_step(stage, record)

        @hookimpl
        def quadriga_stage_end(run: Any, stage: str, artifact: Any, seconds: float) -> None:
            """Log the stage's numbers and its wall-clock seconds."""
            tracker = self.active.get(id(run))
            if tracker is not None:
                tracker.log_stage(stage, artifact, seconds)

        @hookimpl
        def quadriga_run_end(run: Any, status: str, error: BaseException | None) -> None:
            """Close this run's tracker with the run's status."""
            tracker = self.active.pop(id(run), None)
            if tracker is not None:
                tracker.end(status, error)

        self.run_start, self.step_metrics = quadriga_run_start, quadriga_step_metrics
        self.stage_end, self.run_end = quadriga_stage_end, quadriga_run_end
