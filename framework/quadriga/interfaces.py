"""The four interfaces every method implements, and the three kinds of task.

A component is an attrs class (its fields are its hyperparameters, declared with
:func:`quadriga.param`) that subclasses exactly one of the bases below and
implements its one method. Each interface declares what the core needs to run it:

- ``method``: the name of the method the core calls;
- ``injected``: the keyword arguments the core adds to the stage's inputs;
- ``output_type``: the :class:`~quadriga.artifacts.Artifact` class it returns;
- ``input_types``: ``{input name: tuple of accepted classes}`` (artifact classes and task
  kinds such as :class:`Target`), checked with ``issubclass`` before anything runs::

    Sampler.sample(target, *, generator) -> Samples
    Learner.fit(task, *, generator, progress) -> Fitted
    Estimator.estimate(data, *, generator) -> Estimate
    Evaluator.evaluate(subject, reference=None, *, generator) -> Metrics

``generator`` is a ``torch.Generator`` derived from the root seed and the stage, on the
stage's device; it is the only source of randomness (no component has an integer seed
parameter; numpy work uses :func:`quadriga.seeding.numpy_rng`). A stage may declare further
inputs, e.g. ``inputs = { data = "mcmc", model = "fit" }``: every input name must be a
parameter of the method, and every parameter without a default must be given. When an input
lists several names (``subject = ["mala", "srmc"]`` or ``"mala[*]"``) the method receives a
``dict`` from name to artifact; :func:`named` normalises both forms, and
:func:`~quadriga.stage_names.replicate_groups` groups replicates of one configuration.

Capabilities a plugin dispatches on are class attributes of its components (``discrete = True``),
never class names. Nothing here imports torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from quadriga._repr import component_repr
from quadriga.artifacts import Estimate, Fitted, Metrics, Samples
from quadriga.errors import ConfigError, suggest

if TYPE_CHECKING:
    import torch

    from quadriga.progress import StageProgress

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
    "accepted_types",
    "interface_of",
    "named",
]


class Component:
    """Base of every registered component.

    Class attributes:
        kind: the registry kind (``"sampler"``, ``"target"``, ...).
        method: the method the core calls (``"sample"``, ...; ``""`` for tasks).
        injected: the keyword arguments the core passes besides the inputs.
        output_type: the class of what the component produces (an artifact class, or the task kind).
        input_types: ``{input name: tuple of accepted classes}``.
    """

    kind: ClassVar[str] = ""
    method: ClassVar[str] = ""
    injected: ClassVar[tuple[str, ...]] = ()
    output_type: ClassVar[type] = object
    input_types: ClassVar[Mapping[str, tuple[type, ...]]] = {}

    @classmethod
    def __attrs_init_subclass__(cls) -> None:
        """Give each attrs component a one-line ``repr`` (public parameters, tensors as shapes).

        attrs calls this once it has built a subclass. Its generated ``repr`` would print every
        field, private tensors included; :func:`quadriga._repr.component_repr` replaces it.
        A ``__repr__`` the class writes itself is kept.
        """
        code = getattr(cls.__dict__.get("__repr__"), "__code__", None)
        if code is not None and code.co_filename.startswith("<attrs generated"):
            cls.__repr__ = _component_repr  # type: ignore[method-assign]


def _component_repr(self: object) -> str:
    return component_repr(self)


class Sampler(Component):
    """Draws samples from a target: an unnormalised density, a score model or a discrete energy."""

    kind = "sampler"
    method = "sample"
    injected = ("generator",)
    output_type = Samples
    input_types: ClassVar[Mapping[str, tuple[type, ...]]] = {}  # set below, once Target exists

    def sample(self, target: Any, *, generator: torch.Generator) -> Samples:
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
    method = "fit"
    injected = ("generator", "progress")
    output_type = Fitted
    input_types: ClassVar[Mapping[str, tuple[type, ...]]] = {}

    def fit(self, task: Any, *, generator: torch.Generator, progress: StageProgress) -> Fitted:
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
    method = "estimate"
    injected = ("generator",)
    output_type = Estimate
    input_types: ClassVar[Mapping[str, tuple[type, ...]]] = {}

    def estimate(self, data: Any, *, generator: torch.Generator) -> Estimate:
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
    method = "evaluate"
    injected = ("generator",)
    output_type = Metrics
    input_types: ClassVar[Mapping[str, tuple[type, ...]]] = {}
    #: optional: what each metric means, ``{"tv": "total variation ... (0 to 1)"}``; ``<k>`` in a
    #: key stands for any suffix (``"fraction_<k>"``). Read, without running anything, by the
    #: glossary of ``quadriga report`` (:func:`quadriga.report.glossary`).
    metrics_doc: ClassVar[Mapping[str, str]] = {}

    def evaluate(self, subject: Any, reference: Any = None, *, generator: torch.Generator) -> Metrics:
        """Evaluate.

        Args:
            subject: an artifact, or ``{name: artifact}`` when the stage lists several (from
                Python also a list of artifacts; :func:`named` turns each form into
                ``{name: artifact}``, and values are keyed ``"<name>/<metric>"``).
            reference: a task or artifact to compare against, or ``None``.
            generator: ``torch.Generator``, the only source of the evaluator's randomness
                (reference draws, projections, bootstrap resamples). Accept tensors on any
                device: ``.detach().cpu()`` before numpy.

        Returns:
            :class:`quadriga.artifacts.Metrics`.
        """
        raise NotImplementedError


class Task(Component):
    """Base of targets, datasets and environments. Tasks are built before any stage runs."""

    def prepare(self, *, generator: torch.Generator) -> None:
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

    def sample(self, num_samples: int, *, generator: torch.Generator) -> Any:
        """Exact samples ``Tensor[num_samples, d]``.

        Raises:
            NotImplementedError: when the target has no exact sampler.
        """
        raise NotImplementedError(f"{type(self).__name__} has no exact sampler")


class Dataset(Task):
    """Arrays with named splits (``"train"``, ``"calibration"``, ``"test"``, ...)."""

    kind = "dataset"

    def split(self, name: str) -> tuple[Any, Any]:
        """Return ``(X[n, p], y[n])`` of one split (``y`` may be ``None``), as copies.

        The default reads ``self._splits``, a dict that ``prepare`` fills with
        ``{name: (X, y)}`` (or ``{name: X}`` for unlabelled data); a dataset that stores its
        splits another way overrides :meth:`_select` (how one entry becomes arrays) or this method.

        Raises:
            ConfigError: called before ``prepare`` (no splits yet).
            KeyError: for an unknown split name (the valid ones listed, close matches suggested).
        """
        splits = getattr(self, "_splits", None)
        if not splits:
            raise ConfigError("the dataset has no splits yet: call prepare(generator=...) first.")
        if name not in splits:
            raise KeyError(
                f"unknown split '{name}'; valid: {', '.join(splits)}{self._split_hint(name)}."
                f"{suggest(name, splits)}"
            )
        return self._select(splits[name])

    def _select(self, entry: Any) -> tuple[Any, Any]:
        """The arrays of one ``_splits`` entry, copied: ``(X, y)`` or ``X`` alone (then ``y`` is None)."""
        X, y = entry if isinstance(entry, tuple) else (entry, None)
        return _copy(X), _copy(y)

    def _split_hint(self, name: str) -> str:
        """Appended to the unknown-split message (e.g. which setting makes more splits); empty here."""
        return ""


def _copy(array: Any) -> Any:
    """A copy of a NumPy array or torch tensor (``None`` stays ``None``)."""
    if array is None:
        return None
    return array.copy() if hasattr(array, "copy") else array.clone()


class Environment(Task):
    """A gymnasium environment by id and keyword arguments."""

    kind = "environment"

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

for _task in TASK_KINDS.values():
    _task.output_type = _task
Task.output_type = Task
Sampler.input_types = {"target": (Target,)}
Learner.input_types = {"task": (Dataset, Environment, Target)}
Estimator.input_types = {"data": (Samples, Dataset, Target, Environment)}
Evaluator.input_types = {
    "subject": (Samples, Fitted, Estimate, Metrics),
    "reference": (Target, Dataset, Environment, Samples),
}

_BASES = (*INTERFACES.values(), *TASK_KINDS.values())


def interface_of(cls: type) -> type[Component]:
    """The interface or task base class a component class derives from (``Sampler``, ..., ``Target``).

    Read ``method``, ``injected`` and ``output_type`` from it, not from the component class: a
    component may have a parameter of the same name (the ``ess`` evaluator's ``method``).

    Raises:
        TypeError: ``cls`` derives from none of them.
    """
    for base in cls.__mro__:
        if base in _BASES:
            return base
    raise TypeError(f"{cls.__name__} derives from none of {', '.join(b.__name__ for b in _BASES)}")


def accepted_types(cls: type, argument: str) -> tuple[type, ...] | None:
    """The classes ``cls.input_types`` accepts for ``argument`` (``None``: anything).

    Raises:
        ConfigError: an entry that is not a class, e.g. the name ``"Samples"`` (the form before
            classes were required); the message names the class, the input and the fix.
    """
    accepted = dict(getattr(cls, "input_types", {}) or {}).get(argument)
    if not accepted:
        return None
    if isinstance(accepted, (str, type)):
        accepted = (accepted,)
    for t in accepted:
        if not isinstance(t, type):
            name = t if isinstance(t, str) else type(t).__name__
            module = (
                "quadriga.interfaces"
                if name in ("Target", "Dataset", "Environment")
                else "quadriga.artifacts"
            )
            raise ConfigError(
                f"{cls.__module__}.{cls.__qualname__}.input_types['{argument}'] holds {t!r}, not a class. "
                f"Input types are classes: write `from {module} import {name}` and "
                f'input_types = {{"{argument}": ({name},)}}.',
                key=f"input_types.{argument}",
            )
    return tuple(accepted)


def named(value: Any, default_name: str = "subject") -> dict[str, Any]:
    """Normalise a stage input to ``{name: artifact}``.

    A pipeline stage whose input lists several stages passes ``{stage name: artifact}``; from
    Python an evaluator may be given one artifact, such a dict (its keys name the subjects:
    ``ed.evaluate({"mala": samples}, reference=gmm, generator=g)`` gives ``mala/energy_distance``)
    or a list or tuple of artifacts.

    Args:
        value: one artifact, a mapping from name to artifact, or a list/tuple of artifacts.
        default_name: the name given to a single artifact when its ``info`` does
            not carry the ``"stage"`` that produced it (the core sets it); a single subject's
            metrics are then ``subject/<metric>``.

    Returns:
        An ordered ``dict``. List entries are named by the ``"stage"`` in their ``info`` (artifacts
        of a run) or, when any lacks one or two coincide, ``subject0``, ``subject1``, ... in order
        (``f"{default_name}{i}"``).

    Raises:
        ConfigError: ``value`` is an empty mapping, list or tuple (no subject to evaluate).
    """
    if isinstance(value, (Mapping, list, tuple)) and not value:
        raise ConfigError(
            f"no {default_name}s given: pass an artifact, a list of artifacts or {{name: artifact}}.",
            key=default_name,
        )
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (list, tuple)):
        found = [_stage_of(v) for v in value]
        stages = [s for s in found if s is not None]
        if len(stages) == len(value) and len(set(stages)) == len(stages):
            return dict(zip(stages, value, strict=True))
        return {f"{default_name}{i}": v for i, v in enumerate(value)}
    return {_stage_of(value) or default_name: value}


def _stage_of(value: Any) -> str | None:
    info = getattr(value, "info", None)
    stage = info.get("stage") if isinstance(info, Mapping) else None
    return stage if isinstance(stage, str) and stage else None
