"""Terminal output shared by the commands: tables that fit the console, results as a pivot, JSON.

Rules every command follows (checked by ``tests/test_cli_output.py`` at the default 80 columns):

- a name (component, stage, subject, metric, distribution) is never wrapped or cut: name columns
  are ``no_wrap`` and a table too wide for the console is split into several tables, each
  repeating the key columns, rather than folding cells;
- results of an evaluator are one subject x metric table (``rwm | tv | modes_visited ...``), not
  one row per ``subject/metric`` pair, and every metric is shown (no "... N more");
- ``--json`` prints the same data as JSON on stdout, nothing else.

Free text (summaries, docs) is the one column that may wrap, at spaces only.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

__all__ = [
    "chunk_columns",
    "format_value",
    "pivot",
    "print_json",
    "print_pivot",
    "print_results",
    "print_table",
    "results_payload",
]

#: the border and padding a column costs in a :data:`rich.box.SIMPLE_HEAD` table (1 space each side)
_PAD = 2


def format_value(value: Any) -> str:
    """A number as people read it: 4 significant digits for floats, integers as written, NaN as ``-``."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if value.is_integer() and abs(value) < 1e6:
            return str(int(value))
        return f"{value:.4g}"
    if value is None:
        return "-"
    return str(value)


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout (non-finite floats as ``null``)."""

    def clean(x: Any) -> Any:
        if isinstance(x, float) and not math.isfinite(x):
            return None
        if isinstance(x, Mapping):
            return {str(k): clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x

    sys.stdout.write(json.dumps(clean(data), indent=2, default=str) + "\n")


def chunk_columns(widths: Sequence[int], key_columns: int, total: int) -> list[list[int]]:
    """Split column indices into groups that fit ``total`` characters, each starting with the key columns.

    Args:
        widths: the width of each column's widest cell (header included).
        key_columns: how many leading columns every group repeats (the row labels).
        total: the console width.

    Returns:
        Lists of column indices; one list when everything fits. A column wider than the room
        left gets a group of its own (the table is then wider than the console rather than cut).
    """
    keys = list(range(key_columns))
    # a rich Table line is " " + cells joined by 3 characters (padding, divider, padding) + " ":
    # sum(widths) + 3 * columns - 1 characters
    base = sum(widths[i] + 3 for i in keys) - 1
    groups: list[list[int]] = []
    current: list[int] = []
    used = base
    for i in range(key_columns, len(widths)):
        w = widths[i] + 3
        if current and used + w > total:
            groups.append(keys + current)
            current, used = [], base
        current.append(i)
        used += w
    if current or not groups:
        groups.append(keys + current)
    return groups


def print_table(
    con: Console,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    title: str | None = None,
    key_columns: int = 1,
    wrap: str | None = None,
    right: Sequence[str] = (),
    one_line: bool = False,
) -> None:
    """Print ``rows`` under ``columns``, split into several tables if they do not fit the console.

    Args:
        con: where to print.
        columns: the header of each column.
        rows: the cells (converted with :func:`format_value`; markup is escaped).
        title: printed above the (first) table.
        key_columns: leading columns repeated in every part when the table is split.
        wrap: the one column of free text that may wrap at spaces and takes the room left;
            every other column is printed on one line, never folded.
        right: columns to right-align (numbers).
        one_line: cut the free-text column to one line ending in "…" instead of wrapping it.
    """
    cells = [[format_value(v) for v in row] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    wrap_i = columns.index(wrap) if wrap is not None else None
    if wrap_i is not None:  # free text takes what is left, at least 20 characters
        others = sum(w + _PAD for i, w in enumerate(widths) if i != wrap_i)
        widths[wrap_i] = max(20, min(widths[wrap_i], con.width - others - _PAD))
    groups = chunk_columns(widths, key_columns, con.width)
    for part, group in enumerate(groups):
        label = title if len(groups) == 1 or title is None else f"{title} ({part + 1}/{len(groups)})"
        table = Table(title=label, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False, expand=False)
        for i in group:
            if i == wrap_i:
                table.add_column(
                    columns[i],
                    overflow="ellipsis" if one_line else "fold",
                    no_wrap=one_line,
                    width=widths[i],
                )
            else:
                table.add_column(
                    columns[i],
                    no_wrap=True,
                    min_width=widths[i],
                    justify="right" if columns[i] in right else "left",
                )
        for row in cells:
            table.add_row(*(escape(row[i]) for i in group))
        con.print(table)


def pivot(values: Mapping[str, Any]) -> tuple[list[str], list[str], dict[tuple[str, str], Any]]:
    """Split ``{"subject/metric": value}`` into subjects, metrics and cells.

    The subject is everything before the last ``/`` (``"rwm"``, ``"mala[0]"``, ``"a/b"``); a key
    without ``/`` is a metric of the stage itself (subject ``""``). Order of first appearance is kept.

    Returns:
        ``(subjects, metrics, {(subject, metric): value})``.
    """
    subjects: list[str] = []
    metrics: list[str] = []
    cells: dict[tuple[str, str], Any] = {}
    for key, value in values.items():
        subject, _, metric = key.rpartition("/")
        if subject not in subjects:
            subjects.append(subject)
        if metric not in metrics:
            metrics.append(metric)
        cells[(subject, metric)] = value
    return subjects, metrics, cells


def print_pivot(con: Console, values: Mapping[str, Any], *, title: str) -> None:
    """Print a stage's metrics as one subject x metric table (metrics x subjects when that is narrower).

    Every value is shown; a table too wide for the console is split into parts.
    """
    subjects, metrics, cells = pivot(values)
    by_subject = [[s or "(stage)", *(cells.get((s, m), "") for m in metrics)] for s in subjects]
    by_metric = [[m, *(cells.get((s, m), "") for s in subjects)] for m in metrics]

    def parts(header: list[str], rows: list[list[Any]]) -> int:
        widths = [max([len(h), *(len(format_value(r[i])) for r in rows)]) for i, h in enumerate(header)]
        return len(chunk_columns(widths, 1, con.width))

    wide = ["subject", *metrics]
    tall = ["metric", *(s or "(stage)" for s in subjects)]
    if parts(tall, by_metric) < parts(wide, by_subject):
        print_table(con, tall, by_metric, title=title, right=tall[1:])
    else:
        print_table(con, wide, by_subject, title=title, right=wide[1:])


def results_payload(
    results: Mapping[str, Any], run_dir: Any = None, status: str | None = None
) -> dict[str, Any]:
    """What ``--json`` prints for a run: ``{"dir", "status", "pipeline", "seed", "stages"}``."""
    out: dict[str, Any] = {"dir": str(run_dir) if run_dir is not None else None}
    out["status"] = status or results.get("status")
    out.update({k: v for k, v in results.items() if k != "status"})
    return out


def print_results(con: Console, results: Mapping[str, Any]) -> None:
    """Print a run's ``results.json`` dict: one table of samplers and learners, one pivot per evaluator.

    Samples give ``n x d`` and the acceptance rate, estimates their value and standard error,
    fitted models their last logged values; every metric of every evaluator is printed.
    """
    stages: Mapping[str, Any] = results.get("stages", {})
    overview: list[list[Any]] = []
    figures: list[list[Any]] = []
    for stage, res in stages.items():
        kind = res.get("type")
        if kind == "Samples":
            acc = res.get("info", {}).get("acceptance_rate")
            detail = f"{res.get('num_samples')} x {res.get('dim')} samples"
            overview.append([stage, res.get("component", ""), detail, acc if acc is not None else ""])
        elif kind == "Estimate":
            err = res.get("stderr")
            value = format_value(res.get("value")) + (f" ± {format_value(err)}" if err is not None else "")
            overview.append([stage, res.get("component", ""), f"estimate {value}", ""])
        elif kind == "Fitted":
            final = ", ".join(f"{k}={format_value(v)}" for k, v in res.get("final", {}).items())
            overview.append([stage, res.get("component", ""), f"fitted {final}".strip(), ""])
        for fig in res.get("figures", []):
            figures.append([stage, fig])
    if overview:
        columns = ["stage", "component", "result", "acceptance"]
        if all(row[3] == "" for row in overview):  # no sampler: no acceptance column
            columns, overview = columns[:3], [row[:3] for row in overview]
        print_table(
            con, columns, overview, title="stages", key_columns=2, wrap="result", right=["acceptance"]
        )
    for stage, res in stages.items():
        if res.get("type") == "Metrics" and res.get("values"):
            print_pivot(con, res["values"], title=f"{stage} ({res.get('component', 'evaluator')})")
    if figures:
        print_table(con, ["stage", "figure"], figures, title="figures")


def print_summary(con: Console, summary: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> None:
    """Print grouped results (rows of :func:`quadriga.summary.aggregate`) as fitting tables.

    One row per grid point, stage, subject and metric with ``n``, the mean, its standard error and
    the interval; with ``n < 2`` the standard error and interval are ``-`` (one value has none).
    How the intervals were computed is printed once under the table.
    """
    grid = [k.split(".")[-1] for k in keys]
    rows = []
    methods: list[str] = []
    for e in summary:
        subject, _, metric = str(e["metric"]).rpartition("/")
        small = int(e["n"]) < 2
        interval = "-" if small else f"[{format_value(e['ci_low'])}, {format_value(e['ci_high'])}]"
        rows.append(
            [
                *(e.get(k) for k in keys),
                e["stage"],
                subject or "-",
                metric,
                e["n"],
                format_value(e["mean"]),
                "-" if small else f"{e['stderr']:.2g}",
                interval,
            ]
        )
        method = str(e.get("ci_method", "not recorded"))
        if not small and method not in methods:
            methods.append(method)
    columns = [*grid, "stage", "subject", "metric", "n", "mean", "s.e.", "interval"]
    print_table(
        con,
        columns,
        rows,
        title="summary: n values (one per seed or run), their mean, standard error and interval",
        key_columns=len(grid) + 3,
        right=["n", "mean", "s.e."],
    )
    if methods:
        con.print("intervals: " + escape("; ".join(methods)))
    if any(int(e["n"]) == 2 for e in summary):
        from quadriga.stats import small_sample_note

        con.print(f"[yellow]note[/]: bootstrap intervals at {small_sample_note(2)}.")
