"""quadriga: recent machine-learning methods as composable, checkable plugins.

Four interfaces (:class:`Sampler`, :class:`Learner`, :class:`Estimator`,
:class:`Evaluator`), three kinds of task (:class:`Target`, :class:`Dataset`,
:class:`Environment`), a pluggy registry over the ``quadriga`` entry-point
group, and TOML pipelines composed by name. Importing this package imports
neither torch nor any plugin.
"""

from __future__ import annotations

from quadriga.artifacts import Estimate, Fitted, Metrics, Samples
from quadriga.errors import ConfigError, QuadrigaError
from quadriga.hookspecs import hookimpl
from quadriga.interfaces import (
    Dataset, Environment, Estimator, Evaluator, Learner, Sampler, Target, named,
)
from quadriga.params import param
from quadriga.progress import current_progress

__version__ = "0.1.0"

__all__ = [
    "__version__", "hookimpl", "param", "current_progress", "named",
    "Sampler", "Learner", "Estimator", "Evaluator", "Target", "Dataset", "Environment",
    "Samples", "Fitted", "Estimate", "Metrics", "QuadrigaError", "ConfigError",
]
