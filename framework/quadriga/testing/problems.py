"""What the checks look at: docstrings, bad parameters, the config round trip, tasks and artifacts."""

from __future__ import annotations

import inspect
import math
import re
from typing import TYPE_CHECKING, Any

import attrs

from quadriga.artifacts import Artifact, Samples, same_numbers
from quadriga.components import build_component, component_config
from quadriga.errors import ConfigError
from quadriga.interfaces import INTERFACES, TASK_KINDS, Component, interface_of
from quadriga.params import standard_name
from quadriga.registry import Registry

if TYPE_CHECKING:
    pass


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


def _type_name(t: type | str) -> str:
    return t if isinstance(t, str) else t.__name__


def _doc_method(cls: type, kind: str) -> str | None:
    """The method whose docstring counts with the class's: the interface's, or a task kind's."""
    if kind in TASK_KINDS:
        return _TASK_DOC_METHOD.get(kind)
    if kind in INTERFACES:
        return interface_of(cls).method
    return None


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


def name_problems(cls: type) -> list[str]:
    """Parameters named with a known synonym of a standard hyperparameter word (``lr``, ``epochs``, ...).

    Returns:
        One sentence per offending parameter, naming the standard word
        (:data:`quadriga.params.STANDARD_NAMES`); empty when every name is standard.
    """
    problems = []
    for f in attrs.fields(cls):
        if not f.init or f.name.startswith("_"):
            continue
        standard = standard_name(f.name)
        if standard is not None:
            problems.append(
                f"parameter '{f.name}' is a synonym of the standard hyperparameter name '{standard}'; "
                f"rename it to '{standard}' (one word per hyperparameter, see quadriga.params.STANDARD_NAMES)"
            )
    return problems


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


def run_state_fields(cls: type) -> list[str]:
    """Problems with ``cls``'s attrs fields that are not hyperparameters (``init=False``: run state)."""
    if not attrs.has(cls):
        return []
    return [
        f"field '{f.name}' is not a hyperparameter (init=False): keep run state in local variables "
        "and return diagnostics in the artifact's info, not on the component"
        for f in attrs.fields(cls)
        if not f.init
    ]


def snapshot(obj: Any, depth: int = 0) -> Any:
    """What a component holds, for comparing before and after a call: attrs fields and other attributes.

    Containers are copied and tensors or arrays cloned, so that a change in place shows; other
    objects are kept by reference (a rebinding shows, a change inside them does not). Nested
    components are followed 4 levels deep.
    """
    if depth > 4:
        return obj
    if attrs.has(type(obj)):
        out = {f.name: snapshot(getattr(obj, f.name, None), depth + 1) for f in attrs.fields(type(obj))}
        extra = getattr(obj, "__dict__", {})
        out.update({f"{k} (attribute)": snapshot(v, depth + 1) for k, v in extra.items()})
        return out
    if isinstance(obj, dict):
        return {k: snapshot(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [snapshot(v, depth + 1) for v in obj]
    if hasattr(obj, "shape") and hasattr(obj, "clone"):  # a tensor
        return obj.detach().clone()
    if hasattr(obj, "shape") and hasattr(obj, "copy"):  # an array
        return obj.copy()
    return obj


def _changes(before: Any, after: Any) -> list[str]:
    """Problems naming each attribute of a :func:`snapshot` that a call changed, added or removed."""
    if not (isinstance(before, dict) and isinstance(after, dict)):
        return [] if same_numbers(before, after) else ["its state changed"]
    out = [f"'{k.removesuffix(' (attribute)')}' was added" for k in after if k not in before]
    out += [f"'{k.removesuffix(' (attribute)')}' was removed" for k in before if k not in after]
    out += [
        f"'{k.removesuffix(' (attribute)')}' changed"
        for k in before
        if k in after and not (before[k] is after[k] or same_numbers(before[k], after[k]))
    ]
    return out


def _state_problems(cls: type, before: Any, after: Any, method: str) -> list[str]:
    """Run-state fields of ``cls`` and the attributes its ``method`` changed between two snapshots."""
    return run_state_fields(cls) + [f"{change} by {method}()" for change in _changes(before, after)]
