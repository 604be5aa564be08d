"""Running a claim's pipeline and reading its per-replicate observations.

``repeat`` goes on the arms (and ``repeat_stages``, ``repeat_tasks``), the rest of the pipeline
follows (:func:`_propagate_repeat`), and replicate ``i`` of an arm is read from the evaluator's
values (:func:`replicate_values`, :func:`read_replicates`).

Claims on one pipeline and scale share one run: inside :func:`shared_runs` (which
:func:`~quadriga.claims.verify` opens around all the claims it runs), :func:`run_pipeline` runs a
given (expanded pipeline, overrides, seed, registry) once and hands the same
:class:`~quadriga.runs.RunResult` to every later claim; :func:`shared` does the same for any
computation an ``experiment`` keys itself (several runs, a direct component run). Outside the
block nothing is kept, so no run outlives the ``verify`` call that made it.
"""

from __future__ import annotations

import contextlib
import json
import math
import numbers
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from quadriga.claims.model import Observations
from quadriga.errors import ConfigError, suggest

__all__ = [
    "arm_table",
    "check_names",
    "keep_stages",
    "markdown_table",
    "mean_intervals",
    "read_replicates",
    "read_row_groups",
    "read_rows",
    "read_rows_dropped",
    "replicate_values",
    "run_pipeline",
    "run_repeated",
    "shared",
    "shared_runs",
]

T = TypeVar("T")
#: the caches of the open :func:`shared_runs` blocks, innermost last
_ACTIVE: list[dict[Any, Any]] = []
SHARED_NOTE = "shared-run.txt"


@contextlib.contextmanager
def shared_runs() -> Iterator[dict[Any, Any]]:
    """A block inside which :func:`shared` and :func:`run_pipeline` compute each key once.

    A nested block reuses the outer one's cache. The cache is emptied when the outermost block
    ends, so run results (and their artifacts) are released.

    Yields:
        The cache ``{key: value}`` (for inspection).
    """
    if _ACTIVE:
        yield _ACTIVE[-1]
        return
    cache: dict[Any, Any] = {}
    _ACTIVE.append(cache)
    try:
        yield cache
    finally:
        _ACTIVE.pop()
        cache.clear()


def shared(key: Any, compute: Callable[[], T]) -> T:
    """``compute()`` once per hashable ``key`` inside :func:`shared_runs`; every time outside it.

    For experiments whose claims read one computation (a set of pipeline runs, a direct component
    run): key it by everything it depends on (pipeline, ``Scale`` fields, options).
    """
    if not _ACTIVE:
        return compute()
    cache = _ACTIVE[-1]
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def run_pipeline(
    data: Mapping[str, Any] | str,
    *,
    overrides: Sequence[str] = (),
    seed: int = 0,
    out: Path,
    registry: Any = None,
) -> Any:
    """Run a pipeline through :func:`quadriga.api.run`, once per block of :func:`shared_runs`.

    The key is the pipeline dict itself (after ``repeat`` was set), the overrides, the root seed
    and the registry, so two claims that make the same pipeline share its run. A claim that
    reuses a run writes ``shared-run.txt`` next to ``out`` naming the run's directory.

    Args:
        data: the pipeline (TOML structure), already carrying the claim's ``repeat`` settings; or a
            registered pipeline's name (or a TOML path), run as written.
        overrides: ``--set`` strings.
        seed: the root seed.
        out: the run directory of the first claim that runs it.
        registry: the registry (defaults to the process-wide one).

    Returns:
        The :class:`~quadriga.runs.RunResult`.

    Raises:
        ConfigError, StageError: as :func:`quadriga.api.run`.
    """
    from quadriga import api

    if isinstance(data, str):
        from quadriga.pipeline import read_source
        from quadriga.registry import get_registry

        data, _ = read_source(data, registry or get_registry())
    key = ("run", json.dumps(data, sort_keys=True, default=str), tuple(overrides), seed, id(registry))
    out = Path(out)
    result = shared(
        key, lambda: api.run(dict(data), overrides=tuple(overrides), seed=seed, out=out, registry=registry)
    )
    if Path(result.dir).resolve() != out.resolve():
        out.parent.mkdir(parents=True, exist_ok=True)
        (out.parent / SHARED_NOTE).write_text(f"{result.dir}\n")
    return result


