"""Conformance checks for components, shaped like scikit-learn's ``check_estimator``.

Each check is a public function taking a :class:`ComponentCase` (a registered component and the
setup the check needs) and raising :class:`CheckFailed` (an ``AssertionError``) with a message
naming the component and what is wrong, or :class:`CheckSkipped` when it does not apply.
A plugin's test suite runs every check on each of its components as its own pytest item::

    from quadriga.testing import parametrize_with_checks, plugin_cases

    @parametrize_with_checks(plugin_cases("quadriga-my-method"))
    def test_conformance(case, check):
        check(case)

and pytest's summary ends with one line ``quadriga conformance: N run / M skipped / K failed``.
:func:`check_component` runs them all at once and raises one :class:`ComponentCheckError`
listing every failure::

    check_component("sampler", "my-sampler", params={"num_samples": 100})

Checks, in order (:data:`CHECKS`):

- ``build``: the component builds from its defaults (plus the cheap ``params``);
- ``config``: its resolved parameters round-trip through configuration and are TOML values;
- ``bad-params``: an unknown key, a wrongly typed value and hostile numbers (-1, 0, NaN)
  are refused with a :class:`~quadriga.errors.ConfigError` naming the key, never another exception;
- ``docstring``: the class (and method) docstrings have the sections for shapes, units,
  errors and source, and every parameter has a ``doc``;
- ``run``: it runs on a small task inside a pipeline (the core checks inputs and types);
- ``output``: the artifact has the declared type and consistent shapes;
- ``determinism``: two runs with the same seed give identical numbers.

Setup comes from the component class (or from the case, which takes precedence):

- ``check_params``: cheap parameters, e.g. ``{"total_frames": 200}``;
- ``check_task``: a task table replacing the default task of its type;
- ``check_inputs``: a pipeline fragment ``{"task": {...}, "stage": {...}, "inputs": {arg: node}}``
  making inputs the check cannot make itself (a ``Fitted`` subject, say);
- ``check_xfail``: ``{check name: reason}``, checks expected to fail (pytest marks them xfail);

Default tasks come from the plugins through the ``quadriga_check_tasks`` hook (quadriga-std
supplies a 2-D ``gaussian``, ``sklearn-dataset`` diabetes and ``gym-env`` CartPole-v1); without
one the built-in ``check-gaussian`` is the target. ``Samples`` inputs are exact draws from the
target as 4 chains (``check-draws``)::

    class MyEvaluator(Evaluator):
        check_params: ClassVar[dict] = {"num_episodes": 2}
        check_inputs: ClassVar[dict] = {
            "task": {"env": {"use": "gym-env", "env_id": "CartPole-v1"}},
            "stage": {"policy": {"use": "dqn", "inputs": {"task": "env"}, "total_frames": 200}},
            "inputs": {"subject": "policy", "reference": "env"},
        }

Nothing here is imported by ``import quadriga``; the checks import torch.
"""

from __future__ import annotations

import inspect
import math
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from quadriga.artifacts import Artifact, Samples, same_numbers
from quadriga.components import build_component, component_config
from quadriga.errors import ConfigError, StageError
from quadriga.interfaces import INTERFACES, TASK_KINDS, Component, Sampler, Target, interface_of
from quadriga.params import param
from quadriga.registry import KINDS, PluginRegistrar, Registry

if TYPE_CHECKING:
    import torch

    from quadriga.pipeline import Pipeline
    from quadriga.runs import RunResult

__all__ = [
    "CHECKS",
    "CheckDraws",
    "CheckFailed",
    "CheckGaussian",
    "CheckInputsUnavailable",
    "CheckReport",
    "CheckSkipped",
    "ComponentCase",
    "ComponentCheckError",
    "check_bad_params",
    "check_build",
    "check_component",
    "check_config",
    "check_determinism",
    "check_docstring",
    "check_output",
    "check_run",
    "docstring_problems",
    "parametrize_with_checks",
    "plugin_cases",
]

CHECKS = ("build", "config", "bad-params", "docstring", "run", "output", "determinism")
#: the method whose docstring counts for a task kind (tasks have no interface ``method``)
_TASK_DOC_METHOD = {"target": "log_prob", "dataset": "split", "environment": "make"}
#: docstring sections: a header (``Name:``) from the first set, or text matching the pattern.
DOC_SECTIONS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "shapes": (
        ("Shapes", "Shape"),
        r"\b(Tensor|ndarray|array|Samples)\s*\[|\bshapes?\b|\bscalars?\b|\(n, d\)",
    ),
    "units": (("Units",), r"\bunits?\b|\bnats\b|\(count\)|\bseconds\b"),
    "errors": (("Raises", "Errors"), None),
    "source": (("Source", "Sources", "Reference", "References", "Paper"), None),
}


