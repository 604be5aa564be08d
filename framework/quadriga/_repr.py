"""One-line ``repr`` of artifacts and components: tensors as shape and dtype, no contents.

:class:`quadriga.artifacts.Artifact` and :class:`quadriga.interfaces.Component` print themselves
with these helpers, so this module sits on the ground floor: it imports only attrs (a component
is recognised by its class attributes, not by importing :mod:`quadriga.interfaces`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["compact_repr", "component_repr", "short"]


def short(value: Any, depth: int = 0) -> str:
    """A short text for one value: ``Tensor[8000, 2] float64``, ``0.1235``, ``{a: 1, b: 2}``, ``list[12]``."""
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype"):
        kind = type(value).__name__
        dtype = str(value.dtype).replace("torch.", "")
        if len(tuple(shape)) == 0:
            return f"{value.item():.4g}" if "float" in dtype else str(value.item())
        return f"{kind}[{', '.join(map(str, tuple(shape)))}] {dtype}"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:37] + "...")
    if isinstance(value, Mapping):
        if depth > 0:
            return f"{{{len(value)} keys}}"
        items = list(value.items())
        body = ", ".join(f"{k}: {short(v, depth + 1)}" for k, v in items[:6])
        return "{" + body + (f", ... {len(items) - 6} more" if len(items) > 6 else "") + "}"
    if isinstance(value, (list, tuple)):
        if len(value) > 4 or depth > 0:
            return f"{type(value).__name__}[{len(value)}]"
        return "[" + ", ".join(short(v, depth + 1) for v in value) + "]"
    if attrs.has(type(value)) and _is_component(value):
        return component_repr(value)
    if callable(value) and not isinstance(value, type):
        return f"<{type(value).__name__}>"
    text = repr(value)
    return text if len(text) <= 60 else f"<{type(value).__name__}>"


def compact_repr(obj: Any) -> str:
    """A one-line ``repr`` of an attrs object (an artifact, a component) without tensor contents.

    Tensors and arrays show as ``Tensor[8000, 2] float64``, dicts as their first keys, long lists
    as their length, floats to 4 significant digits.
    """
    if not attrs.has(type(obj)):
        return short(obj)
    fields = ", ".join(f"{f.name}={short(getattr(obj, f.name))}" for f in attrs.fields(type(obj)) if f.repr)
    return f"{type(obj).__name__}({fields})"


def _is_component(value: Any) -> bool:
    """Whether ``value`` is a registered component (duck-typed: its class declares a ``kind``)."""
    kind = getattr(type(value), "kind", None)
    return isinstance(kind, str) and bool(kind) and hasattr(type(value), "input_types")


def component_repr(obj: Any, _depth: int = 0) -> str:
    """A one-line ``repr`` of a component: its public parameters only, tensors as shape and dtype.

    Fields the constructor does not take (state a target computes in ``prepare``, caches) and
    fields whose names start with ``_`` are left out, so
    ``GaussianMixture(weights=None, ..., preset='4-mode-2d', dim=2, ...)`` is what
    ``print(quadriga.build("target", "gaussian-mixture", preset="4-mode-2d"))`` shows; nested
    components are shown the same way. :class:`quadriga.interfaces.Component` uses it as the
    ``repr`` of every attrs component that does not define its own.
    """
    if not attrs.has(type(obj)):
        return short(obj)
    if _depth > 2:
        return f"{type(obj).__name__}(...)"

    def show(value: Any) -> str:
        return component_repr(value, _depth + 1) if _is_component(value) else short(value)

    public = (f for f in attrs.fields(type(obj)) if f.init and f.repr and not f.name.startswith("_"))
    fields = ", ".join(f"{f.name}={show(getattr(obj, f.name))}" for f in public)
    return f"{type(obj).__name__}({fields})"
