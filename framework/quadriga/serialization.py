"""Serialization helpers of artifacts: JSON for results.json, lossless encoding for saved artifacts.

``jsonable`` is lossy on purpose (results.json stays small and readable); ``encode``/``decode``
are lossless (tensors and arrays go to a tensor table read with ``torch.load(weights_only=True)``).
``copy_tables`` copies the plain tables of a pipeline (its reader and its matrix expansion share it).
Nothing here imports torch at import time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = [
    "TIMING_KEYS",
    "Unsaveable",
    "copy_tables",
    "decode",
    "encode",
    "finite",
    "is_timing",
    "jsonable",
    "same_numbers",
    "subclasses",
    "timeless",
]

#: info keys (and metric names) that hold wall-clock figures: they go to status.json, never results.json.
TIMING_KEYS = ("seconds", "wall_time", "elapsed", "time_s")
_TIMING_SUFFIXES = ("_seconds", "_per_second", "_wall_time")


def is_timing(key: str) -> bool:
    """Whether ``key`` (an info key, or the metric part of ``"subject/metric"``) is a wall-clock figure."""
    name = str(key).rsplit("/", 1)[-1]
    return name in TIMING_KEYS or name.endswith(_TIMING_SUFFIXES)


def jsonable(value: Any) -> Any:
    """A JSON-ready copy of ``value`` for ``results.json``.

    Tensors of up to 64 elements become lists, larger ones ``"<array shape (...)>"``, NaN and inf
    strings. (Saving for resume is lossless: see ``save``.)
    """
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "ndim") and hasattr(value, "tolist"):
        if getattr(value, "ndim", 1) <= 1 and _numel(value) <= 64:
            return jsonable(_cpu(value).tolist())
        return f"<array shape {tuple(value.shape)}>"
    if hasattr(value, "item") and callable(value.item):
        try:
            value = value.item()
        except Exception:
            return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _numel(value: Any) -> int:
    n = 1
    for s in getattr(value, "shape", ()):
        n *= int(s)
    return n


def _cpu(value: Any) -> Any:
    return value.detach().cpu() if hasattr(value, "detach") else value


def timeless(info: Mapping[str, Any]) -> dict[str, Any]:
    """``info`` without the wall-clock keys (:func:`is_timing`)."""
    return {k: v for k, v in info.items() if not is_timing(k)}


def finite(value: Any) -> bool:
    """Whether a number, tensor, array or list of them holds no NaN or inf (non-float types: True)."""
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if hasattr(value, "is_floating_point"):
        import torch

        return bool(torch.isfinite(value).all()) if value.is_floating_point() or value.is_complex() else True
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        import numpy as np

        return bool(np.isfinite(value).all()) if np.issubdtype(value.dtype, np.inexact) else True
    if isinstance(value, (list, tuple)):
        return all(finite(v) for v in value)
    return True


def same_numbers(a: Any, b: Any) -> bool:
    """Exact equality of nested numbers, tensors and arrays (NaN equals NaN, devices ignored)."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same_numbers(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_numbers(x, y) for x, y in zip(a, b, strict=True))
    if hasattr(a, "shape") and hasattr(b, "shape") and hasattr(a, "tolist"):
        import numpy as np

        if tuple(a.shape) != tuple(b.shape):
            return False
        an, bn = np.asarray(_cpu(a)), np.asarray(_cpu(b))
        return bool(np.array_equal(an, bn, equal_nan=an.dtype.kind in "fc"))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    try:
        return bool(a == b)
    except Exception:
        return False


class Unsaveable(Exception):
    """A value :func:`encode` cannot store losslessly (an object, a callable, a non-numeric array)."""


def encode(value: Any, tensors: dict[str, Any]) -> Any:
    """JSON skeleton of ``value`` with tensors and arrays moved (to CPU) into ``tensors``."""
    import numpy as np
    import torch

    if isinstance(value, torch.Tensor):
        key = str(len(tensors))
        tensors[key] = value.detach().cpu()
        return {"__tensor__": key}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufc":
            raise Unsaveable(f"array of dtype {value.dtype}")
        key = str(len(tensors))
        tensors[key] = torch.from_numpy(np.ascontiguousarray(value))
        return {"__ndarray__": key}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return {"__float__": repr(value)}
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            raise Unsaveable("a mapping with non-string keys")
        return {"__dict__": {k: encode(v, tensors) for k, v in value.items()}}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v, tensors) for v in value]}
    if isinstance(value, list):
        return [encode(v, tensors) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    raise Unsaveable(type(value).__name__)


def decode(value: Any, tensors: Mapping[str, Any]) -> Any:
    """Invert :func:`encode`."""
    if isinstance(value, list):
        return [decode(v, tensors) for v in value]
    if isinstance(value, dict):
        if "__tensor__" in value:
            return tensors[value["__tensor__"]]
        if "__ndarray__" in value:
            return tensors[value["__ndarray__"]].numpy()
        if "__float__" in value:
            return float(value["__float__"])
        if "__tuple__" in value:
            return tuple(decode(v, tensors) for v in value["__tuple__"])
        return {k: decode(v, tensors) for k, v in value["__dict__"].items()}
    return value


def subclasses(cls: type) -> list[type]:
    """``cls`` and all its subclasses, depth first."""
    out: list[type] = [cls]
    sub: type
    for sub in cls.__subclasses__():
        out.extend(subclasses(sub))
    return out


def copy_tables(data: Any) -> Any:
    """A copy of TOML-shaped ``data``: every mapping (as a ``dict``) and list copied, other values shared.

    Unlike :func:`copy.deepcopy` it leaves values inside the tables alone (a class or an array
    given from Python stays the same object).
    """
    if isinstance(data, Mapping):
        return {k: copy_tables(v) for k, v in data.items()}
    if isinstance(data, list):
        return [copy_tables(v) for v in data]
    return data