def arm_table(arm: str) -> str:
    """The stage table of an arm: ``"weighted[likelihood_ratio=given]"`` -> ``"weighted"``.

    An arm is a stage table or one point of its ``matrix``; the claim repeats the table (every
    point) and reads the point's replicates ``values[f"{arm}[{i}]/{metric}"]``.
    """
    from quadriga.stage_names import parse_stage_name

    return parse_stage_name(arm).source


def check_names(data: Mapping[str, Any], pipeline: str, file: Any = None, **names: Sequence[str]) -> None:
    """Refuse names that are not stages (``arms``, ``stages``, ``repeat_stages``) or tasks (``*tasks``).

    Raises:
        ConfigError: naming the argument, the missing name and the closest match.
    """
    for key, given in names.items():
        table = "task" if key.endswith("tasks") else "stage"
        for name in given:
            if name not in data.get(table, {}):
                raise ConfigError(
                    f"{key} names '{name}', which is not a {table} of pipeline '{pipeline}'."
                    f"{suggest(name, data.get(table, {}))}",
                    file=file,
                    key=key,
                )


def keep_stages(
    data: dict[str, Any], stages: Sequence[str], *, tasks: Sequence[str] = (), file: Any = None
) -> None:
    """Reduce a pipeline (TOML structure, changed in place) to ``stages`` and the tasks they read.

    The kept stage tables stay in file order; a task stays when a kept stage's inputs name it, or
    when it is in ``tasks``. Inputs naming a stage that is left out are narrowed: a list loses
    those names (``subject = ["a[*]", "b[*]"]`` keeping ``a`` becomes ``["a[*]"]``). Names are
    read as :func:`~quadriga.stage_names.parse_stage_name` does, so ``x``, ``x[*]``, ``x[2]`` and
    ``x[k=v]`` all name the table ``x``.

    Args:
        data: the pipeline, as :func:`quadriga.pipeline.read_source` gives it.
        stages: the stage tables to keep (names of ``data["stage"]``; check them first with
            :func:`check_names`).
        tasks: tasks kept even when no kept stage names them.
        file: the pipeline's file, for the error.

    Raises:
        ConfigError: (key ``stages``) a kept stage whose single input names a stage left out, or
            whose list input would name none.
    """
    kept = set(stages)
    tables = {n: t for n, t in data.get("stage", {}).items() if n in kept}
    dropped = set(data.get("stage", {})) - kept
    read: set[str] = set(tasks)
    for name, table in tables.items():
        inputs = table.get("inputs")
        if not isinstance(inputs, dict):
            continue
        narrowed: dict[str, Any] = {}
        for arg, ref in inputs.items():
            refs = [ref] if isinstance(ref, str) else list(ref)
            left = [r for r in refs if _table_of(r) not in dropped]
            if len(left) < len(refs) and (isinstance(ref, str) or not left):
                gone = ", ".join(_table_of(r) for r in refs if r not in left)
                raise ConfigError(
                    f"stages leaves out {gone}, which stage '{name}' reads as input '{arg}'; "
                    f"keep {'it' if len(refs) == 1 else 'one of them'} or leave '{name}' out too.",
                    file=file,
                    key="stages",
                )
            read.update(_table_of(r) for r in left)
            narrowed[arg] = ref if isinstance(ref, str) else left
        tables[name] = {**table, "inputs": narrowed}
    data["stage"] = tables
    if "task" in data:
        data["task"] = {n: t for n, t in data["task"].items() if n in read}


def _table_of(ref: str) -> str:
    """The table an input names: ``"x"``, ``"x[*]"``, ``"x[2]"``, ``"x[k=v][*]"`` -> ``"x"``."""
    try:
        return arm_table(ref.removesuffix("[*]"))
    except ConfigError:
        return ref


