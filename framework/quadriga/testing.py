"""Conformance checks for components, in the spirit of scikit-learn's ``check_estimator``.

:func:`check_component` builds a registered component from its defaults, runs it twice
in a small pipeline with the same seed, and checks what every component promises::

    from quadriga.testing import check_component

    def test_my_sampler_conforms():
        check_component("sampler", "my-sampler")

Checks (each one can be skipped by name with ``skip=``):

- ``build``: the component builds from its defaults (plus the cheap ``params``);
- ``config``: its resolved parameters round-trip through configuration and are TOML values;
- ``bad-params``: an unknown key, a wrongly typed value and hostile numbers (-1, 0, NaN)
  are refused with a :class:`~quadriga.errors.ConfigError` naming the key, never another exception;
- ``docstring``: the class (and method) docstrings have the sections for shapes, units,
  errors and source, and every parameter has a ``doc``;
- ``run``: it runs on a small task inside a pipeline (the core checks inputs and types);
- ``output``: the artifact has the declared type and consistent shapes;
- ``determinism``: two runs with the same seed give identical numbers.

Inputs come from a small task chosen from the method's inputs and ``input_types``:
a 2-D Gaussian target (quadriga-std's ``gaussian`` when installed, else the built-in
``check-gaussian``), ``Samples`` drawn exactly from it as 4 chains (``check-draws``),
quadriga-std's ``sklearn-dataset`` (diabetes) and ``gym-env`` (CartPole-v1).
Components whose inputs cannot be made that way (a ``Fitted`` subject, say) declare a
pipeline fragment in the class attribute ``check_inputs`` (or the caller passes
``inputs=``); components with expensive defaults declare cheap ones in ``check_params``::

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
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from quadriga.artifacts import Estimate, Fitted, Metrics, Samples
from quadriga.components import build_component, component_config
from quadriga.errors import ConfigError, StageError
from quadriga.interfaces import INTERFACES, TASK_KINDS, Sampler, Target
from quadriga.params import param
from quadriga.registry import KINDS, PluginRegistrar, Registry

__all__ = [
    "CHECKS",
    "CheckDraws",
    "CheckGaussian",
    "CheckInputsUnavailable",
    "CheckReport",
    "ComponentCheckError",
    "check_component",
    "check_docstring",
]

CHECKS = ("build", "config", "bad-params", "docstring", "run", "output", "determinism")
_METHOD = {
    "sampler": "sample",
    "learner": "fit",
    "estimator": "estimate",
    "evaluator": "evaluate",
    "target": "log_prob",
    "dataset": "split",
    "environment": "make",
}
_INJECTED = {"self", "generator", "progress"}
_TIMING = {"seconds", "wall_time", "elapsed", "time_s"}
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
        kind, name: the component checked.
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
    pipeline: Any = None


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
        """d."""
        return self.dimension

    @property
    def mean(self) -> Any:
        """The exact mean, ``Tensor[d]`` of zeros (float64)."""
        import torch

        return torch.zeros(self.dimension, dtype=torch.float64)

    def log_prob(self, x: Any) -> Any:
        """Normalised log density (nats), ``Tensor[n, d] -> Tensor[n]``."""
        return -0.5 * (x**2).sum(-1) - 0.5 * self.dimension * math.log(2 * math.pi)

    def score(self, x: Any) -> Any:
        """``-x``, ``Tensor[n, d] -> Tensor[n, d]``."""
        return -x

    def sample(self, num_samples: int, *, generator: Any) -> Any:
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

    def sample(self, target: Any, *, generator: Any) -> Samples:
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


def _default_task(type_name: str, have: set[tuple[str, str]]) -> dict[str, Any] | None:
    if type_name == "Target":
        return {"use": "gaussian", "dim": 2} if ("target", "gaussian") in have else {"use": "check-gaussian"}
    if type_name == "Dataset" and ("dataset", "sklearn-dataset") in have:
        return {"use": "sklearn-dataset", "name": "diabetes"}
    if type_name == "Environment" and ("environment", "gym-env") in have:
        return {"use": "gym-env", "env_id": "CartPole-v1"}
    return None


def _wiring(cls: type, kind: str, registry: Registry, task: Mapping[str, Any] | None) -> dict[str, Any]:
    """A pipeline fragment ``{"task", "stage", "inputs"}`` providing the component's inputs."""
    have = {(c.kind, c.name) for c in registry.components()}
    tasks: dict[str, Any] = {}
    stages: dict[str, Any] = {}
    given_type = None
    if task is not None:
        spec = registry.get(task["use"], tuple(TASK_KINDS))
        given_type = TASK_KINDS[spec.kind].__name__
    types = {k: tuple(getattr(t, "__name__", t) for t in v) for k, v in (getattr(cls, "input_types", {}) or {}).items()}
    wiring: dict[str, Any] = {}
    for pname, p in inspect.signature(getattr(cls, _METHOD[kind])).parameters.items():
        if pname in _INJECTED or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        required = p.default is inspect.Parameter.empty
        if pname not in types and not required:
            continue
        accepted = tuple(types.get(pname, ("Target", "Samples", "Dataset", "Environment")))
        if given_type in accepted:  # the caller's task first
            accepted = (given_type, *[t for t in accepted if t != given_type])
        for type_name in accepted:
            if type_name == "Samples":
                source = "Target" if given_type in (None, "Target") else None
                table = task if given_type == "Target" else _default_task("Target", have)
                if source and table is not None:
                    tasks.setdefault("target", dict(table))
                    stages["draws"] = {"use": "check-draws", "inputs": {"target": "target"}}
                    wiring[pname] = "draws"
                    break
                continue
            table = task if given_type == type_name else _default_task(type_name, have)
            if table is not None and type_name in ("Target", "Dataset", "Environment"):
                node = type_name.lower()
                tasks.setdefault(node, dict(table))
                wiring[pname] = node
                break
        else:
            if required:
                raise CheckInputsUnavailable(
                    f"{kind} '{cls.__name__}': cannot make input '{pname}' (accepts {' or '.join(accepted)}). "
                    "Declare a pipeline fragment in the class attribute check_inputs = {'task': {...}, "
                    "'stage': {...}, 'inputs': {...}} or pass inputs= to check_component."
                )
    return {"task": tasks, "stage": stages, "inputs": wiring}


