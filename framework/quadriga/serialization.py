"""Serialization helpers of artifacts: JSON for results.json, lossless encoding for saved artifacts.

``jsonable`` is lossy on purpose (results.json stays small and readable); ``encode``/``decode``
are lossless (tensors and arrays go to a tensor table read with ``torch.load(weights_only=True)``).
``copy_tables`` copies the plain tables of a pipeline (its reader and its matrix expansion share it).
Nothing here imports torch at import time.
"""

from __future__ import annotations

import json
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
    "indented_json",
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


#: the exact types :func:`indented_json` writes as JSON scalars
_SCALARS = frozenset({str, int, float, bool, type(None)})
#: the exact types :func:`jsonable` returns unchanged (a float may be NaN or inf)
_PLAIN = frozenset({str, int, bool, type(None)})
_STR = frozenset({str})


def jsonable(value: Any) -> Any:
    """A JSON-ready copy of ``value`` for ``results.json``.

    Tensors of up to 64 elements become lists, larger ones ``"<array shape (...)>"``, NaN and inf
    strings. (Saving for resume is lossless: see ``save``.)
    """
    kind = type(value)  # the plain types first: a manifest is hundreds of them
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return value if math.isfinite(value) else str(value)
    if kind is dict:
        if _STR.issuperset(map(type, value)) and _PLAIN.issuperset(map(type, value.values())):
            return dict(value)  # flat and already JSON-ready (a manifest's environment): one C-level copy
        return {str(k): jsonable(v) for k, v in value.items()}
    if kind is list:
        if _PLAIN.issuperset(map(type, value)):
            return list(value)
        return [jsonable(v) for v in value]
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


_DICT = frozenset({dict})
#: ``{nesting level: C encoder writing a flat container's items one a line at that level}``
_FLAT: dict[int, Any] = {}


def indented_json(value: Any) -> str:
    """``json.dumps(value, indent=2)``, character for character, in a fraction of its time.

    With ``indent`` set, :mod:`json` uses its pure-Python encoder (about 1 ms for a 20 kB
    manifest); here every list or dict whose items are all scalars (exact ``str``, ``int``,
    ``float``, ``bool``, ``None``, with ``str`` keys) is written by one call of the C encoder,
    its item separator carrying the newline and indentation. Anything else (a tuple, a subclass,
    a non-``str`` key) is written by ``json.dumps`` itself, indented to its level.

    Raises:
        TypeError: a value JSON cannot hold, as ``json.dumps`` raises it.
    """
    return _indented(value, 0)


def _indented(value: Any, level: int) -> str:
    """:func:`indented_json` of ``value`` nested ``level`` deep (its closing bracket at that indent)."""
    kind = type(value)
    if kind is str:
        return _encode_str(value)
    if kind in _SCALARS:
        return "".join(_flat_encoder(level)(value, 0))
    if kind is dict:
        if not value:
            return "{}"
        if _STR.issuperset(map(type, value)):
            if _SCALARS.issuperset(map(type, value.values())):
                return _flat(value, level)
            inner = "\n" + "  " * (level + 1)
            if _DICT.issuperset(map(type, value.values())):
                table = _table(value, level)
                if table is not None:
                    return table
            items = [
                f"{_encode_str(k)}: {_scalar(v) if type(v) in _SCALARS else _indented(v, level + 1)}"
                for k, v in value.items()
            ]
            return "{" + inner + ("," + inner).join(items) + "\n" + "  " * level + "}"
    elif kind is list:
        if not value:
            return "[]"
        if _SCALARS.issuperset(map(type, value)):
            return _flat(value, level)
        inner = "\n" + "  " * (level + 1)
        items = [_indented(v, level + 1) for v in value]
        return "[" + inner + ("," + inner).join(items) + "\n" + "  " * level + "]"
    # anything else as json.dumps writes it; a newline in its output is always structural
    return json.dumps(value, indent=2).replace("\n", "\n" + "  " * level)


def _table(value: dict[str, dict[Any, Any]], level: int) -> str | None:
    """A dict of flat dicts (a manifest's ``plugins``), all its inner dicts by one call of the encoder.

    The inner dicts are encoded as one list with their own item separator, which then also
    separates them: ``[{I1},<sep>{I2}]``. A ``}`` followed by a newline is never inside a
    string (JSON escapes the newline) nor after a scalar, so ``}<sep>{`` splits them exactly.
    ``None`` when an inner dict is empty or not flat (the caller then goes item by item).
    """
    for inner in value.values():
        if (
            not inner
            or not _STR.issuperset(map(type, inner))
            or not _SCALARS.issuperset(map(type, inner.values()))
        ):
            return None
    separator = ",\n" + "  " * (level + 2)
    text = "".join(_flat_encoder(level + 1)(list(value.values()), 0))
    bodies = text[2:-2].split("}" + separator + "{")
    if len(bodies) != len(value):  # cannot happen (see above); json.dumps's way if it did
        return None
    outer = "\n" + "  " * (level + 1)
    open_, close = ": {" + separator[1:], outer + "}"
    items = [_encode_str(k) + open_ + body + close for k, body in zip(value, bodies, strict=True)]
    return "{" + outer + ("," + outer).join(items) + "\n" + "  " * level + "}"


def _scalar(value: Any) -> str:
    """A value of an exact type in :data:`_SCALARS` as ``json.dumps`` writes it (NaN as ``NaN``)."""
    kind = type(value)
    if kind is str:
        return _encode_str(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _encode_str(text: str) -> str:
    """A JSON string literal, ASCII only, as ``json.dumps`` writes it."""
    return json.encoder.encode_basestring_ascii(text)


def _flat_encoder(level: int) -> Any:
    """The encoder of :func:`_flat` at ``level`` (made once): ``encoder(value, 0)`` gives its pieces.

    The C encoder (``json.encoder.c_make_encoder``) when there is one, else :mod:`json`'s own
    (the same text, slower).
    """
    encoder = _FLAT.get(level)
    if encoder is None:
        item, key = ",\n" + "  " * (level + 1), ": "
        make: Any = getattr(json.encoder, "c_make_encoder", None)
        try:  # markers None: no cycle check (a flat container holds no containers)
            encoder = make(
                None, None, json.encoder.encode_basestring_ascii, None, key, item, False, False, True
            )
        except TypeError:  # no C encoder, or another signature: the public one
            public = json.JSONEncoder(separators=(item, key))
            encoder = lambda value, _level: public.iterencode(value, _one_shot=True)  # noqa: E731
        _FLAT[level] = encoder
    return encoder


def _flat(value: dict[str, Any] | list[Any], level: int) -> str:
    """A non-empty dict or list of scalars, one item a line, by one call of the encoder."""
    text = "".join(_flat_encoder(level)(value, 0))  # "{item,\n<indent>item}": open the brackets' lines
    return text[0] + "\n" + "  " * (level + 1) + text[1:-1] + "\n" + "  " * level + text[-1]


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
