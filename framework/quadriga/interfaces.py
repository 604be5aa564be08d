"""The four interfaces every method implements, and the three kinds of task.

A component is an attrs class (its fields are its hyperparameters, declared with
:func:`quadriga.param`) that subclasses exactly one of the bases below and
implements its one method. The core calls that method with the stage's named
inputs as keyword arguments plus a per-stage ``torch.Generator``::

    Sampler.sample(target, *, generator) -> Samples
    Learner.fit(task, *, generator, progress) -> Fitted
    Estimator.estimate(data, *, generator) -> Estimate
    Evaluator.evaluate(subject, reference) -> Metrics

A stage may declare further inputs, e.g. ``inputs = { data = "mcmc", model = "fit" }``:
every input name must be a parameter of the method, and every parameter without a
default must be given. ``input_types`` maps input names to the type names
(``"Target"``, ``"Samples"``, ...) the component accepts, and is checked before
anything runs. When an input lists several names (``subject = ["mala", "srmc"]``)
the method receives a ``dict`` from name to artifact; :func:`named` normalises both forms.

Nothing here imports torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

__all__ = [
    "INTERFACES",
    "KIND_BASES",
    "TASK_KINDS",
    "Component",
    "Dataset",
    "Environment",
    "Estimator",
    "Evaluator",
    "Learner",
    "Sampler",
    "Target",
    "Task",
    "named",
]


class Component:
    """Base of every registered component.

    Class attributes:
        kind: the registry kind (``"sampler"``, ``"target"``, ...).
        output_type: the type name of what the component produces.
        input_types: ``{input name: tuple of accepted type names}``.
    """

    kind: ClassVar[str] = ""
    output_type: ClassVar[str] = ""
    input_types: ClassVar[Mapping[str, tuple[str, ...]]] = {}


class Sampler(Component):
    """Draws samples from a target: an unnormalised density, a score model or a discrete energy."""

    kind = "sampler"
    output_type = "Samples"
    input_types: ClassVar[dict[str, tuple[str, ...]]] = {"target": ("Target",)}

    def sample(self, target: Any, *, generator: Any) -> Any:
        """Draw samples.

        Args:
            target: a :class:`Target` (or what ``input_types`` allows, e.g. ``Samples`` for thinning).
            generator: ``torch.Generator``, the stage's only source of randomness.

        Returns:
            :class:`quadriga.artifacts.Samples`.
        """
        raise NotImplementedError


class Learner(Component):
    """Trains a model or a policy on a dataset or an environment."""

    kind = "learner"
    output_type = "Fitted"
    input_types: ClassVar[dict[str, tuple[str, ...]]] = {"task": ("Dataset", "Environment", "Target")}

    def fit(self, task: Any, *, generator: Any, progress: Any) -> Any:
        """Train.

        Args:
            task: a :class:`Dataset` or :class:`Environment`.
            generator: ``torch.Generator`` for all randomness of the stage.
            progress: a :class:`quadriga.progress.StageProgress`: call
                ``progress.start(total)``, ``progress.advance(n)`` and
                ``progress.log(step, **metrics)`` (streamed to ``metrics.jsonl``).

        Returns:
            :class:`quadriga.artifacts.Fitted`.
        """
        raise NotImplementedError


class Estimator(Component):
    """Computes a value with its uncertainty from samples or data."""

    kind = "estimator"
    output_type = "Estimate"
    input_types: ClassVar[dict[str, tuple[str, ...]]] = {
        "data": ("Samples", "Dataset", "Target", "Environment")
    }

    def estimate(self, data: Any, *, generator: Any) -> Any:
        """Estimate.

        Args:
            data: a ``Samples`` artifact or a task.
            generator: ``torch.Generator``.

        Returns:
            :class:`quadriga.artifacts.Estimate`.
        """
        raise NotImplementedError


class Evaluator(Component):
    """Scores one or several subjects, optionally against a reference."""

    kind = "evaluator"
    output_type = "Metrics"
    input_types: ClassVar[dict[str, tuple[str, ...]]] = {
        "subject": ("Samples", "Fitted", "Estimate", "Metrics"),
        "reference": ("Target", "Dataset", "Environment", "Samples"),
    }

    def evaluate(self, subject: Any, reference: Any = None) -> Any:
        """Evaluate.

        Args:
            subject: an artifact, or ``{name: artifact}`` when the stage lists several.
            reference: a task or artifact to compare against, or ``None``.

        Returns:
            :class:`quadriga.artifacts.Metrics`.
        """
        raise NotImplementedError


class Task(Component):
    """Base of targets, datasets and environments. Tasks are built before any stage runs."""

    output_type = ""

    def prepare(self, *, generator: Any) -> None:
        """Draw whatever randomness the task needs (a random mixture, a data split).

        Called once by the core after the task is built, with a generator derived
        from the root seed and the task name. The default does nothing.
        """


class Target(Task):
    """A distribution to sample from, known up to a constant.

    Subclasses implement ``log_prob`` and ``score`` and set ``dim``; those with
    exact samplers or moments override ``sample``, ``mean`` and ``covariance``.
    """

    kind = "target"
    output_type = "Target"

    @property
    def dim(self) -> int:
        """Dimension ``d`` of the state space."""
        raise NotImplementedError

    def log_prob(self, x: Any) -> Any:
        """Unnormalised log density: ``Tensor[n, d] -> Tensor[n]`` (nats)."""
        raise NotImplementedError

    def score(self, x: Any) -> Any:
        """Gradient of ``log_prob``: ``Tensor[n, d] -> Tensor[n, d]``."""
        raise NotImplementedError

    def sample(self, num_samples: int, *, generator: Any) -> Any:
        """Exact samples ``Tensor[num_samples, d]``.

        Raises:
            NotImplementedError: when the target has no exact sampler.
        """
        raise NotImplementedError(f"{type(self).__name__} has no exact sampler")


class Dataset(Task):
    """Arrays with named splits (``"train"``, ``"calibration"``, ``"test"``, ...)."""

    kind = "dataset"
    output_type = "Dataset"

    def split(self, name: str) -> tuple[Any, Any]:
        """Return ``(X[n, p], y[n])`` of one split (``y`` may be ``None``).

        Raises:
            KeyError: for an unknown split name.
        """
        raise NotImplementedError


class Environment(Task):
    """A gymnasium environment by id and keyword arguments."""

    kind = "environment"
    output_type = "Environment"

    def make(self, **overrides: Any) -> Any:
        """Return a new ``gymnasium.Env``."""
        raise NotImplementedError


INTERFACES: dict[str, type[Component]] = {
    "sampler": Sampler,
    "learner": Learner,
    "estimator": Estimator,
    "evaluator": Evaluator,
}
TASK_KINDS: dict[str, type[Component]] = {
    "target": Target,
    "dataset": Dataset,
    "environment": Environment,
}
KIND_BASES: dict[str, type[Component]] = {**INTERFACES, **TASK_KINDS}


def named(value: Any, default_name: str = "subject") -> dict[str, Any]:
    """Normalise a stage input to ``{name: artifact}``.

    Args:
        value: one artifact, or a mapping from stage name to artifact.
        default_name: the name given to a single artifact when its ``info`` does
            not carry the ``"stage"`` that produced it (the core sets it).

    Returns:
        An ordered ``dict``.
    """
    if isinstance(value, Mapping):
        return dict(value)
    info = getattr(value, "info", None)
    name = info.get("stage", default_name) if isinstance(info, Mapping) else default_name
    return {name: value}