class CheckInputsUnavailable(Exception):
    """The check cannot make inputs for the component: declare ``check_inputs`` or pass ``inputs=``."""


class CheckFailed(AssertionError):
    """A conformance check failed; the message names the component, the check and each problem.

    Attributes:
        problems: the problems found, one sentence each.
    """

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems) or [message]


class CheckSkipped(Exception):
    """A check does not apply to the component (or a check it needs failed); the message says why."""


class ComponentCheckError(AssertionError):
    """One or more conformance checks failed.

    Attributes:
        failures: ``{check name: message}``.
    """

    def __init__(self, kind: str, name: str, failures: dict[str, str]) -> None:
        self.failures = dict(failures)
        lines = "\n".join(f"  [{check}] {msg}" for check, msg in failures.items())
        super().__init__(f"{kind} '{name}' failed {len(failures)} conformance check(s):\n{lines}")


@attrs.define
class CheckReport:
    """What :func:`check_component` returns when every check passed.

    Attributes:
        kind: the component's kind.
        name: its registered name.
        passed: names of the checks that ran and passed.
        skipped: ``{check: reason}`` for checks not run.
        artifact: the artifact of the first run (``None`` for tasks).
        pipeline: the pipeline dict the component ran in (``None`` for tasks).
    """

    kind: str
    name: str
    passed: list[str] = attrs.field(factory=list)
    skipped: dict[str, str] = attrs.field(factory=dict)
    artifact: Any = None
    pipeline: dict[str, Any] | None = None

    def summary(self) -> str:
        """One line, ``"N run / M skipped / K failed"`` (K is 0: a report means every check passed)."""
        return f"{len(self.passed)} run / {len(self.skipped)} skipped / 0 failed"


# ------------------------------------------------------------------ built-in small task
@attrs.define(kw_only=True)
class CheckGaussian(Target):
    """Standard normal N(0, I_d), the check's target when quadriga-std is not installed.

    Shapes: ``log_prob: Tensor[n, d] -> Tensor[n]``, ``score: Tensor[n, d] -> Tensor[n, d]``.
    Units: nats for ``log_prob``.

    Raises:
        ConfigError: ``dimension < 1``.

    Source: the Gaussian density.
    """

    dimension: int = param(2, doc="dimension d", validator=attrs.validators.ge(1))

    @property
    def dim(self) -> int:
        """The dimension d."""
        return self.dimension

    @property
    def mean(self) -> torch.Tensor:
        """The exact mean, ``Tensor[d]`` of zeros (float64)."""
        import torch

        return torch.zeros(self.dimension, dtype=torch.float64)

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised log density (nats), ``Tensor[n, d] -> Tensor[n]``."""
        return -0.5 * (x**2).sum(-1) - 0.5 * self.dimension * math.log(2 * math.pi)

    def score(self, x: torch.Tensor) -> torch.Tensor:
        """``-x``, ``Tensor[n, d] -> Tensor[n, d]``."""
        return -x

    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Exact draws ``Tensor[num_samples, d]`` (float64)."""
        import torch

        return torch.randn(num_samples, self.dimension, generator=generator, dtype=torch.float64)


@attrs.define(kw_only=True)
class CheckDraws(Sampler):
    """Exact draws from a target arranged as ``num_chains`` chains (the check's ``Samples`` input).

    Shapes: ``Samples.x: Tensor[num_chains * num_draws, d]`` (chain-major),
    ``Samples.chains: Tensor[num_chains, num_draws, d]``.
    Units: those of the target.

    Raises:
        ConfigError: the target has no exact sampler.

    Source: none (exact sampling).
    """

    num_chains: int = param(4, doc="chains (count)", validator=attrs.validators.ge(1))
    num_draws: int = param(64, doc="draws per chain (count)", validator=attrs.validators.ge(2))

    def sample(self, target: Target, *, generator: torch.Generator) -> Samples:
        """Draw ``num_chains * num_draws`` exact samples."""
        import torch

        try:
            x = torch.as_tensor(target.sample(self.num_chains * self.num_draws, generator=generator))
        except NotImplementedError:
            raise ConfigError(
                f"{type(target).__name__} has no exact sampler; pass another task=.", key="target"
            ) from None
        return Samples(
            x=x,
            chains=x.reshape(self.num_chains, self.num_draws, -1),
            info={"score_evals": 0, "log_prob_evals": 0},
        )


