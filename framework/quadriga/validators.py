"""attrs validators shared by every plugin; each raises :class:`quadriga.ConfigError` naming the parameter.

Compose them with ``attrs.validators.and_`` or list several in ``validator=[...]``;
never copy one into a plugin. Every message names the parameter, the accepted
values and the value received, so the CLI can print it as one paragraph.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import attrs

from quadriga.errors import ConfigError

#: an attrs validator: ``check(instance, attribute, value)`` raising ConfigError
Validator = Callable[[Any, "attrs.Attribute[Any]", Any], None]

__all__ = ["Validator", "finite", "int_at_least", "number_in", "positive_int_list", "probabilities"]


def finite(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    """Validator: a finite real number (not a bool).

    Raises:
        ConfigError: naming the parameter, for NaN, infinities, bools and non-numbers.
    """
    try:
        ok = not isinstance(value, bool) and math.isfinite(float(value))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ConfigError(f"'{attribute.name}' must be a finite number, got {value!r}.", key=attribute.name)


def int_at_least(minimum: int, hint: str = "") -> Validator:
    """Validator: an ``int`` (not bool) ``>= minimum``; ``hint`` is appended to the message."""

    def check(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise ConfigError(
                f"{attribute.name} must be an integer >= {minimum}, got {value!r}. {hint}".rstrip(),
                key=attribute.name,
            )

    return check


def number_in(
    low: float, high: float = math.inf, *, low_open: bool = False, high_open: bool = False
) -> Validator:
    """Validator: a finite real number in the interval from ``low`` to ``high`` (open ends as flagged)."""

    def check(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if ok:
            ok = (value > low if low_open else value >= low) and (
                value < high if high_open else value <= high
            )
        if not ok:
            left, right = "(" if low_open else "[", ")" if high_open or high == math.inf else "]"
            raise ConfigError(
                f"{attribute.name} must be a finite number in {left}{low:g}, {high:g}{right}, got {value!r}",
                key=attribute.name,
            )

    return check


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
