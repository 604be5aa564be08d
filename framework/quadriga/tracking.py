"""Choosing experiment trackers per run: ``quadriga run NAME --with mlflow``.

A tracker is a plugin (for example ``quadriga-mlflow``) whose lifecycle hooks
(:func:`~quadriga.hookspecs.quadriga_run_start`, :func:`~quadriga.hookspecs.quadriga_stage_end`,
:func:`~quadriga.hookspecs.quadriga_step_metrics`, :func:`~quadriga.hookspecs.quadriga_run_end`)
log a run somewhere else. Installed trackers stay silent unless chosen: the choice is the
environment variable ``QUADRIGA_WITH`` (comma-separated names), so that sweep workers started by
the run inherit it. From Python::

    with quadriga.tracking.using("mlflow"):
        quadriga.api.run("gmm-mcmc-baselines")

A tracker's hooks start with ``if not quadriga.tracking.enabled("mlflow"): return``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from quadriga.errors import ConfigError

if TYPE_CHECKING:
    from quadriga.registry import Registry

__all__ = ["ENV", "available", "check", "enabled", "selected", "using"]

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
                "For MLflow: `pip install -e plugins/quadriga-mlflow`.",
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
