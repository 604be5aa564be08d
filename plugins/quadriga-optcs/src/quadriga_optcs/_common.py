"""Small pieces shared by the estimators and the evaluator (private)."""

from __future__ import annotations

from typing import Any

from quadriga.errors import ConfigError

__all__ = ["check_levels", "level_key"]


def level_key(q: float) -> str:
    """The suffix naming one FDR level in metric and info keys: ``0.1 -> "q0.1"``."""
    return f"q{float(q):g}"


def check_levels(inst: Any, attribute: Any, value: Any) -> None:
    """attrs validator: a non-empty list of FDR levels in (0, 1).

    Raises:
        ConfigError: naming the parameter.
    """
    try:
        levels = [float(v) for v in value]
    except (TypeError, ValueError):
        levels = []
    if isinstance(value, str) or not levels or any(not 0.0 < v < 1.0 for v in levels):
        raise ConfigError(
            f"'{attribute.name}' must be a non-empty list of FDR levels in (0, 1), e.g. [0.1, 0.2] "
            f"(got {value!r}).",
            key=attribute.name,
        )