def run_repeated(
    pipeline: str,
    scale: Any,
    out_dir: Path,
    *,
    stages: Sequence[str],
    tasks: Sequence[str] = (),
    registry: Any = None,
) -> Any:
    """Run a registered pipeline with ``repeat = scale.replicates`` on ``stages`` and ``tasks``.

    What an ``experiment`` needs when its claims read one run of a pipeline: replicate ``i`` of
    every repeated stage shares its seed (common random numbers), the rest of the pipeline is left
    as written (an evaluator whose ``subjects`` name the repeated stages sees every replicate), and
    inside :func:`shared_runs` every claim asking for the same run gets the first one
    (:func:`run_pipeline`).

    Args:
        pipeline: a registered pipeline name (or a TOML path).
        scale: the claim's :class:`~quadriga.claims.Scale` (``replicates``, ``overrides``, ``seed``).
        out_dir: the claim's directory; the run goes to ``out_dir / "run"``.
        stages: stages repeated (the arms, and the other stages the claims read).
        tasks: tasks repeated (fresh data per replicate, bound replicate-wise).
        registry: defaults to the process-wide one.

    Returns:
        The :class:`~quadriga.runs.RunResult`.

    Raises:
        ConfigError: a stage or task not in the pipeline, or as :func:`quadriga.api.run`.
    """
    from quadriga.pipeline import read_source
    from quadriga.registry import get_registry

    registry = registry or get_registry()
    data, file = read_source(pipeline, registry)
    check_names(data, pipeline, file, stages=stages, tasks=tasks)
    for name in stages:
        data["stage"][name]["repeat"] = scale.replicates
    for name in tasks:
        data["task"][name]["repeat"] = scale.replicates
    return run_pipeline(
        data, overrides=scale.overrides, seed=scale.seed, out=Path(out_dir) / "run", registry=registry
    )


def replicate_values(
    values: Mapping[str, Any], arm: str, metric: str, replicates: int | None = None, *, stage: str = ""
) -> list[float]:
    """``[values[f"{arm}[{i}]/{metric}"] for i in range(replicates)]``: one arm's per-replicate values.

    Args:
        values: an evaluator stage's ``values``.
        arm: the stage base name (``"optcs"``, or a matrix point ``"fm-smc[num_particles=64]"``).
        metric: the metric name.
        replicates: how many; ``None`` reads ``i = 0, 1, ...`` while present.
        stage: the stage's name, for the error message.

    Returns:
        The values as floats, replicate ``i`` at index ``i``.

    Raises:
        ConfigError: a replicate is missing (or none is present when ``replicates`` is None).
    """
    if replicates is None:
        replicates = 0
        while f"{arm}[{replicates}]/{metric}" in values:
            replicates += 1
    missing = [f"{arm}[{i}]/{metric}" for i in range(replicates) if f"{arm}[{i}]/{metric}" not in values]
    if missing or not replicates:
        have = ", ".join(sorted(values)[:8]) or "nothing"
        where = f" in stage '{stage}'" if stage else ""
        name = missing[0] if missing else f"{arm}[0]/{metric}"
        raise ConfigError(f"no value '{name}'{where} (has {have}).", key="metric")
    return [float(values[f"{arm}[{i}]/{metric}"]) for i in range(replicates)]


def read_replicates(
    result: Any, stage: str, arms: Sequence[str], metric: str, replicates: int | None = None
) -> dict[str, list[float]]:
    """Paired per-replicate observations ``{arm: [replicate 0, 1, ...]}`` of ``metric`` in ``stage``.

    What an ``observe`` callable returns (or puts into :class:`Observations`); replicate ``i`` of
    every arm shares its seed. An evaluator repeated with the arms (``stage[0]``, ``stage[1]``, ...,
    each bound to one replicate) is read as one stage.

    Raises:
        ConfigError: no such stage, or a replicate missing (see :func:`replicate_values`).
    """
    stages = result.results.get("stages", {})
    if stage not in stages and f"{stage}[0]" in stages:
        # the evaluator was repeated with the arms (bound replicate-wise): pool its replicates' values
        values: dict[str, Any] = {}
        i = 0
        while f"{stage}[{i}]" in stages:
            values.update(stages[f"{stage}[{i}]"].get("values", {}))
            i += 1
    else:
        values = _stage_values(result, stage)
    return {arm: replicate_values(values, arm, metric, replicates, stage=stage) for arm in arms}


