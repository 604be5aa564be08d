"""Replication in the pipeline language: ``repeat``, ``matrix`` and ``name[*]`` inputs.

A ``[stage.NAME]`` (or ``[task.NAME]``) table may carry

- ``repeat = N``: it becomes ``NAME[0]`` ... ``NAME[N-1]``, replicate ``i`` seeded from
  (root seed, kind, ``i``), so replicate ``i`` of every repeated stage of one kind shares
  its seed (common random numbers: the arms of one replicate are paired);
- ``matrix = { key = [v1, v2], ... }``: one table per point of the grid (the Cartesian
  product in key order), named ``NAME[key=v1]`` or ``NAME[k1=a,k2=b]``; a dotted key sets a
  nested component's parameter (``matrix = { kernel.step_size = [0.1, 0.3] }``; nested tables
  and quoted dotted keys are the same). A key may also be ``use`` or ``inputs.ARG`` (methods x
  tasks in one table: ``matrix = { use = ["mala", "rwm"], inputs.target = ["gmm", "funnel"] }``),
  never one of :data:`~quadriga.pipeline_schema.NOT_VARIED`. An axis of component tables is
  written by their ``use`` when that tells them apart (``NAME[sampler=hmc]``). A point
  without ``repeat`` keeps the seed of its source table, so the points are paired too.
- both: ``NAME[key=v1][0]`` ...

Inputs then name expanded tables: ``"mala[*]"`` is every expansion of ``mala``
(``"mala[step_size=0.1][*]"`` the replicates of one point; ``"draw[inputs.target=gmm][*]"``
every point that begins with ``inputs.target=gmm``), ``"mala[step_size=0.1][2]"``
one of them. A repeated stage whose input names a node repeated as often binds replicate-wise:
``[stage.fit] repeat = 5, inputs = { data = "data" }`` gives ``fit[i]`` the task ``data[i]``.

The names are written by :func:`quadriga.stage_names.format_stage_name`, the one owner of their
grammar (:func:`~quadriga.stage_names.parse_stage_name` reads them back). Expansion runs before the
tables are built and checked; every expanded table keeps ``source`` (the table it came from, used
in error messages) and ``replicate`` (its index or absent), and its name holds the matrix point,
which is how the saved ``pipeline.toml`` holds the expanded form and reruns with the same seeds.
Nothing here imports torch.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Any

from quadriga.errors import ConfigError, suggest
from quadriga.pipeline_schema import EXPANSION_KEYS, NOT_VARIED
from quadriga.serialization import copy_tables
from quadriga.stage_names import (
    KEY_RE,
    StageName,
    format_point,
    format_stage_name,
    parse_stage_name,
    replicate_base,
    replicate_groups,
    replicate_index,
)

__all__ = [
    "MAX_TABLES",
    "expand_sections",
    "expansion_count",
    "is_expanded",
    "matrix_keys",
    "point_label",
    "point_mismatches",
    "replicate_base",
    "replicate_groups",
]

Err = Callable[..., ConfigError]

#: the most tables a pipeline may expand into (``repeat`` times the product of the ``matrix`` lengths,
#: per table and summed over the pipeline); counted before any table is built, so a mistyped
#: ``repeat = 1000000000`` is refused at once instead of filling the memory
MAX_TABLES = 100_000


def point_label(point: Mapping[str, Any]) -> str:
    """``{"step_size": 0.1, "schedule": "theory"}`` -> ``"step_size=0.1,schedule=theory"``.

    The bracket of a matrix point in a stage name, :func:`quadriga.stage_names.format_point`
    (kept here, with ``replicate_base`` and ``replicate_groups``, for code that imports them from
    the pipeline language; the grammar lives in :mod:`quadriga.stage_names`).
    """
    return format_point(point)


def is_expanded(name: str) -> bool:
    """Whether ``name`` is an expanded name (``NAME[...]``) that :func:`parse_stage_name` reads."""
    if "[" not in name:
        return False
    try:
        parse_stage_name(name)
    except ConfigError:
        return False
    return True


def _set_path(table: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    node = table
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {"use": node[part]} if isinstance(node.get(part), str) else {}
        node = node[part]
    node[parts[-1]] = value


def _has_path(table: Mapping[str, Any], key: str) -> bool:
    node: Any = table
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def matrix_keys(matrix: Any) -> list[str]:
    """The keys a ``matrix`` table varies, nested tables flattened to dotted keys.

    ``{"inputs": {"target": ["a", "b"]}, "use": ["mala", "rwm"]}`` -> ``["inputs.target", "use"]``
    (TOML's ``matrix = { inputs.target = [...] }`` is the nested form; ``"inputs.target"`` quoted is
    the flat one). Anything but a table gives ``[]``.
    """
    return list(_flatten(matrix)) if isinstance(matrix, Mapping) else []


def _flatten(matrix: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, values in matrix.items():
        if isinstance(values, Mapping) and values:
            out.update(_flatten(values, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = values
    return out


def _check_axis(key: str, values: Any, body: Mapping[str, Any], where: str, err: Err) -> None:
    if not KEY_RE.match(key):
        raise err(
            f"matrix key {key!r} must be a parameter name, 'use', 'inputs.ARG' or a dotted path to a "
            "nested component's parameter (letters, digits and '_', parts joined by '.').",
            table=where,
            key="matrix",
        )
    head = key.split(".")[0]
    if head in NOT_VARIED or key == "inputs":
        fix = " Vary one input at a time: matrix = { inputs.ARG = [...] }." if key == "inputs" else ""
        raise err(f"'{key}' cannot vary in a matrix.{fix}", table=where, key=f"matrix.{key}")
    if not isinstance(values, list) or not values:
        raise err(
            f"matrix.{key} must be a non-empty list of values, got {values!r}.",
            table=where,
            key=f"matrix.{key}",
        )
    if _has_path(body, key):
        raise err(
            f"'{key}' is set both in the table and in its matrix; keep one of them.",
            table=where,
            key=f"matrix.{key}",
        )


def _shown(values: list[Any]) -> list[Any]:
    """How an axis's values are written in names.

    A component table ``{use = "mala", ...}`` is written as its ``use`` when the ``use`` names tell
    the axis's values apart, otherwise as it is (JSON).
    """
    uses = [v.get("use") if isinstance(v, Mapping) else None for v in values]
    if all(isinstance(u, str) for u in uses) and len(set(uses)) == len(uses):
        return uses
    return values


def _points(matrix: Any, body: Mapping[str, Any], where: str, err: Err) -> list[tuple[dict, dict]]:
    """``[(point, shown point)]`` of a matrix: the Cartesian product in key order."""
    if not isinstance(matrix, dict) or not matrix:
        raise err(
            "matrix must be a table of lists, e.g. matrix = { step_size = [0.1, 0.3] }.",
            table=where,
            key="matrix",
        )
    axes = _flatten(matrix)
    for key, values in axes.items():
        _check_axis(key, values, body, where, err)
    keys = list(axes)
    shown = {k: _shown(axes[k]) for k in keys}
    index = itertools.product(*(range(len(axes[k])) for k in keys))
    points = [
        (
            {k: axes[k][i] for k, i in zip(keys, ix, strict=True)},
            {k: shown[k][i] for k, i in zip(keys, ix, strict=True)},
        )
        for ix in index
    ]
    labels = [point_label(p) for _, p in points]
    if len(set(labels)) != len(labels):
        raise err("the matrix holds the same point twice; list each value once.", table=where, key="matrix")
    return points


def expansion_count(table: Mapping[str, Any]) -> int:
    """How many tables ``table`` expands into: ``repeat`` times the product of its matrix lengths.

    Computed from the lengths alone (nothing is built); a ``repeat`` or ``matrix`` of the wrong type
    counts as 1 (expanding it raises the error that says so). A table without either gives 1.
    """
    repeat = table.get("repeat")
    count = repeat if isinstance(repeat, int) and not isinstance(repeat, bool) and repeat > 1 else 1
    matrix = table.get("matrix")
    if isinstance(matrix, Mapping):
        for values in _flatten(matrix).values():
            if isinstance(values, list) and values:
                count *= len(values)
    return count


def _check_count(sections: Mapping[str, Any], err: Err) -> None:
    """Refuse an expansion into more than :data:`MAX_TABLES` tables, one table's or the pipeline's."""
    total = 0
    for section, tables in sections.items():
        for name, table in tables.items() if isinstance(tables, Mapping) else ():
            count = expansion_count(table) if isinstance(table, Mapping) else 1
            if count > MAX_TABLES:
                raise err(
                    f"repeat and matrix expand this table into {count} tables; a pipeline holds at most "
                    f"{MAX_TABLES}. Lower repeat or shorten the matrix lists (or split the study into "
                    "several pipelines).",
                    table=f"{section}.{name}",
                    key="repeat" if "repeat" in table else "matrix",
                )
            total += count
    if total > MAX_TABLES:
        raise err(
            f"repeat and matrix expand the pipeline into {total} tables; a pipeline holds at most "
            f"{MAX_TABLES}. Lower repeat or shorten the matrix lists (or split the study into several "
            "pipelines)."
        )


def _expand_table(section: str, name: str, table: dict[str, Any], err: Err) -> list[tuple[str, dict]]:
    where = f"{section}.{name}"
    repeat = table.get("repeat")
    matrix = table.get("matrix")
    if repeat is None and matrix is None:
        return [(name, table)]
    if is_expanded(name) or "source" in table:
        raise err("an expanded table cannot be expanded again; remove 'repeat' and 'matrix'.", table=where)
    body = {k: v for k, v in table.items() if k not in EXPANSION_KEYS}
    points = [({}, {})] if matrix is None else _points(matrix, body, where, err)
    if repeat is not None and (not isinstance(repeat, int) or isinstance(repeat, bool) or repeat < 1):
        raise err(f"repeat must be an integer >= 1, got {repeat!r}.", table=where, key="repeat")
    out: list[tuple[str, dict]] = []
    for point, shown in points:
        copies = range(repeat) if repeat is not None else [None]
        for i in copies:
            expanded = copy_tables(body)
            for key, value in point.items():
                _set_path(expanded, key, copy_tables(value))
            expanded["source"] = name
            if i is not None:
                expanded["replicate"] = i
            out.append((format_stage_name(StageName(name, tuple(shown.items()), i)), expanded))
    return out


def _parsed(name: str) -> StageName | None:
    """``parse_stage_name(name)``, or ``None`` for text that is not a stage name."""
    try:
        return parse_stage_name(name)
    except ConfigError:
        return None


def _agrees(shown: Any, actual: Any) -> bool:
    """Whether a table's ``actual`` value is the one its name's point ``shown`` writes."""
    if isinstance(actual, Mapping):  # a component axis: written by its use, or as a JSON table
        if isinstance(shown, str):
            return actual.get("use") == shown
        return isinstance(shown, Mapping) and all(
            k in actual and _agrees(v, actual[k]) for k, v in shown.items()
        )
    numbers = (int, float)
    if isinstance(shown, numbers) and isinstance(actual, numbers) and not isinstance(shown, bool):
        return not isinstance(actual, bool) and shown == actual  # 1 and 1.0 alike
    return format_point({"k": shown}) == format_point({"k": actual})


def point_mismatches(name: str, table: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """The matrix keys whose value in an expanded table is not the one its name says.

    An expanded table is named by its matrix point (``mala[step_size=0.1]``); a value edited in a
    run's ``pipeline.toml`` afterwards (``step_size = 0.2``) would leave the old label on the new
    results. Keys the table does not hold are not compared.

    Args:
        name: the table's name, e.g. ``"mala[step_size=0.1][0]"`` (a name without a point gives
            ``[]``).
        table: the table's contents, as saved.

    Returns:
        ``[(key, value in the name, value in the table)]`` in matrix order.
    """
    parsed = _parsed(name)
    out: list[tuple[str, Any, Any]] = []
    for key, shown in parsed.point if parsed is not None else ():
        node: Any = table
        for part in key.split("."):
            node = node.get(part, _MISSING) if isinstance(node, Mapping) else _MISSING
        if node is not _MISSING and not _agrees(shown, node):
            out.append((key, shown, node))
    return out


_MISSING = object()


def _members(prefix: str, names: list[str]) -> list[str]:
    """The expansions of ``prefix`` in ``names``, in their order.

    Of ``x``: every ``x[...]``; of ``x[k=v]``: its replicates ``x[k=v][i]`` and every point that
    begins with ``k=v`` (``x[k=v,j=w]``, ...).

    Names are compared as :class:`~quadriga.stage_names.StageName` parts, the point's values as
    :func:`~quadriga.stage_names.format_point` writes them; a prefix with a replicate index has none.
    """
    head = _parsed(prefix)
    if head is None or head.replicate is not None:
        return []
    width, label = len(head.point), format_point(head.point)
    out = []
    for name in names:
        parsed = _parsed(name)
        if parsed is None or parsed.source != head.source or name == prefix:
            continue
        if len(parsed.point) >= width and format_point(parsed.point[:width]) == label:
            out.append(name)
    return out


def _resolve_ref(
    ref: str, consumer: str, table: dict[str, Any], names: list[str], err: Err, where: str, key: str
) -> list[str] | str:
    if ref.endswith("[*]"):
        prefix = ref[:-3]
        found = [prefix] if prefix in names else _members(prefix, names)
        if not found:
            raise err(
                f"input '{ref}' selects nothing: no task or stage is named '{prefix}' or expands from it."
                f"{suggest(prefix, names)}",
                table=where,
                key=key,
            )
        return found
    if ref in names:
        return ref
    members = _members(ref, names)
    if not members:
        return ref  # unknown: the checks after building name it with suggestions
    replicate, repeats = table.get("replicate"), _own_repeat(consumer, table, names)
    indexed = [m for m in members if replicate_index(m) is not None and replicate_base(m) == ref]
    if replicate is not None and len(indexed) == len(members) == repeats:
        base = parse_stage_name(ref)
        return format_stage_name(StageName(base.source, base.point, replicate))
    shown = ", ".join(members[:3]) + (", ..." if len(members) > 3 else "")
    hint = (
        f" or give this stage repeat = {len(members)} to bind replicate-wise"
        if len(indexed) == len(members)
        else ""
    )
    raise err(
        f"input '{ref}' is expanded into {len(members)} tables ({shown}); name one of them, "
        f"use '{ref}[*]' for all of them{hint}.",
        table=where,
        key=key,
    )


def _own_repeat(consumer: str, table: dict[str, Any], names: list[str]) -> int:
    if table.get("replicate") is None:
        return 0
    base = replicate_base(consumer)
    return sum(1 for n in names if replicate_base(n) == base and replicate_index(n) is not None)


def expand_sections(sections: dict[str, dict[str, Any]], err: Err) -> dict[str, dict[str, Any]]:
    """Expand ``repeat`` and ``matrix`` in ``{"task": {...}, "stage": {...}}`` and resolve inputs.

    Args:
        sections: the task and stage tables as read (after ``--set`` overrides).
        err: ``err(message, table=..., key=...) -> ConfigError`` naming the file.

    Returns:
        The same shape with expanded tables (in source order, points then replicates) and every
        input naming concrete tables: ``"x[*]"`` becomes a list, a bare name bound replicate-wise
        becomes ``"x[i]"``.

    Raises:
        ConfigError: a bad ``repeat``/``matrix``, more than :data:`MAX_TABLES` tables (checked
            before any is made), an ambiguous or empty selection; the error names the source table.
    """
    _check_count(sections, err)
    out: dict[str, dict[str, Any]] = {}
    for section, tables in sections.items():
        out[section] = {}
        for name, table in tables.items():
            if not isinstance(table, dict):
                out[section][name] = table
                continue
            for new_name, new_table in _expand_table(section, name, table, err):
                if new_name in out[section]:
                    raise err(f"'{new_name}' is defined twice.", table=f"{section}.{name}")
                out[section][new_name] = new_table
    names = [n for tables in out.values() for n in tables]
    for name, table in out.get("stage", {}).items():
        inputs = table.get("inputs")
        if not isinstance(inputs, dict):
            continue
        where = f"stage.{table.get('source', name)}"
        resolved: dict[str, Any] = {}
        for arg, ref in inputs.items():
            key = f"inputs.{arg}"
            if isinstance(ref, str):
                resolved[arg] = _resolve_ref(ref, name, table, names, err, where, key)
            elif isinstance(ref, list) and all(isinstance(r, str) for r in ref):
                flat: list[str] = []
                for r in ref:
                    got = _resolve_ref(r, name, table, names, err, where, key)
                    flat.extend(n for n in ([got] if isinstance(got, str) else got) if n not in flat)
                resolved[arg] = flat
            else:
                resolved[arg] = ref
        table["inputs"] = resolved
    return out