# ------------------------------------------------------------------ the checks
def check_docstring(cls: type, kind: str | None = None) -> list[str]:
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
    kind = kind or getattr(cls, "kind", "")
    method = _METHOD.get(kind)
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
    """Run the conformance checks on one registered component.

    Args:
        kind: ``sampler``, ``learner``, ``estimator``, ``evaluator``, ``target``, ``dataset`` or ``environment``.
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
        A :class:`CheckReport` when every check passed.

    Raises:
        ComponentCheckError: one or more checks failed; the message lists every failure.
        CheckInputsUnavailable: the check cannot make the component's inputs.
        UnknownComponentError: no such component.
    """
    from quadriga.pipeline import load_pipeline

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    skip = set(skip)
    unknown = skip - set(CHECKS)
    if unknown:
        raise ValueError(f"unknown check(s) {sorted(unknown)}; checks are {', '.join(CHECKS)}")
    registry = _registry(registry)
    cls = registry.load_class(registry.get(name, kind))
    base = {**getattr(cls, "check_params", {}), **(params or {})}
    report = CheckReport(kind, name, skipped={c: "skipped by the caller" for c in skip})
    failures: dict[str, str] = {}

    def record(check: str, problems: list[str]) -> None:
        if problems:
            failures[check] = "; ".join(problems)
        else:
            report.passed.append(check)

    try:
        obj = build_component(registry, name, base, kinds=(kind,))
    except Exception as exc:
        raise ComponentCheckError(
            kind,
            name,
            {
                "build": f"cannot be built from its defaults with params "
                f"{base}: {type(exc).__name__}: {exc} (give required or cheap "
                "values with params= or the class attribute check_params)"
            },
        ) from exc
    report.passed.append("build")
    if "config" not in skip:
        record("config", _config_problems(registry, name, kind, obj))
    if "bad-params" not in skip:
        record("bad-params", _bad_params(registry, cls, name, kind, base))
    if "docstring" not in skip:
        record("docstring", check_docstring(cls, kind))
    if kind in TASK_KINDS:
        if "run" not in skip:
            record("run", _task_problems(registry, name, kind, base, seed))
        report.skipped.update(
            {"output": "tasks are checked by 'run'", "determinism": "tasks are checked by 'run'"}
        )
    elif not {"run", "output", "determinism"} <= skip:
        fragment = inputs if inputs is not None else getattr(cls, "check_inputs", None)
        if fragment is None:
            fragment = _wiring(cls, kind, registry, task)
        data = {
            "pipeline": {"name": f"check-{name}", "seed": seed},
            "task": {k: dict(v) for k, v in fragment.get("task", {}).items()},
            "stage": {
                **{k: dict(v) for k, v in fragment.get("stage", {}).items()},
                "checked": {"use": name, "kind": kind, "inputs": dict(fragment.get("inputs", {})), **base},
            },
        }
        if not data["task"]:
            del data["task"]
        report.pipeline = data
        _run_checks(registry, data, kind, skip, record, report, load_pipeline)
    if failures:
        raise ComponentCheckError(kind, name, failures)
    return report


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
    return [] if _same(config, again) else [f"parameters change on a round trip: {config} -> {again}"]


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
                if not _same(xs[0], xs[1]):
                    return ["two prepared copies with the same seed give different exact samples"]
                if tuple(xs[0].shape) != (8, d):
                    return [f"sample(8) has shape {tuple(xs[0].shape)}, expected (8, {d})"]
            except NotImplementedError:
                xs = [torch.randn(8, d, generator=make_generator(seed), dtype=torch.float64)] * 2
            lp = a.log_prob(xs[0])
            if tuple(lp.shape) != (8,):
                return [f"log_prob(Tensor[8, {d}]) has shape {tuple(lp.shape)}, expected (8,)"]
            if not _same(lp, b.log_prob(xs[0])):
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
            if not _same((X, y), b.split("train")):
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


