"""One component under check (:class:`ComponentCase`) and the registry and inputs it runs with."""

from __future__ import annotations

import contextlib
import inspect
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from quadriga.components import build_component
from quadriga.errors import ConfigError, StageError
from quadriga.interfaces import TASK_KINDS, interface_of
from quadriga.registry import KINDS, PluginRegistrar, Registry
from quadriga.seeding import perturbed_globals

if TYPE_CHECKING:
    from quadriga.pipeline import Pipeline
    from quadriga.runs import RunResult

from quadriga.testing.problems import _type_name, snapshot
from quadriga.testing.report import CheckFailed, CheckInputsUnavailable, CheckSkipped

_TASKS = "quadriga.testing.tasks"


def _providers(registry: Registry) -> Registry:
    """Add the built-in ``check-gaussian`` and ``check-draws`` to ``registry`` (unless already there)."""
    registry.load()
    have = {(c.kind, c.name) for c in registry.components()}
    reg = PluginRegistrar(registry, "quadriga-testing", "quadriga")
    if ("target", "check-gaussian") not in have:
        reg.add(
            "target", "check-gaussian", "quadriga.testing.tasks:CheckGaussian", summary="N(0, I) for checks"
        )
    if ("sampler", "check-draws") not in have:
        reg.add(
            "sampler", "check-draws", "quadriga.testing.tasks:CheckDraws", summary="exact draws as chains"
        )
    return registry


_PRIVATE: Registry | None = None


def _registry(registry: Registry | None) -> Registry:
    global _PRIVATE
    if registry is not None:
        return _providers(registry)
    if _PRIVATE is None:
        _PRIVATE = _providers(Registry())
    return _PRIVATE


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
    #: the run component's :func:`~quadriga.testing.problems.snapshot` before each run
    _before: list[Any] = attrs.field(factory=list, init=False, repr=False)
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
        """The ``index``-th run of :meth:`pipeline` and its loaded pipeline, made once and kept.

        Run 1 seeds the global generators (torch, NumPy, Python) differently from the others
        (:func:`quadriga.seeding.perturbed_globals`); the generator the component is given is the
        same in every run.

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
            before = snapshot(pipe.stages["checked"].component) if "checked" in pipe.stages else None
            # the second run seeds the global generators differently (the determinism check)
            globals_ = perturbed_globals() if len(self._runs) == 1 else contextlib.nullcontext()
            with tempfile.TemporaryDirectory(prefix="quadriga-check-") as tmp, globals_:
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
            self._before.append(before)
        return self._runs[index]

    def state_change(self, index: int = 0) -> tuple[Any, Any]:
        """``(before, after)``: snapshots of the ``index``-th run's component around its run.

        Raises:
            CheckSkipped: the run failed.
        """
        _, pipe = self.ran(index)
        return self._before[index], snapshot(pipe.stages["checked"].component)

    def ran(self, index: int = 0) -> tuple[RunResult, Pipeline]:
        """:meth:`run`, or :class:`CheckSkipped` when the ``run`` check fails."""
        try:
            return self.run(index)
        except (CheckFailed, CheckInputsUnavailable) as exc:
            raise CheckSkipped(f"needs 'run', which failed: {exc}") from None


def _fail(case: ComponentCase, check: str, problems: Sequence[str]) -> None:
    if problems:
        raise CheckFailed(f"{case.kind} '{case.name}' [{check}]: " + "; ".join(problems), problems)
