"""Hook specifications: the functions a quadriga plugin may implement.

A plugin is a module named by an entry point of the ``quadriga`` group, e.g. in
its ``pyproject.toml``::

    [project.entry-points.quadriga]
    srmc = "quadriga_srmc.plugin"

The module defines functions decorated with :data:`quadriga.hookimpl` whose
names are the hooks below. Each hook is called by keyword, so an
implementation may accept only the arguments it needs, as in pluggy and pytest.
Built-in components (``quadriga-std``) are registered through exactly the same
hooks as third-party ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from quadriga.registry import PluginRegistrar

hookspec = pluggy.HookspecMarker("quadriga")
hookimpl = pluggy.HookimplMarker("quadriga")


@hookspec
def quadriga_register(registry: PluginRegistrar) -> None:
    """Register the plugin's components, ready pipelines and claims.

    Called once per plugin when the registry is first used (``quadriga list``,
    ``quadriga run``, ...), plugin by plugin, so that an exception here marks
    only this plugin as broken. It must be cheap: add specs by lazy
    ``"module:attr"`` paths and import nothing heavy (no torch)::

        @quadriga.hookimpl
        def quadriga_register(registry):
            registry.add("sampler", "srmc", "quadriga_srmc.sampler:SRMC",
                         summary="Score-Repellent Monte Carlo around a base kernel",
                         paper="Doe et al. 2025, Algorithm 1")
            registry.add_pipelines(__package__)  # every pipelines/*.toml
            registry.add_claim("srmc-variance", "quadriga_srmc.claims:variance_reduction",
                               summary="SR-MALA has lower MSE than tuned MALA")

    Args:
        registry: the registrar bound to this plugin's distribution; see
            :class:`quadriga.registry.PluginRegistrar`.
    """


@hookspec
def quadriga_run_start(run: Any) -> None:
    """Called after a run's directory is created and before its first stage runs.

    An exception is reported as a warning naming the plugin and does not stop the run.

    Args:
        run: the :class:`quadriga.runs.Run` (``run.dir``, ``run.config``, ``run.seed``).
    """


@hookspec
def quadriga_stage_end(run: Any, stage: str, artifact: Any, seconds: float) -> None:
    """Called after a stage finished and its results were written to disk.

    Exceptions are reported as warnings.

    Args:
        run: the :class:`quadriga.runs.Run`.
        stage: the stage name.
        artifact: the artifact the stage returned (``Samples``, ``Fitted``, ``Estimate`` or ``Metrics``).
        seconds: wall-clock seconds the stage took.
    """


@hookspec
def quadriga_step_metrics(run: Any, stage: str, record: dict[str, Any]) -> None:
    """Called with each record a stage streams to ``metrics.jsonl`` (``progress.log(step, loss=...)``).

    Called after the record is written, in the stage's own thread, so it must be quick (queue or
    batch remote calls). Exceptions are reported as warnings at the end of the run.

    Args:
        run: the :class:`quadriga.runs.Run`.
        stage: the stage name.
        record: ``{"stage": name, "step": int (when given), metric: number, ...}``.
    """


@hookspec
def quadriga_run_end(run: Any, status: str, error: BaseException | None) -> None:
    """Called once when a run ends, whatever the outcome.

    Exceptions are reported as warnings.

    Args:
        run: the :class:`quadriga.runs.Run`.
        status: ``"finished"``, ``"failed"`` or ``"interrupted"``.
        error: the exception that ended the run, or ``None``.
    """


@hookspec
def quadriga_sweep_start(sweep: dict[str, Any]) -> None:
    """Called once before a sweep's runs start, when the sweep chose a tracker (``--with``).

    Environment variables set here reach the runs of the local backend (its worker processes
    start afterwards), e.g. the parent-run id a tracker nests the runs under. Exceptions are
    reported as warnings.

    Args:
        sweep: ``{"source": pipeline name or path, "seeds": [int], "grid": {key: [values]},
            "fixed": ["key=value" of each --set], "dir": None}``.
    """


@hookspec
def quadriga_sweep_end(sweep: dict[str, Any], status: str) -> None:
    """Called once after a sweep's runs ended and its summary was written (``--with`` given).

    Args:
        sweep: as for :func:`quadriga_sweep_start`, with ``"dir"`` the sweep directory (holding
            ``summary.csv``, ``summary.png`` and ``results.parquet``).
        status: ``"finished"`` when every run finished, else ``"failed"``.
    """


@hookspec
def quadriga_check_tasks() -> dict[str, dict[str, Any]] | None:
    """Small tasks that the conformance checks (:mod:`quadriga.testing`) give components.

    Called when a check has to make a component's inputs itself. Return task tables by the
    input type they provide, e.g. quadriga-std's::

        @quadriga.hookimpl
        def quadriga_check_tasks():
            return {"Target": {"use": "gaussian", "dim": 2},
                    "Dataset": {"use": "sklearn-dataset", "name": "diabetes"},
                    "Environment": {"use": "gym-env", "env_id": "CartPole-v1"}}

    Returns:
        ``{"Target" | "Dataset" | "Environment": task table}``; the first plugin to give a type
        wins, and a table whose component is not registered is ignored.
    """