def _run_checks(
    registry: Registry,
    data: dict[str, Any],
    kind: str,
    skip: set[str],
    record: Any,
    report: CheckReport,
    load_pipeline: Any,
) -> None:
    from quadriga.runs import execute

    with tempfile.TemporaryDirectory(prefix="quadriga-check-") as tmp:
        results = []
        for i in range(1 if "determinism" in skip else 2):
            try:
                pipe = load_pipeline(data, registry)
            except ConfigError as exc:
                if exc.table == "stage.checked":
                    record("run", [f"the pipeline rejects it with these inputs: {exc}"])
                    return
                raise CheckInputsUnavailable(f"the check's input pipeline is invalid: {exc}") from exc
            result = execute(pipe, registry, out=Path(tmp) / f"run{i}")
            if result.status != "finished":
                err = result.error
                if isinstance(err, StageError) and err.stage != "checked":
                    raise CheckInputsUnavailable(f"making the inputs failed: {err}") from err
                what = "rejected the check's inputs" if isinstance(err, ConfigError) else "raised"
                record(
                    "run",
                    [
                        f"{what}: {type(err).__name__}: {err}. Inputs were {data['stage']['checked']['inputs']}"
                        " (see check_inputs / inputs= to give it other ones)"
                    ],
                )
                return
            results.append(result)
        report.passed.append("run")
        artifact = results[0].artifacts["checked"]
        report.artifact = artifact
        if "output" not in skip:
            inputs = {}
            for arg, node in data["stage"]["checked"]["inputs"].items():
                if isinstance(node, str):
                    inputs[arg] = (
                        results[0].artifacts[node]
                        if node in results[0].artifacts
                        else pipe.tasks[node].component
                    )
            record("output", _output_problems(kind, artifact, inputs))
        if "determinism" not in skip:
            other = results[1].artifacts["checked"]
            same = _same(
                results[0].results["stages"]["checked"], results[1].results["stages"]["checked"]
            ) and _same(_numbers(artifact), _numbers(other))
            record("determinism", [] if same else ["two runs with the same seed gave different results"])