def read_rows(
    result: Any, rows: Any, arms: Sequence[str], replicates: int | None = None, *, paired: bool = True
) -> dict[str, list[float]]:
    """Per-row observations ``{arm: [row values ordered by key]}`` of one stage's table (see :class:`Rows`).

    Arm ``A``'s rows are those whose ``rows.arm`` column, as a string, is ``A`` (a column of
    integers 0/1 matches arms ``"0"``/``"1"``). Their keys must all be of one type (``int``,
    ``float`` or ``str``; ``bool`` is none of them), each naming one row; their values numbers
    (``float`` of an int, float or NumPy number; a string is refused). A NaN or infinite value is
    refused, or with ``rows.nonfinite == "drop"`` its row is left out (for a paired effect, its
    key is left out of every arm); :func:`read_rows_dropped` also says how many were.

    Args:
        result: the :class:`~quadriga.runs.RunResult` (its ``artifacts[rows.stage].tables``).
        rows: the claim's :class:`~quadriga.claims.Rows`.
        arms: the arms, values of the ``rows.arm`` column.
        replicates: the number of rows each arm must have, counted before rows with non-finite
            values are dropped (``None``: any number).
        paired: every arm must have the same keys (replicate ``i`` of every arm is the same item).

    Returns:
        ``{arm: [float(row[rows.column]) for its kept rows sorted by row[rows.key]]}``, in ``arms``
        order.

    Raises:
        ConfigError: (key ``rows``) the stage has no result or no such table (closest names
            suggested), a row lacks the arm, key or value column (closest column suggested), an
            arm has no rows, keys of several types or of a type other than int, float or str (the
            types named), a key repeated within an arm (the key named), a number of rows other
            than ``replicates``, a value that is not a number (the arm and the row's key named);
            with ``nonfinite="error"`` a NaN or infinite value (the arm and the first keys
            named), with ``"drop"`` fewer than 2 rows of an arm left; when ``paired``, arms whose
            keys differ (the keys, or their types, named) or NaN keys (which cannot be paired).
    """
    return read_rows_dropped(result, rows, arms, replicates, paired=paired)[0]


def read_rows_dropped(
    result: Any, rows: Any, arms: Sequence[str], replicates: int | None = None, *, paired: bool = True
) -> tuple[dict[str, list[float]], dict[str, int]]:
    """:func:`read_rows`, with the number of rows of each arm left out for a non-finite value.

    Returns:
        ``(values, dropped)``: ``values`` as :func:`read_rows` returns them, ``dropped`` ``{arm:
        rows left out}`` (all 0 unless ``rows.nonfinite == "drop"``), in ``arms`` order.

    Raises:
        ConfigError: as :func:`read_rows`; (key ``rows``) grouped rows (``rows.group``), which
            :func:`read_row_groups` reads.
    """
    where = f"table '{rows.table}' of stage '{rows.stage}'"
    table = _row_table(result, rows, where)
    if getattr(rows, "group", ()):
        raise ConfigError(
            f"rows of {where} are grouped by {', '.join(rows.group)}; read them with read_row_groups.",
            key="rows",
        )
    return _read_table(table, rows, arms, replicates, paired, where)


