"""attrs validators shared by every plugin; each raises :class:`quadriga.ConfigError` naming the parameter.

Use them in :func:`quadriga.param`; list several in ``validator=[...]`` (all must pass) and never
copy one into a plugin::

    from quadriga.validators import one_of, optional, positive, positive_int, probability

    step_size: float = param(0.1, doc="step size h", validator=positive)
    num_chains: int = param(4, doc="chains (count)", validator=positive_int)
    schedule: str = param("linear", doc="'linear' or 'cosine'", validator=one_of(("linear", "cosine")))
    mix: float = param(0.5, doc="mixing weight", validator=probability)
    bandwidth: float | None = param(None, doc="None: median heuristic", validator=optional(positive))

Each is an ``attrs.validators`` check (``instance_of``, ``gt``, ``ge``, ``lt``, ``le``, ``in_``,
``optional``) wrapped so that what it raises is a :class:`~quadriga.errors.ConfigError` whose
``key`` is the parameter: a component built from a pipeline file, from ``--set`` or in Python
reports ``[stage.srmc] key 'alpha': alpha must be ...`` without any parsing of messages. Every
message names the parameter, the accepted values and the value received.

Numbers: ``bool`` is never a number here (``True`` is not a step size); ints are accepted where
floats are. Integers: Python ``int`` only (not ``bool``, not NumPy integers).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from quadriga.errors import ConfigError, suggest

#: an attrs validator: ``check(instance, attribute, value)`` raising ConfigError
Validator = Callable[[Any, "attrs.Attribute[Any]", Any], None]

__all__ = [
    "Validator",
    "env_flag",
    "finite",
    "in_range",
    "instance_of",
    "int_at_least",
    "non_negative",
    "non_negative_int",
    "one_of",
    "optional",
    "positive",
    "positive_int",
    "positive_int_list",
    "probabilities",
    "probability",
]


def _real(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    """attrs-style check: a finite real number, not a bool (raises TypeError/ValueError)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(attribute.name)
    if not math.isfinite(value):
        raise ValueError(attribute.name)


def _integer(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    """attrs-style check: a Python int, not a bool (raises TypeError)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(attribute.name)


def _keyed(checks: list[Validator], expected: str, hint: str = "") -> Validator:
    """Run attrs-style ``checks`` in order; turn the first failure into ``ConfigError(key=name)``.

    Args:
        checks: attrs validators (raising ``TypeError``/``ValueError``).
        expected: the accepted values in words, e.g. ``"a finite number > 0"``.
        hint: appended to the message (how to choose a good value).
    """
    check = attrs.validators.and_(*checks)

    def validate(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        try:
            check(instance, attribute, value)
        except (TypeError, ValueError):
            raise ConfigError(
                f"{attribute.name} must be {expected}, got {value!r}. {hint}".rstrip(), key=attribute.name
            ) from None

    validate.__doc__ = f"Validator: {expected}."
    return validate


#: a finite real number (not a bool)
finite = _keyed([_real], "a finite number")
#: a finite number > 0
positive = _keyed([_real, attrs.validators.gt(0)], "a finite number > 0")
#: a finite number >= 0
non_negative = _keyed([_real, attrs.validators.ge(0)], "a finite number >= 0")
#: a probability: a number in [0, 1]
probability = _keyed([_real, attrs.validators.ge(0), attrs.validators.le(1)], "a number in [0, 1]")


def int_at_least(minimum: int, hint: str = "") -> Validator:
    """Validator: an ``int`` (not bool) ``>= minimum``; ``hint`` is appended to the message."""
    return _keyed([_integer, attrs.validators.ge(minimum)], f"an integer >= {minimum}", hint)


#: an integer >= 1 (a count)
positive_int = int_at_least(1)
#: an integer >= 0
non_negative_int = int_at_least(0)


def in_range(
    low: float, high: float = math.inf, *, low_open: bool = False, high_open: bool = False
) -> Validator:
    """Validator: a finite number between ``low`` and ``high``; an end is excluded when flagged open.

    ``in_range(0, 1, low_open=True, high_open=True)`` is the open interval ``(0, 1)``.
    """
    checks: list[Validator] = [_real, (attrs.validators.gt if low_open else attrs.validators.ge)(low)]
    if high != math.inf:
        checks.append((attrs.validators.lt if high_open else attrs.validators.le)(high))
    left, right = "(" if low_open else "[", ")" if high_open or high == math.inf else "]"
    return _keyed(checks, f"a finite number in {left}{low:g}, {high:g}{right}")


def one_of(choices: Iterable[Any]) -> Validator:
    """Validator: one of ``choices`` (strings are suggested by closeness when misspelt)."""
    options = tuple(choices)
    check = attrs.validators.in_(options)
    listed = ", ".join(repr(c) for c in options)

    def validate(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        try:
            check(instance, attribute, value)
        except (TypeError, ValueError):
            strings = [c for c in options if isinstance(c, str)]
            close = suggest(value, strings) if isinstance(value, str) else ""
            raise ConfigError(
                f"{attribute.name} must be one of {listed}, got {value!r}.{close}", key=attribute.name
            ) from None

    validate.__doc__ = f"Validator: one of {listed}."
    return validate


def instance_of(*types: type) -> Validator:
    """Validator: an instance of one of ``types``; a ``bool`` passes only when ``bool`` is listed."""
    names = " or ".join(t.__name__ for t in types)

    def check(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise TypeError(attribute.name)

    return _keyed([check], f"of type {names}")


def optional(validator: Validator | list[Validator]) -> Validator:
    """Validator: ``None``, or a value that ``validator`` (or each of a list) accepts."""
    return attrs.validators.optional(validator)


def probabilities(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    """Validator: a non-empty list of numbers in ``[0, 1]``."""
    try:
        values = [float(v) for v in value]
    except (TypeError, ValueError):
        values = []
    if not values or any(not 0.0 <= v <= 1.0 for v in values):
        raise ConfigError(
            f"{attribute.name} must be a non-empty list of numbers in [0, 1], got {value!r}",
            key=attribute.name,
        )


def positive_int_list(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    """Validator: a non-empty list of positive integers (layer widths)."""
    if (
        not isinstance(value, (list, tuple))
        or not value
        or any(not isinstance(v, int) or isinstance(v, bool) or v < 1 for v in value)
    ):
        raise ConfigError(
            f"{attribute.name} must be a non-empty list of positive integers, e.g. [64, 64], got {value!r}",
            key=attribute.name,
        )


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


def env_flag(name: str) -> bool:
    """The boolean environment variable ``name``: the one parser for every ``QUADRIGA_*`` switch.

    ``1``/``true``/``yes``/``on`` are true, ``0``/``false``/``no``/``off`` and unset or empty are
    false, in any letter case and with surrounding spaces ignored.

    Raises:
        ConfigError: any other value (``QUADRIGA_NO_CACHE=flase``), naming the variable and the
            accepted words, instead of guessing.
    """
    text = os.environ.get(name, "").strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigError(
        f"environment variable {name}={os.environ[name]!r} is neither true nor false; "
        f"use one of {', '.join(_TRUE)} or {', '.join(w for w in _FALSE if w)} (or unset it)."
    )
