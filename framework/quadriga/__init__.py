"""quadriga: recent machine-learning methods as composable, checkable plugins.

Four interfaces (:class:`Sampler`, :class:`Learner`, :class:`Estimator`,
:class:`Evaluator`), three kinds of task (:class:`Target`, :class:`Dataset`,
:class:`Environment`), a pluggy registry over the ``quadriga`` entry-point
group, and TOML pipelines composed by name. Importing this package imports
neither torch nor any plugin; the names below are loaded on first use so that
plugin registration (``quadriga list``) stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from quadriga.hookspecs import hookimpl

if TYPE_CHECKING:
    #: the installed version (read from the metadata on first use, see __getattr__)
    __version__: str

_LAZY = {
    "Samples": "quadriga.artifacts",
    "Fitted": "quadriga.artifacts",
    "Estimate": "quadriga.artifacts",
    "Metrics": "quadriga.artifacts",
    "Sampler": "quadriga.interfaces",
    "Learner": "quadriga.interfaces",
    "Estimator": "quadriga.interfaces",
    "Evaluator": "quadriga.interfaces",
    "Target": "quadriga.interfaces",
    "Dataset": "quadriga.interfaces",
    "Environment": "quadriga.interfaces",
    "named": "quadriga.interfaces",
    "param": "quadriga.params",
    "current_progress": "quadriga.progress",
    "QuadrigaError": "quadriga.errors",
    "ConfigError": "quadriga.errors",
    "build": "quadriga.notebook",
    "register": "quadriga.registry.local",
    "load_run": "quadriga.rundir.loaded",
    "to_pandas": "quadriga.notebook",
    "run": "quadriga.api",
    "api": "quadriga.api",
}

__all__ = ["__version__", "hookimpl", *_LAZY]


def __getattr__(name: str) -> Any:
    """Import the public names lazily (PEP 562); ``__version__`` is read from the metadata on first use."""
    if name == "__version__":
        from quadriga.versions import version_of

        #: the installed version (from the distribution's metadata, like every version quadriga reports)
        version = globals()["__version__"] = version_of("quadriga")
        return version
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'quadriga' has no attribute '{name}'")
    imported = importlib.import_module(module)
    value = imported if module == f"quadriga.{name}" else getattr(imported, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names (for tab completion)."""
    return sorted(__all__)