def _providers(registry: Registry) -> Registry:
    """Add the built-in ``check-gaussian`` and ``check-draws`` to ``registry`` (unless already there)."""
    registry.load()
    have = {(c.kind, c.name) for c in registry.components()}
    reg = PluginRegistrar(registry, "quadriga-testing", "quadriga")
    if ("target", "check-gaussian") not in have:
        reg.add("target", "check-gaussian", "quadriga.testing:CheckGaussian", summary="N(0, I) for checks")
    if ("sampler", "check-draws") not in have:
        reg.add("sampler", "check-draws", "quadriga.testing:CheckDraws", summary="exact draws as chains")
    return registry


_PRIVATE: Registry | None = None


def _registry(registry: Registry | None) -> Registry:
    global _PRIVATE
    if registry is not None:
        return _providers(registry)
    if _PRIVATE is None:
        _PRIVATE = _providers(Registry())
    return _PRIVATE


def _type_name(t: type | str) -> str:
    return t if isinstance(t, str) else t.__name__


def _doc_method(cls: type, kind: str) -> str | None:
    """The method whose docstring counts with the class's: the interface's, or a task kind's."""
    if kind in TASK_KINDS:
        return _TASK_DOC_METHOD.get(kind)
    if kind in INTERFACES:
        return interface_of(cls).method
    return None


def default_tasks(registry: Registry) -> dict[str, dict[str, Any]]:
    """The small task tables the checks give components, by input type (``"Target"``, ``"Dataset"``, ...).

    Collected from the plugins' ``quadriga_check_tasks`` hooks (a task whose component is not
    registered is left out; the first plugin to name a type wins), with the built-in
    ``check-gaussian`` as the ``Target`` when no plugin gives one.
    """
    registry.load()
    have = {(c.kind, c.name) for c in registry.components()}
    tasks: dict[str, dict[str, Any]] = {}
    for given in registry.pm.hook.quadriga_check_tasks():
        for type_name, table in (given or {}).items():
            kind = type_name.lower()
            if (kind, table.get("use")) in have:
                tasks.setdefault(type_name, dict(table))
    tasks.setdefault("Target", {"use": "check-gaussian"})
    return tasks


def _wiring(cls: type, kind: str, registry: Registry, task: Mapping[str, Any] | None) -> dict[str, Any]:
    """A pipeline fragment ``{"task", "stage", "inputs"}`` providing the component's inputs.

    Raises:
        CheckInputsUnavailable: an input without a default cannot be made from the default tasks.
    """
    defaults = default_tasks(registry)
    tasks: dict[str, Any] = {}
    stages: dict[str, Any] = {}
    given_type = None
    if task is not None:
        spec = registry.get(task["use"], tuple(TASK_KINDS))
        given_type = _type_name(TASK_KINDS[spec.kind].output_type)
    types = {k: tuple(_type_name(t) for t in v) for k, v in (getattr(cls, "input_types", {}) or {}).items()}
    wiring: dict[str, Any] = {}
    interface = interface_of(cls)
    skipped = {"self", *interface.injected}
    for pname, p in inspect.signature(getattr(cls, interface.method)).parameters.items():
        if pname in skipped or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        required = p.default is inspect.Parameter.empty
        if pname not in types and not required:
            continue
        accepted = tuple(types.get(pname, ("Target", "Samples", "Dataset", "Environment")))
        if given_type in accepted:  # the caller's task first
            accepted = (given_type, *[t for t in accepted if t != given_type])
        for type_name in accepted:
            if type_name == "Samples":
                table = task if given_type == "Target" else defaults.get("Target")
                if given_type in (None, "Target") and table is not None:
                    tasks.setdefault("target", dict(table))
                    stages["draws"] = {"use": "check-draws", "inputs": {"target": "target"}}
                    wiring[pname] = "draws"
                    break
                continue
            table = task if given_type == type_name else defaults.get(type_name)
            if table is not None and type_name in ("Target", "Dataset", "Environment"):
                node = type_name.lower()
                tasks.setdefault(node, dict(table))
                wiring[pname] = node
                break
        else:
            if required:
                raise CheckInputsUnavailable(
                    f"{kind} '{cls.__name__}': cannot make input '{pname}' "
                    f"(accepts {' or '.join(accepted)}). "
                    "Declare a pipeline fragment in the class attribute check_inputs = {'task': {...}, "
                    "'stage': {...}, 'inputs': {...}} or pass inputs= to check_component."
                )
    return {"task": tasks, "stage": stages, "inputs": wiring}