def _output_problems(kind: str, art: Any, inputs: dict[str, Any]) -> list[str]:
    import torch

    expected = {"sampler": Samples, "learner": Fitted, "estimator": Estimate, "evaluator": Metrics}[kind]
    if not isinstance(art, expected):
        return [f"returned {type(art).__name__}, expected {expected.__name__}"]
    out: list[str] = []
    if not isinstance(art.info, dict) or not all(isinstance(k, str) for k in art.info):
        out.append("info must be a dict with string keys")
    if isinstance(art, Samples):
        if not isinstance(art.x, torch.Tensor) or art.x.ndim != 2 or art.x.shape[0] < 1:
            return out + [
                f"Samples.x must be a Tensor[n, d] with n >= 1, got {type(art.x).__name__} "
                f"{tuple(getattr(art.x, 'shape', ()))}"
            ]
        n, d = art.x.shape
        source = next(iter(inputs.values()), None)
        want = getattr(source, "dim", None)
        if want is not None and int(want) != d:
            out.append(f"Samples.x has d = {d}, its input has dim {int(want)}")
        if art.log_weights is not None and tuple(art.log_weights.shape) != (n,):
            out.append(f"log_weights has shape {tuple(art.log_weights.shape)}, expected ({n},)")
        if art.chains is not None:
            c = art.chains
            if c.ndim != 3 or c.shape[2] != d or c.shape[0] * c.shape[1] != n:
                out.append(
                    f"chains has shape {tuple(c.shape)}, expected (num_chains, n / num_chains, {d}) "
                    f"with n = {n}"
                )
            elif not torch.equal(c.reshape(n, d), art.x):
                out.append("chains is not the chain-major view of x (chains.reshape(n, d) != x)")
    elif isinstance(art, Estimate):
        value = art.value
        if not isinstance(value, (int, float)) and not hasattr(value, "shape"):
            out.append(f"Estimate.value must be a number or a tensor/array, got {type(value).__name__}")
        elif (
            art.stderr is not None
            and hasattr(value, "shape")
            and tuple(getattr(art.stderr, "shape", ())) != tuple(value.shape)
        ):
            out.append(
                f"stderr has shape {tuple(getattr(art.stderr, 'shape', ()))}, value {tuple(value.shape)}"
            )
        if art.interval is not None and len(art.interval) != 2:
            out.append("interval must be a (low, high) pair")
    elif isinstance(art, Metrics):
        from matplotlib.figure import Figure

        for key, value in art.values.items():
            if (
                isinstance(value, bool)
                or (not isinstance(value, (int, float))
                and not (hasattr(value, "item") and getattr(value, "ndim", 1) == 0))
            ):
                out.append(f"values['{key}'] is {type(value).__name__}, expected a float")
        for key, fig in art.figures.items():
            if not isinstance(fig, Figure):
                out.append(f"figures['{key}'] is {type(fig).__name__}, expected a matplotlib.figure.Figure")
        for key, rows in art.tables.items():
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                out.append(f"tables['{key}'] must be a list of row dicts")
        if not art.values and not art.figures and not art.tables:
            out.append("Metrics is empty")
    elif isinstance(art, Fitted):
        for key, value in art.history.items():
            if not isinstance(value, list):
                out.append(f"history['{key}'] is {type(value).__name__}, expected a list")
    return out


def _numbers(art: Any) -> Any:
    """The numbers of an artifact for comparing two runs (timings left out)."""
    if isinstance(art, Samples):
        return (art.x, art.log_weights, art.chains)
    if isinstance(art, Estimate):
        return (art.value, art.stderr, art.interval)
    if isinstance(art, Metrics):
        return (art.values, art.tables)
    if isinstance(art, Fitted):
        state = art.model.state_dict() if hasattr(art.model, "state_dict") else None
        return (art.history, {k: v for k, v in art.info.items() if k not in _TIMING}, state)
    return None


def _same(a: Any, b: Any) -> bool:
    """Exact equality of nested numbers, tensors and arrays (NaN equals NaN)."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a if k not in _TIMING)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if hasattr(a, "shape") and hasattr(b, "shape") and hasattr(a, "tolist"):
        import numpy as np

        if tuple(a.shape) != tuple(b.shape):
            return False
        an = a.detach().cpu().numpy() if hasattr(a, "detach") else np.asarray(a)
        bn = b.detach().cpu().numpy() if hasattr(b, "detach") else np.asarray(b)
        return bool(np.array_equal(an, bn, equal_nan=an.dtype.kind in "fc"))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    try:
        return bool(a == b)
    except Exception:
        return False
