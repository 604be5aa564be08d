"""Reading a claim's observations from the points of its arms' ``matrix``: groups and slopes.

A claim whose arms are stage tables with a ``matrix`` states, declaratively:

- ``group_by``: matrix keys whose values form groups (a task, a dimension, a noise level); each
  group is its own comparison in the claim's multiplicity family (Holm);
- ``across``: a numeric matrix key; each replicate's observation is the log-log slope of the
  metric against that key over the group's points (a rate ``metric ~ key^slope``), so replicate
  ``i`` of every arm gives one slope and the effect compares slopes (``mean``: against a
  declared rate; ``difference``: against the baseline's slope, replicate by replicate).

The points are enumerated from the pipeline's own ``matrix`` tables and named with the pipeline
language's formatter (:func:`quadriga.expansion.point_label`), so nothing here parses names.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from quadriga.errors import ConfigError

__all__ = ["matrix_points", "matrix_values"]


def matrix_points(data: Mapping[str, Any], table: str) -> list[dict[str, Any]]:
    """The points of stage ``table``'s ``matrix`` in expansion order (``[{}]`` without a matrix)."""
    matrix = data.get("stage", {}).get(table, {}).get("matrix") or {}
    keys = list(matrix)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(matrix[k] for k in keys))]


def _slope(xs: Sequence[float], ys: Sequence[float], where: str) -> float:
    """Least-squares slope of ``log y`` against ``log x``."""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if np.any(x <= 0) or np.any(y <= 0) or not np.all(np.isfinite(y)):
        raise ConfigError(
            f"a log-log slope needs positive values; {where} has {list(y)} at {list(x)}.", key="across"
        )
    lx, ly = np.log(x), np.log(y)
    lxc = lx - lx.mean()
    return float((ly - ly.mean()) @ lxc / (lxc @ lxc))


def matrix_values(
    data: Mapping[str, Any],
    arms: Sequence[str],
    read: Any,
    replicates: int,
    *,
    group_by: Sequence[str] = (),
    across: str | None = None,
) -> dict[Any, Any]:
    """Per-replicate observations of the arms, grouped by ``group_by`` and reduced to slopes ``across``.

    Args:
        data: the pipeline (TOML structure) as run.
        arms: stage tables with a ``matrix`` holding the ``group_by`` and ``across`` keys.
        read: ``read(arm, stem) -> [value per replicate]``: one point's replicates of one arm
            (``stem`` is ``"arm[k=v,...]"``).
        replicates: replicates per point.
        group_by: matrix keys forming the groups.
        across: the matrix key the slope is taken across (numeric, at least 2 values per group).

    Returns:
        ``{arm: [values]}`` when there is one group, else ``{"k=v,...": {arm: [values]}}``.

    Raises:
        ConfigError: an arm without the keys in its matrix, a matrix key that is neither grouped
            nor the slope's axis, fewer than 2 points to fit a slope, non-positive values.
    """
    from quadriga.expansion import point_label

    named = (*group_by, *((across,) if across else ()))
    groups: dict[str, dict[str, list[float]]] = {}
    for arm in arms:
        by_group: dict[str, list[dict[str, Any]]] = {}
        for point in _checked_points(data, arm, named, group_by):
            label = point_label({k: point[k] for k in group_by})
            by_group.setdefault(label, []).append(point)
        for label, members in by_group.items():
            values = _group_values(arm, label, members, read, replicates, across)
            groups.setdefault(label, {})[arm] = [float(v) for v in values]
    if len(groups) == 1:
        return next(iter(groups.values()))
    return groups


def _checked_points(
    data: Mapping[str, Any], arm: str, named: Sequence[str], group_by: Sequence[str]
) -> list[dict[str, Any]]:
    """The matrix points of ``arm``, whose keys must be the ``named`` ones (grouped or the slope's axis).

    Raises:
        ConfigError: a named key missing from the arm's matrix, or a matrix key not named.
    """
    points = matrix_points(data, arm)
    keys = set(points[0]) if points else set()
    missing = [k for k in named if k not in keys]
    if missing:
        raise ConfigError(
            f"arm '{arm}' has no matrix key {', '.join(missing)} (its matrix: "
            f"{', '.join(sorted(keys)) or 'none'}).",
            key="group_by" if missing[0] in group_by else "across",
        )
    free = sorted(keys - set(named))
    if free:
        raise ConfigError(
            f"matrix key(s) {', '.join(free)} of arm '{arm}' are neither grouped nor the slope's axis; "
            "add them to group_by.",
            key="group_by",
        )
    return points


def _group_values(
    arm: str,
    label: str,
    members: Sequence[Mapping[str, Any]],
    read: Any,
    replicates: int,
    across: str | None,
) -> list[Any]:
    """One group's per-replicate values of ``arm``: read at its point, or log-log slopes across ``across``.

    Raises:
        ConfigError: fewer than 2 points to fit a slope, non-positive values (:func:`_slope`).
    """
    from quadriga.expansion import point_label

    if across is None:
        return read(arm, f"{arm}[{point_label(members[0])}]")
    if len(members) < 2:
        raise ConfigError(
            f"a slope across '{across}' needs at least 2 points; arm '{arm}'"
            f"{f' in group {label}' if label else ''} has {len(members)}.",
            key="across",
        )
    xs = [float(p[across]) for p in members]
    series = [read(arm, f"{arm}[{point_label(p)}]") for p in members]
    return [
        _slope(xs, [s[i] for s in series], f"arm '{arm}' replicate {i} {label}".strip())
        for i in range(replicates)
    ]