@attrs.define(eq=False)
class ComponentCase:
    """One registered component under check, with the setup the checks need.

    The case builds the component and runs its pipeline at most twice, whatever the number of
    checks asking for it; :func:`parametrize_with_checks` shares one case between the checks of a
    component.

    Args:
        kind: ``sampler``, ``learner``, ``estimator``, ``evaluator``, ``target``, ``dataset``
            or ``environment``.
        name: the registered name.
        params: parameters on top of the class attribute ``check_params``.
        task: a task table replacing the default task of its type (default: ``check_task`` of the class).
        inputs: a pipeline fragment giving the inputs (default: ``check_inputs`` of the class,
            else made from the default tasks).
        seed: the root seed of both runs.
        registry: defaults to a private registry of the installed plugins; the built-in
            providers ``check-gaussian`` and ``check-draws`` are added to it.

    Raises:
        ValueError: an unknown kind.
    """

    kind: str
    name: str
    params: Mapping[str, Any] = attrs.field(factory=dict)
    task: Mapping[str, Any] | None = None
    inputs: Mapping[str, Any] | None = None
    seed: int = 0
    registry: Registry | None = attrs.field(default=None, repr=False)
    _cls: type | None = attrs.field(default=None, init=False, repr=False)
    _build: tuple[Any, BaseException | None] | None = attrs.field(default=None, init=False, repr=False)
    _runs: list[tuple[RunResult, Pipeline]] = attrs.field(factory=list, init=False, repr=False)
    _ready: bool = attrs.field(default=False, init=False, repr=False)
    _run_problem: str | None = attrs.field(default=None, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        """Check the kind."""
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")

    def __str__(self) -> str:
        """``"kind-name"``, the pytest id of the case."""
        return f"{self.kind}-{self.name}"

    @property
    def reg(self) -> Registry:
        """The registry the case resolves names in (with the check providers)."""
        if self.registry is None or not self._ready:
            self.registry = _registry(self.registry)
            self._ready = True
        return self.registry

    @property
    def cls(self) -> type:
        """The component class (imported on first use).

        Raises:
            UnknownComponentError: no such component.
        """
        if self._cls is None:
            self._cls = self.reg.load_class(self.reg.get(self.name, self.kind))
        return self._cls

    @property
    def base(self) -> dict[str, Any]:
        """The parameters the component is built with: ``check_params`` of the class, then :attr:`params`."""
        return {**getattr(self.cls, "check_params", {}), **self.params}

    @property
    def expected_failures(self) -> dict[str, str]:
        """``{check: reason}`` from the class attribute ``check_xfail``."""
        return dict(getattr(self.cls, "check_xfail", {}) or {})

    def build(self) -> Any:
        """The component built from :attr:`base`; the first error is kept and raised again.

        Raises:
            Exception: whatever building raised.
        """
        if self._build is None:
            try:
                self._build = (build_component(self.reg, self.name, self.base, kinds=(self.kind,)), None)
            except Exception as exc:
                self._build = (None, exc)
        obj, error = self._build
        if error is not None:
            raise error
        return obj

    def built(self) -> Any:
        """The component, or :class:`CheckSkipped` when the build check fails."""
        try:
            return self.build()
        except Exception as exc:
            raise CheckSkipped(f"needs 'build', which failed: {type(exc).__name__}: {exc}") from None

    def pipeline(self) -> dict[str, Any]:
        """The pipeline dict the component runs in: the input fragment plus the stage ``checked``.

        Raises:
            CheckInputsUnavailable: the check cannot make the component's inputs.
        """
        fragment = self.inputs if self.inputs is not None else getattr(self.cls, "check_inputs", None)
        if fragment is None:
            fragment = _wiring(
                self.cls, self.kind, self.reg, self.task or getattr(self.cls, "check_task", None)
            )
        data: dict[str, Any] = {
            "pipeline": {"name": f"check-{self.name}", "seed": self.seed},
            "task": {k: dict(v) for k, v in fragment.get("task", {}).items()},
            "stage": {
                **{k: dict(v) for k, v in fragment.get("stage", {}).items()},
                "checked": {
                    "use": self.name,
                    "kind": self.kind,
                    "inputs": dict(fragment.get("inputs", {})),
                    **self.base,
                },
            },
        }
        if not data["task"]:
            del data["task"]
        return data

    def run(self, index: int = 0) -> tuple[RunResult, Pipeline]:
        """The ``index``-th run (0 or 1) of :meth:`pipeline` and its loaded pipeline, made once and kept.

        Raises:
            CheckFailed: the component failed to run or its pipeline rejects it (the ``run`` check).
            CheckInputsUnavailable: making the inputs failed.
        """
        from quadriga.pipeline import load_pipeline
        from quadriga.runs import execute

        if self._run_problem is not None:
            raise CheckFailed(self._run_problem, [self._run_problem])
        while len(self._runs) <= index:
            data = self.pipeline()
            try:
                pipe = load_pipeline(data, self.reg)
            except ConfigError as exc:
                if exc.table == "stage.checked":
                    self._run_problem = f"the pipeline rejects it with these inputs: {exc}"
                    raise CheckFailed(self._run_problem, [self._run_problem]) from exc
                raise CheckInputsUnavailable(f"the check's input pipeline is invalid: {exc}") from exc
            with tempfile.TemporaryDirectory(prefix="quadriga-check-") as tmp:
                result = execute(pipe, self.reg, out=Path(tmp) / "run")
            if result.status != "finished":
                err = result.error
                if isinstance(err, StageError) and err.stage != "checked":
                    raise CheckInputsUnavailable(f"making the inputs failed: {err}") from err
                what = "rejected the check's inputs" if isinstance(err, ConfigError) else "raised"
                self._run_problem = (
                    f"{what}: {type(err).__name__}: {err}. Inputs were {data['stage']['checked']['inputs']}"
                    " (see check_inputs / inputs= to give it other ones)"
                )
                raise CheckFailed(self._run_problem, [self._run_problem])
            self._runs.append((result, pipe))
        return self._runs[index]

    def ran(self, index: int = 0) -> tuple[RunResult, Pipeline]:
        """:meth:`run`, or :class:`CheckSkipped` when the ``run`` check fails."""
        try:
            return self.run(index)
        except (CheckFailed, CheckInputsUnavailable) as exc:
            raise CheckSkipped(f"needs 'run', which failed: {exc}") from None


def _fail(case: ComponentCase, check: str, problems: Sequence[str]) -> None:
    if problems:
        raise CheckFailed(f"{case.kind} '{case.name}' [{check}]: " + "; ".join(problems), problems)


# ------------------------------------------------------------------ the checks
def check_build(case: ComponentCase) -> None:
    """The component builds from its defaults plus ``check_params`` and the case's ``params``.

    Raises:
        CheckFailed: building raised; the message gives the parameters and the error.
    """
    try:
        case.build()
    except Exception as exc:
        _fail(
            case,
            "build",
            [
                f"cannot be built from its defaults with params {case.base}: {type(exc).__name__}: {exc} "
                "(give required or cheap values with params= or the class attribute check_params)"
            ],
        )


def check_config(case: ComponentCase) -> None:
    """Its resolved parameters are TOML values and rebuild the same component.

    Raises:
        CheckFailed: they are not TOML values, do not rebuild it, or change on the round trip.
        CheckSkipped: the component does not build.
    """
    _fail(case, "config", _config_problems(case.reg, case.name, case.kind, case.built()))


def check_bad_params(case: ComponentCase) -> None:
    """An unknown key, a wrongly typed value and -1, 0, NaN are refused with a ConfigError naming the key.

    Accepting -1, 0 or NaN is allowed; raising anything but a ConfigError, or a ConfigError that
    does not name the parameter, is not.

    Raises:
        CheckFailed: one message per offending value.
        CheckSkipped: the component does not build.
    """
    case.built()
    _fail(case, "bad-params", _bad_params(case.reg, case.cls, case.name, case.kind, case.base))


def check_docstring(case: ComponentCase) -> None:
    """Class and method docstrings have sections for shapes, units, errors and source; parameters have docs.

    Raises:
        CheckFailed: what is missing (see :func:`docstring_problems`).
    """
    _fail(case, "docstring", docstring_problems(case.cls, case.kind))


def check_run(case: ComponentCase) -> None:
    """It runs on a small task inside a pipeline (tasks: their own methods are exercised).

    Raises:
        CheckFailed: it raised, or the pipeline rejected it with the check's inputs.
        CheckInputsUnavailable: the check cannot make its inputs.
        CheckSkipped: the component does not build.
    """
    case.built()
    if case.kind in TASK_KINDS:
        _fail(case, "run", _task_problems(case.reg, case.name, case.kind, case.base, case.seed))
        return
    try:
        case.run(0)
    except CheckFailed as exc:
        _fail(case, "run", exc.problems)


def check_output(case: ComponentCase) -> None:
    """The artifact has the declared type and consistent shapes (``Samples.x`` is ``Tensor[n, d]``, ...).

    Raises:
        CheckFailed: every problem found.
        CheckSkipped: a task (checked by ``run``), or the run failed.
    """
    if case.kind in TASK_KINDS:
        raise CheckSkipped("tasks are checked by 'run'")
    result, pipe = case.ran(0)
    artifact = result.artifacts["checked"]
    inputs = {}
    for arg, node in case.pipeline()["stage"]["checked"]["inputs"].items():
        if isinstance(node, str):
            inputs[arg] = result.artifacts[node] if node in result.artifacts else pipe.tasks[node].component
    _fail(case, "output", _output_problems(interface_of(case.cls), artifact, inputs))


def check_determinism(case: ComponentCase) -> None:
    """Two runs with the same seed give identical results and artifacts (timings left out).

    Raises:
        CheckFailed: they differ.
        CheckSkipped: a task (checked by ``run``), or the run failed.
    """
    if case.kind in TASK_KINDS:
        raise CheckSkipped("tasks are checked by 'run'")
    first, second = case.ran(0)[0], case.ran(1)[0]
    a, b = first.artifacts["checked"], second.artifacts["checked"]
    same = same_numbers(first.results["stages"]["checked"], second.results["stages"]["checked"]) and (
        same_numbers(a.numbers(), b.numbers())
    )
    _fail(case, "determinism", [] if same else ["two runs with the same seed gave different results"])


#: check name -> check function, in the order they run
CHECK_FUNCTIONS: dict[str, Callable[[ComponentCase], None]] = {
    "build": check_build,
    "config": check_config,
    "bad-params": check_bad_params,
    "docstring": check_docstring,
    "run": check_run,
    "output": check_output,
    "determinism": check_determinism,
}


def check_component(
    kind: str,
    name: str,
    *,
    registry: Registry | None = None,
    params: Mapping[str, Any] | None = None,
    task: Mapping[str, Any] | None = None,
    inputs: Mapping[str, Any] | None = None,
    seed: int = 0,
    skip: Iterable[str] = (),
) -> CheckReport:
    """Run every conformance check on one registered component.

    Args:
        kind: ``sampler``, ``learner``, ``estimator``, ``evaluator``, ``target``, ``dataset``
            or ``environment``.
        name: the registered name.
        registry: defaults to a private registry of the installed plugins; the built-in
            providers ``check-gaussian`` and ``check-draws`` are added to it.
        params: parameters for the check on top of the class attribute ``check_params``
            (make expensive defaults cheap: ``{"total_frames": 200}``).
        task: a task table replacing the default task of its type, e.g.
            ``{"use": "gaussian-mixture", "preset": "4-mode-2d"}``.
        inputs: a pipeline fragment ``{"task": {...}, "stage": {...}, "inputs": {arg: node}}``
            replacing the class attribute ``check_inputs`` and the default inputs.
        seed: the root seed of both runs.
        skip: names from :data:`CHECKS` not to run.

    Returns:
        A :class:`CheckReport` when every check passed (or was skipped).

    Raises:
        ComponentCheckError: one or more checks failed; the message lists every failure.
        CheckInputsUnavailable: the check cannot make the component's inputs.
        UnknownComponentError: no such component.
        ValueError: an unknown kind or check name.
    """
    skip = set(skip)
    unknown = skip - set(CHECKS)
    if unknown:
        raise ValueError(f"unknown check(s) {sorted(unknown)}; checks are {', '.join(CHECKS)}")
    case = ComponentCase(
        kind, name, params=dict(params or {}), task=task, inputs=inputs, seed=seed, registry=registry
    )
    case.cls  # noqa: B018 - an unknown name raises here, before any check
    report = CheckReport(kind, name, skipped={c: "skipped by the caller" for c in CHECKS if c in skip})
    failures: dict[str, str] = {}
    for check, function in CHECK_FUNCTIONS.items():
        if check in skip:
            continue
        try:
            function(case)
        except CheckFailed as exc:
            failures[check] = "; ".join(exc.problems)
            if check == "build":  # nothing else can be checked
                raise ComponentCheckError(kind, name, failures) from exc.__cause__
        except CheckSkipped as exc:
            report.skipped[check] = str(exc)
        else:
            report.passed.append(check)
    if kind not in TASK_KINDS and case._runs:
        report.artifact = case._runs[0][0].artifacts["checked"]
    if kind not in TASK_KINDS and not {"run", "output", "determinism"} <= skip:
        report.pipeline = case.pipeline()
    if failures:
        raise ComponentCheckError(kind, name, failures)
    return report


# ------------------------------------------------------------------ pytest
def plugin_cases(
    distribution: str,
    *,
    setup: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
    registry: Registry | None = None,
) -> list[ComponentCase]:
    """One :class:`ComponentCase` per component a distribution registers.

    Args:
        distribution: e.g. ``"quadriga-std"``.
        setup: ``{(kind, name): {"params": ..., "task": ..., "inputs": ...}}`` for components whose
            class does not declare its own check setup.
        registry: as for :class:`ComponentCase`.

    Raises:
        ValueError: the distribution registers no component (not installed?), or ``setup`` names
            a component it does not register.
    """
    reg = _registry(registry)
    specs = [s for s in reg.components() if s.distribution == distribution]
    if not specs:
        raise ValueError(f"'{distribution}' registers no component; is it installed (pip install -e ...)?")
    setup = dict(setup or {})
    stray = set(setup) - {(s.kind, s.name) for s in specs}
    if stray:
        raise ValueError(f"setup names components '{distribution}' does not register: {sorted(stray)}")
    return [ComponentCase(s.kind, s.name, registry=reg, **setup.get((s.kind, s.name), {})) for s in specs]


def parametrize_with_checks(
    cases: Iterable[ComponentCase | tuple[str, str]], *, checks: Iterable[str] = CHECKS
) -> Any:
    """A ``pytest.mark.parametrize`` giving one item per (component, check), with arguments ``case, check``.

    Item ids are ``kind-name-check`` (``sampler-mala-determinism``), so a failing check is one red
    test with its name. A check the class declares in ``check_xfail`` is marked ``xfail`` with its
    reason; a check that does not apply is skipped with the reason. Every item carries the marker
    ``quadriga_check``, from which quadriga's pytest plugin prints ``N run / M skipped / K failed``.

    Args:
        cases: :class:`ComponentCase` objects or ``(kind, name)`` pairs.
        checks: names from :data:`CHECKS`.

    Raises:
        ValueError: an unknown check name.
    """
    import pytest

    checks = tuple(checks)
    unknown = set(checks) - set(CHECKS)
    if unknown:
        raise ValueError(f"unknown check(s) {sorted(unknown)}; checks are {', '.join(CHECKS)}")
    params = []
    for case in cases:
        if not isinstance(case, ComponentCase):
            case = ComponentCase(*case)
        xfail = case.expected_failures
        for check in checks:
            marks = [pytest.mark.quadriga_check(check)]
            if check in xfail:
                marks.append(pytest.mark.xfail(reason=xfail[check], raises=CheckFailed, strict=True))
            params.append(pytest.param(case, _PytestCheck(check), id=f"{case}-{check}", marks=marks))
    return pytest.mark.parametrize(("case", "check"), params)


@attrs.frozen
class _PytestCheck:
    """A check as pytest calls it: a skipped check becomes ``pytest.skip`` with its reason."""

    name: str

    def __call__(self, case: ComponentCase) -> None:
        import pytest

        try:
            CHECK_FUNCTIONS[self.name](case)
        except CheckSkipped as exc:
            pytest.skip(str(exc))
        except CheckInputsUnavailable as exc:
            raise CheckFailed(f"{case.kind} '{case.name}' [{self.name}]: {exc}") from exc

    def __repr__(self) -> str:
        """The check's name (shown in pytest's output)."""
        return self.name


# ------------------------------------------------------------------ what the checks look at
def docstring_problems(cls: type, kind: str | None = None) -> list[str]:
    """Return what is missing from a component's documentation (empty when complete).

    Looks at the class docstring, the docstring of its interface method when the class
    defines one, and each parameter's ``doc``.

    Args:
        cls: the component class.
        kind: its registry kind (to find the method); guessed from ``cls.kind`` when ``None``.

    Returns:
        Messages such as ``"no section for errors (a 'Raises:' header)"``.

    A section is a header line (``Shapes:``, ``Units:``, ``Raises:``, ``Source:`` or a synonym in
    :data:`DOC_SECTIONS`); shapes and units may also be given inline (``Tensor[n, d]``, ``(nats)``).
    Docstrings of base classes up to the interface count.
    """
    kind = kind or str(getattr(cls, "kind", ""))
    method = _doc_method(cls, kind)
    texts = []
    for klass in cls.__mro__:  # the class and its bases up to the interface: inherited docs count
        if klass in (*INTERFACES.values(), *TASK_KINDS.values()) or klass is object:
            break
        texts.append(inspect.cleandoc(vars(klass).get("__doc__") or ""))
        if method and method in vars(klass):
            texts.append(inspect.cleandoc(getattr(vars(klass)[method], "__doc__", None) or ""))
    text = "\n".join(texts)
    missing = []
    if not text.strip():
        return ["no docstring"]
    for section, (headers, pattern) in DOC_SECTIONS.items():
        header = re.search(r"^\s*(" + "|".join(headers) + r")\s*:", text, re.MULTILINE)
        if not header and not (pattern and re.search(pattern, text)):
            missing.append(f"no section for {section} (a '{headers[0]}:' header)")
    for f in attrs.fields(cls):
        if f.init and not f.name.startswith("_") and not f.metadata.get("doc"):
            missing.append(f"parameter '{f.name}' has no doc (declare it with quadriga.param(..., doc=...))")
    return missing


def _bad_params(registry: Registry, cls: type, name: str, kind: str, base: dict[str, Any]) -> list[str]:
    problems = []

    def attempt(key: str, value: Any, must_fail: bool) -> None:
        try:
            build_component(registry, name, {**base, key: value}, kinds=(kind,))
        except ConfigError as exc:
            if key not in str(exc):
                problems.append(f"{key}={value!r} raised a ConfigError that does not name '{key}': {exc}")
            return
        except Exception as exc:
            problems.append(f"{key}={value!r} raised {type(exc).__name__} ({exc}) instead of a ConfigError")
            return
        if must_fail:
            problems.append(f"{key}={value!r} was accepted")

    attempt("no_such_parameter", 1, True)
    try:
        attrs.resolve_types(cls)
    except Exception:
        pass
    for f in attrs.fields(cls):
        if not f.init or f.name.startswith("_"):
            continue
        if f.type in (int, float):
            attempt(f.name, "not-a-number", True)
            for value in (-1, 0) if f.type is int else (-1.0, 0.0, math.nan):
                attempt(f.name, value, False)
        elif f.type is bool:
            attempt(f.name, "yes", True)
        elif f.type is str:
            attempt(f.name, 12345, True)
    return problems


def _config_problems(registry: Registry, name: str, kind: str, obj: Any) -> list[str]:
    import tomli_w

    try:
        config = component_config(obj, registry)
        tomli_w.dumps({"stage": {"x": config}})
    except Exception as exc:
        return [f"the resolved parameters are not TOML values: {type(exc).__name__}: {exc}"]
    try:
        again = component_config(build_component(registry, name, config, kinds=(kind,)), registry)
    except Exception as exc:
        return [f"cannot be rebuilt from its own resolved parameters {config}: {exc}"]
    return [] if same_numbers(config, again) else [f"parameters change on a round trip: {config} -> {again}"]


def _task_problems(registry: Registry, name: str, kind: str, base: dict[str, Any], seed: int) -> list[str]:
    import torch

    from quadriga.seeding import make_generator

    def prepared() -> Any:
        obj = build_component(registry, name, base, kinds=(kind,))
        obj.prepare(generator=make_generator(seed))
        return obj

    try:
        a, b = prepared(), prepared()
        if kind == "target":
            d = a.dim
            if not isinstance(d, int) or d < 1:
                return [f"dim is {d!r}, expected an int >= 1"]
            try:
                xs = [t.sample(8, generator=make_generator(seed)) for t in (a, b)]
                if not same_numbers(xs[0], xs[1]):
                    return ["two prepared copies with the same seed give different exact samples"]
                if tuple(xs[0].shape) != (8, d):
                    return [f"sample(8) has shape {tuple(xs[0].shape)}, expected (8, {d})"]
            except NotImplementedError:
                xs = [torch.randn(8, d, generator=make_generator(seed), dtype=torch.float64)] * 2
            lp = a.log_prob(xs[0])
            if tuple(lp.shape) != (8,):
                return [f"log_prob(Tensor[8, {d}]) has shape {tuple(lp.shape)}, expected (8,)"]
            if not same_numbers(lp, b.log_prob(xs[0])):
                return ["log_prob differs between two copies prepared with the same seed"]
            try:
                sc = a.score(xs[0])
                if tuple(sc.shape) != (8, d):
                    return [f"score(Tensor[8, {d}]) has shape {tuple(sc.shape)}, expected (8, {d})"]
            except NotImplementedError:
                pass
        elif kind == "dataset":
            try:
                X, y = a.split("train")
            except KeyError:  # no 'train' split: nothing generic to check beyond prepare()
                return []
            if getattr(X, "ndim", None) != 2:
                return [f"split('train') X has shape {getattr(X, 'shape', None)}, expected [n, p]"]
            if y is not None and len(y) != len(X):
                return [f"split('train') y has {len(y)} rows, X has {len(X)}"]
            if not same_numbers((X, y), b.split("train")):
                return ["split('train') differs between two copies prepared with the same seed"]
        else:
            env = a.make()
            try:
                env.reset(seed=seed)
                env.step(env.action_space.sample())
            finally:
                env.close()
    except Exception as exc:
        return [f"{type(exc).__name__}: {exc}"]
    return []


def _output_problems(interface: type[Component], art: Any, inputs: dict[str, Any]) -> list[str]:
    """What is wrong with a stage's artifact (empty when nothing is).

    Its type against the interface's ``output_type``, then the artifact's own
    :meth:`~quadriga.artifacts.Artifact.problems`, and for ``Samples`` the dimension its input declares.
    """
    expected = interface.output_type
    if not isinstance(art, expected) or not isinstance(art, Artifact):
        return [f"returned {type(art).__name__}, expected {expected.__name__}"]
    out = list(art.problems())
    if isinstance(art, Samples) and len(tuple(getattr(art.x, "shape", ()))) == 2:
        source = next(iter(inputs.values()), None)
        want = getattr(source, "dim", None)
        if want is not None and int(want) != art.dim:
            out.append(f"Samples.x has d = {art.dim}, its input has dim {int(want)}")
    return out