def read_row_groups(
    result: Any, rows: Any, arms: Sequence[str], replicates: int | None = None, *, paired: bool = True
) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`read_rows_dropped` within each group of ``rows.group`` (one comparison per group).

    The rows are split by the values of the ``rows.group`` columns, in order of first appearance;
    each group is read as :func:`read_rows_dropped` reads a whole table (``replicates`` rows per arm
    in every group, paired by key within the group). Without ``rows.group`` this is
    :func:`read_rows_dropped`.

    Returns:
        ``(values, dropped)``: ``{arm: [values]}`` and ``{arm: rows left out}`` without
        ``rows.group``; with it, ``{"col=value,...": {arm: [values]}}`` and ``{"col=value,...":
        {arm: rows left out}}``, even when the table holds one group (a scale that runs one
        setting keeps its label, and the numbers their names).

    Raises:
        ConfigError: (key ``rows``) a row lacking a group column (the closest column suggested);
            as :func:`read_rows` within each group, the group named.
    """
    from quadriga.expansion import point_label

    where = f"table '{rows.table}' of stage '{rows.stage}'"
    table = _row_table(result, rows, where)
    group = tuple(getattr(rows, "group", ()))
    parts: dict[str, list[Any]] = {}
    for row in table:  # _row_table checked that every row has the group columns
        parts.setdefault(point_label({c: row[c] for c in group}), []).append(row)
    if not group:
        return _read_table(table, rows, arms, replicates, paired, where)
    values: dict[str, Any] = {}
    dropped: dict[str, Any] = {}
    for label, members in parts.items():
        values[label], dropped[label] = _read_table(
            members, rows, arms, replicates, paired, f"{where} (group {label})"
        )
    return values, dropped


def _read_table(
    table: list[Any], rows: Any, arms: Sequence[str], replicates: int | None, paired: bool, where: str
) -> tuple[dict[str, list[float]], dict[str, int]]:
    """:func:`read_rows_dropped` on the rows ``table`` (a whole table or one group's rows)."""
    keys: dict[str, list[Any]] = {}
    values: dict[str, list[float]] = {}
    for arm in arms:
        keys[arm], values[arm] = _arm_rows(table, rows, arm, replicates, where)
    if paired:
        _check_pairs(keys, rows, arms, where)
    bad = {
        arm: [k for k, v in zip(keys[arm], values[arm], strict=True) if not math.isfinite(v)] for arm in arms
    }
    if getattr(rows, "nonfinite", "error") != "drop":
        for arm in arms:
            if bad[arm]:
                _refuse_nonfinite(rows, arm, keys[arm], values[arm], where)
        return values, dict.fromkeys(arms, 0)
    out: dict[str, list[float]] = {}
    dropped: dict[str, int] = {}
    anywhere = {k for arm in arms for k in bad[arm]}  # paired: a key leaves every arm, pairs stay aligned
    for arm in arms:
        gone = anywhere if paired else set(bad[arm])
        out[arm] = [v for k, v in zip(keys[arm], values[arm], strict=True) if k not in gone]
        dropped[arm] = len(values[arm]) - len(out[arm])
        if len(out[arm]) < 2:
            why = " (in any arm: the effect is paired)" if paired else ""
            raise ConfigError(
                f"{len(out[arm])} of the {len(values[arm])} rows of '{arm}' in {where} are left once the "
                f"rows whose '{rows.column}' is not finite{why} are dropped; an interval needs at least 2.",
                key="rows",
            )
    return out, dropped


def _row_table(result: Any, rows: Any, where: str) -> list[Any]:
    """The rows of ``tables[rows.table]`` of ``rows.stage``, each with the arm, key and value columns.

    Raises:
        ConfigError: (key ``rows``) no result for the stage, no such table, a row lacking a column
            (the arm, key or value column, or one of ``rows.group``).
    """
    artifact = result.artifacts.get(rows.stage)
    if artifact is None:
        raise ConfigError(
            f"stage '{rows.stage}' has no result in this run.{suggest(rows.stage, result.artifacts)}",
            key="rows",
        )
    tables = getattr(artifact, "tables", None) or {}
    if rows.table not in tables:
        raise ConfigError(
            f"stage '{rows.stage}' has no table '{rows.table}' (has {', '.join(tables) or 'none'})."
            f"{suggest(rows.table, tables)}",
            key="rows",
        )
    table = list(tables[rows.table])
    group = tuple(getattr(rows, "group", ()))
    for column in (rows.arm, rows.key, rows.column, *group):
        lacking = next((r for r in table if column not in r), None)
        if lacking is not None:
            what = "group column" if column in group else "column"
            raise ConfigError(
                f"a row of {where} has no {what} '{column}' (its columns: {', '.join(lacking)})."
                f"{suggest(column, lacking)}",
                key="rows",
            )
    return table


def _key_type(key: Any) -> str:
    """``"int"``, ``"float"`` or ``"str"`` for a usable row key (NumPy numbers too); else its type's name."""
    if isinstance(key, bool):  # True == 1: a flag is no item key
        return "bool"
    if isinstance(key, str):
        return "str"
    if isinstance(key, numbers.Integral):
        return "int"
    if isinstance(key, numbers.Real):
        return "float"
    return type(key).__name__


def _number(value: Any) -> float | None:
    """``float(value)`` for a number (bool and NumPy numbers included), None for anything else (a string)."""
    if isinstance(value, (str, bytes)) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _arm_rows(
    table: list[Any], rows: Any, arm: str, replicates: int | None, where: str
) -> tuple[list[Any], list[float]]:
    """``(keys, values)`` of the rows of ``arm`` (``str(row[rows.arm]) == arm``), sorted by key.

    Raises:
        ConfigError: (key ``rows``) no row of the arm, keys of several or unusable types, a
            repeated key, a number of rows other than ``replicates``, a value that is no number.
    """
    mine = [r for r in table if str(r[rows.arm]) == arm]
    if not mine:
        have = sorted({str(r[rows.arm]) for r in table})
        raise ConfigError(
            f"{where} has no row whose '{rows.arm}' is '{arm}' (has {', '.join(have) or 'no rows'})."
            f"{suggest(arm, have)}",
            key="rows",
        )
    found: dict[str, Any] = {}
    for r in mine:
        found.setdefault(_key_type(r[rows.key]), r[rows.key])
    if len(found) > 1 or not set(found) <= {"int", "float", "str"}:
        what = ", ".join(f"{t} ({k!r})" for t, k in found.items())
        raise ConfigError(
            f"the '{rows.key}' of the rows of '{arm}' in {where} must all be of one type, int, float or "
            f"str; found {what}.",
            key="rows",
        )
    mine.sort(key=lambda r: r[rows.key])
    keys = [r[rows.key] for r in mine]
    seen: set[Any] = set()
    for k in keys:
        if k in seen:
            raise ConfigError(
                f"{where} repeats the '{rows.key}' {k!r} among the rows of '{arm}' "
                f"({keys.count(k)} rows); the key must name one item per row.",
                key="rows",
            )
        seen.add(k)
    if replicates is not None and len(mine) != replicates:
        raise ConfigError(
            f"{where} has {len(mine)} row(s) of '{arm}', not replicates = {replicates}; the stage must "
            f"write one row per item, and {rows.count} (set to replicates) the number of items.",
            key="rows",
        )
    values = []
    for r in mine:
        value = _number(r[rows.column])
        if value is None:
            raise ConfigError(
                f"the '{rows.column}' of the row of '{arm}' whose '{rows.key}' is {r[rows.key]!r} in "
                f"{where} is {r[rows.column]!r} ({type(r[rows.column]).__name__}), not a number.",
                key="rows",
            )
        values.append(value)
    return keys, values


def _check_pairs(keys: Mapping[str, list[Any]], rows: Any, arms: Sequence[str], where: str) -> None:
    """Refuse arms whose keys differ, naming the keys, their types, or the NaN keys that cannot be paired.

    Raises:
        ConfigError: (key ``rows``) as above.
    """
    fix = "give every arm the same items or declare Effect(paired=False)."
    for arm in arms:
        nan = [k for k in keys[arm] if _key_type(k) == "float" and math.isnan(k)]
        if nan:
            raise ConfigError(
                f"the effect is paired, but {len(nan)} row(s) of '{arm}' in {where} have a NaN "
                f"'{rows.key}', and NaN keys cannot be paired (NaN equals nothing); {fix}",
                key="rows",
            )
    first = arms[0]
    for arm in arms[1:]:
        if keys[arm] == keys[first]:
            continue
        types = {a: _key_type(keys[a][0]) for a in (first, arm)}
        if types[arm] != types[first]:
            differ = f"their types differ: {types[first]} in '{first}', {types[arm]} in '{arm}'"
        else:
            only = sorted(set(keys[first]) ^ set(keys[arm]))
            differ = ", ".join(map(repr, only[:5])) + (", ..." if len(only) > 5 else "") or "order"
        raise ConfigError(
            f"the effect is paired, but the '{rows.key}' of the rows of '{arm}' and '{first}' in {where} "
            f"differ ({differ}); {fix}",
            key="rows",
        )


def _refuse_nonfinite(rows: Any, arm: str, keys: list[Any], values: list[float], where: str) -> None:
    """Refuse the rows of ``arm`` whose value is NaN or infinite, naming the first keys.

    Raises:
        ConfigError: (key ``rows``) always.
    """
    bad = [(k, v) for k, v in zip(keys, values, strict=True) if not math.isfinite(v)]
    named = ", ".join(f"{k!r} ({v})" for k, v in bad[:5]) + (", ..." if len(bad) > 5 else "")
    raise ConfigError(
        f"the '{rows.column}' of {len(bad)} of the {len(keys)} rows of '{arm}' in {where} is not finite "
        f"('{rows.key}' {named}); give Rows(nonfinite=\"drop\") to leave those items out (counted in "
        f"the numbers as rows_dropped/{arm}), or fix the stage.",
        key="rows",
    )


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A markdown table for a claim's report: floats as ``.4g``, anything else as ``str``.

    Raises:
        ValueError: a row whose length differs from the header's.
    """
    lines = ["| " + " | ".join(map(str, header)) + " |", "|" + "---|" * len(header)]
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"row {list(row)} has {len(row)} cells, the header {len(header)}")
        lines.append("| " + " | ".join(f"{c:.4g}" if isinstance(c, float) else str(c) for c in row) + " |")
    return "\n".join(lines)


def mean_intervals(
    series: Mapping[str, Mapping[str, Sequence[float]]], *, resamples: int = 2000, rng: Any = 0
) -> tuple[dict[str, float], str]:
    """Means over replicates with calibrated intervals: report numbers, never part of a verdict.

    Args:
        series: ``{arm: {metric: [per-replicate values]}}``.
        resamples: passed to :func:`quadriga.stats.interval` (unused by its t interval of a mean).
        rng: passed to :func:`quadriga.stats.interval` (unused by its t interval of a mean).

    Returns:
        ``(numbers, table)``: ``numbers["<arm>/<metric>"]``, ``"..._low"``, ``"..._high"`` and a
        markdown table ``| arm | metric | mean | 95% interval | n |``.

    Source: :func:`quadriga.stats.interval` (Student t for a mean).
    """
    from quadriga.stats import interval

    numbers: dict[str, float] = {}
    rows = ["| arm | metric | mean | 95% interval | n |", "|---|---|---|---|---|"]
    for arm, metrics in series.items():
        for name, vals in metrics.items():
            ci = interval(list(vals), "mean", resamples=resamples, rng=rng)
            numbers[f"{arm}/{name}"], numbers[f"{arm}/{name}_low"] = ci.estimate, ci.low
            numbers[f"{arm}/{name}_high"] = ci.high
            rows.append(f"| {arm} | {name} | {ci.estimate:.4g} | [{ci.low:.4g}, {ci.high:.4g}] | {ci.n} |")
    return numbers, "\n".join(rows)


def _expand(value: Any, repeated: set[str]) -> Any:
    """Inputs of a stage that is not repeated: a repeated node ``x`` becomes ``"x[*]"`` (every replicate)."""
    if isinstance(value, str):
        return [f"{value}[*]"] if value in repeated else value
    if isinstance(value, list):
        return [f"{v}[*]" if isinstance(v, str) and v in repeated else v for v in value]
    return value


def _propagate_repeat(data: dict[str, Any], repeated: set[str], replicates: int) -> None:
    """Make the rest of the pipeline follow the repeated arms and tasks.

    A stage with a single-node input (``reference = "data"``) on a repeated node is repeated too
    and binds replicate-wise (``check[i]`` gets ``data[i]``); otherwise its list inputs on repeated
    nodes select every replicate (``"arm[*]"``). Stages are visited in file order until nothing
    changes, so chains of stages follow.
    """
    stages = data.get("stage", {})
    changed = True
    while changed:
        changed = False
        for name, table in stages.items():
            inputs = table.get("inputs")
            if name in repeated or not isinstance(inputs, dict):
                continue
            if any(isinstance(v, str) and v in repeated for v in inputs.values()):
                table["repeat"] = replicates
                repeated.add(name)
                changed = True
    for name, table in stages.items():
        if name not in repeated and isinstance(table.get("inputs"), dict):
            table["inputs"] = {k: _expand(v, repeated) for k, v in table["inputs"].items()}


def _as_observations(value: Any) -> Observations:
    if isinstance(value, Observations):
        return value
    if isinstance(value, Mapping):
        return Observations(values=dict(value))
    raise TypeError(f"observe/experiment returned {type(value).__name__}; return a dict or Observations")


def _stage_values(result: Any, stage: str) -> dict[str, Any]:
    stages = result.results.get("stages", {})
    if stage not in stages:
        raise ConfigError(
            f"stage '{stage}' has no results in this run.{suggest(stage, stages)}", key="metric"
        )
    return stages[stage].get("values", {})


def _read_repeat(result: Any, arm: str, metric: tuple[str, str], replicates: int) -> list[float]:
    stage, name = metric
    stages = result.results.get("stages", {})
    out = []
    for i in range(replicates):
        keys = [f"{arm}[{i}]/{name}"]
        pools = [stages.get(stage, {}).get("values", {}), stages.get(f"{stage}[{i}]", {}).get("values", {})]
        found = next((p[k] for p in pools for k in keys if k in p), None)
        if found is None:
            available = sorted(k for p in pools for k in p)[:8]
            raise ConfigError(
                f"no value '{arm}[{i}]/{name}' in stage '{stage}' (has {', '.join(available) or 'nothing'}).",
                key="metric",
            )
        out.append(float(found))
    return out
