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
from rich.table import Table
from rich.text import Text

from quadriga.markup import escape
from quadriga.stage_names import parse_stage_name, replicate_base, replicate_index, split_subject_key

__all__ = [
    "across_seed_rows",
    "chunk_columns",
    "format_value",
    "pivot",
    "plan_rows",
    "print_json",
    "print_pivot",
    "print_results",
    "print_stripped",
    "print_table",
    "print_text",
    "results_payload",
    "shorten_middle",
    "wrap_items",
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


def wrap_items(text: str, width: int, sep: str = " ") -> str:
    """``text`` broken into lines of at most ``width`` characters, only at ``sep``.

    A name is never cut: the pieces between separators are kept whole (a piece longer than
    ``width`` gets a line of its own). A broken separator leaves its non-space part at the end of
    the line (``", "`` -> ``","``).

    Args:
        text: one cell (existing newlines are kept).
        width: the column width in characters, >= 1.
        sep: where lines may break: ``" "`` for free text, ``", "`` for lists of names.

    Returns:
        The lines joined with newlines.
    """
    tail = sep.rstrip()
    out: list[str] = []
    for paragraph in text.split("\n"):
        pieces = paragraph.split(sep)
        line = ""
        for i, piece in enumerate(pieces):
            end = "" if i == len(pieces) - 1 else tail
            joined = f"{line}{sep}{piece}" if line else piece
            if line and len(joined + end) > width:
                out.append(line + tail)
                line = piece
            else:
                line = joined
        out.append(line)
    return "\n".join(out)


def shorten_middle(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters by an ellipsis in its middle, both ends kept.

    ``shorten_middle("mala[step_size=0.35,num_samples=200][1]", 24)`` gives
    ``"mala[step_siz…s=200][1]"``: a stage name keeps its source and its replicate index.
    Text that fits is returned as it is; ``width`` below 3 is taken as 3.
    """
    width = max(3, width)
    if len(text) <= width:
        return text
    head = (width - 1 + 1) // 2
    tail = width - 1 - head
    return text[:head] + "\N{HORIZONTAL ELLIPSIS}" + (text[-tail:] if tail else "")


def _longest_piece(text: str, sep: str) -> int:
    """The longest unbreakable run of ``text`` for :func:`wrap_items` (its separator tail included)."""
    tail = len(sep.rstrip())
    return max((len(p) + tail for line in text.split("\n") for p in line.split(sep)), default=0)


def _fit_pieces(text: str, width: int, sep: str) -> str:
    """``text`` with each name of a list longer than ``width`` shortened in its middle.

    The pieces between ``sep`` are names (:func:`shorten_middle`), so that no name is broken
    across lines. Free text (``sep`` a space) is returned as it is: a long word there is folded.
    """
    if sep == " ":
        return text
    tail = len(sep.rstrip())
    return "\n".join(
        sep.join(shorten_middle(p, width - tail) for p in line.split(sep)) for line in text.split("\n")
    )


def _print_stacked(
    con: Console, keys: Sequence[str], listed: str, rows: Sequence[tuple[list[str], str]], sep: str
) -> None:
    """A table part whose list of names does not fit beside its key columns, stacked.

    Each row's key cells are on one line and its list below, indented by two and wrapped at the
    console's width only between names (a name longer than a whole line is shortened in its middle).
    """
    width = max(20, con.width - 3)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, expand=False)
    table.add_column(escape(f"{'  '.join(keys)} (its {listed} indented below)"), no_wrap=True)
    for key_cells, text in rows:
        wrapped = wrap_items(_fit_pieces(text, width, sep), width, sep) if text else ""
        body = "".join(f"\n  {line}" for line in wrapped.split("\n")) if wrapped else ""
        table.add_row(escape("  ".join(key_cells) + body))
    print_stripped(con, table)


def print_stripped(con: Console, renderable: Any) -> None:
    """Print a rich renderable (a table) without the spaces rich pads each line with.

    The renderable is rendered to lines at the console's width and each line's trailing
    whitespace is dropped (styles are kept), so that copied or redirected output carries no
    trailing spaces.
    """
    from rich.segment import Segment, Segments

    segments: list[Segment] = []
    for line in con.render_lines(renderable, con.options, pad=False, new_lines=False):
        while line and not line[-1].control and not line[-1].text.rstrip():
            line.pop()
        if line and not line[-1].control:
            last = line[-1]
            line[-1] = Segment(last.text.rstrip(), last.style)
        segments += [*line, Segment.line()]
    con.print(Segments(segments))


def print_text(con: Console, text: str) -> None:
    """Print plain ``text`` (no markup, no emoji codes) wrapped at words to the console's width.

    Lines carry no trailing spaces (:func:`print_stripped`); a word longer than a line is folded.
    """
    print_stripped(con, Text(text))


def print_table(
    con: Console,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    title: str | Text | None = None,
    key_columns: int = 1,
    wrap: str | None = None,
    wrap_at: str = " ",
    right: Sequence[str] = (),
    one_line: bool = False,
    drop_empty: bool = True,
) -> None:
    """Print ``rows`` under ``columns``, split into several tables if they do not fit the console.

    Headers, title and cells are plain text (markup in them is escaped: ``mala[alpha=0.5]``
    prints as written); give a :class:`rich.text.Text` title for a styled one. Lines carry no
    trailing spaces (:func:`print_stripped`).

    Args:
        con: where to print.
        columns: the header of each column.
        rows: the cells (converted with :func:`format_value`).
        title: printed above the (first) table.
        key_columns: leading columns repeated in every part when the table is split.
        wrap: the one column of free text that may wrap (only at ``wrap_at``) and takes the room
            left in its part; every other column is printed on one line, never folded.
        wrap_at: where the ``wrap`` column may break: ``" "`` (words) or ``", "`` (a list of
            names, which are never broken across lines: when the longest does not fit beside
            the key columns, each row's list is printed below its keys, indented).
        right: columns to right-align (numbers).
        one_line: cut the free-text column to one line ending in "…" instead of wrapping it.
            On a console too narrow for the free text's usual 20 characters, it is cut (with
            ``one_line``) or wraps (long words folded) at the room left, rather than the lines
            being cropped.
        drop_empty: leave out columns that are empty in every row and, in each part, rows whose
            non-key cells are all empty.
    """
    cells = [[format_value(v) for v in row] for row in rows]
    if drop_empty and cells:
        keep = [i for i in range(len(columns)) if i < key_columns or any(r[i] != "" for r in cells)]
        if len(keep) < len(columns):
            wrap = wrap if wrap is None or columns.index(wrap) in keep else None
            columns = [columns[i] for i in keep]
            cells = [[r[i] for i in keep] for r in cells]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    wrap_i = columns.index(wrap) if wrap is not None else None
    natural = list(widths)
    if wrap_i is not None:  # for splitting, free text counts at its narrowest: 20, or its longest name
        longest = 0 if one_line else max([0, *(_longest_piece(r[wrap_i], wrap_at) for r in cells)])
        widths[wrap_i] = max(len(columns[wrap_i]), min(natural[wrap_i], max(20, longest)))
    groups = chunk_columns(widths, key_columns, con.width)
    for part, group in enumerate(groups):
        label: str | Text | None = title
        if isinstance(title, str):
            label = escape(title if len(groups) == 1 else f"{title} ({part + 1}/{len(groups)})")
        elif title is not None and len(groups) > 1:
            label = title + f" ({part + 1}/{len(groups)})"
        if label is not None:  # above the table, at the console's width (a table's title wraps at its own)
            con.print(label, style="table.title")
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False, expand=False)
        wrap_width, narrow = 0, False
        if wrap_i in group:  # the room this part leaves (a line is sum(widths) + 3 * columns - 1)
            room = con.width + 1 - sum(widths[i] + 3 for i in group if i != wrap_i) - 3
            wrap_width = max(widths[wrap_i], min(natural[wrap_i], room))
            if room < wrap_width:  # a narrow console: wrap (or cut with "…") narrower, never crop
                wrap_width, narrow = max(len(columns[wrap_i]), room), not one_line
        if narrow and wrap_i is not None and wrap_at != " ":  # names beside the keys would break: list below
            keys = [i for i in group if i != wrap_i]
            empty = [drop_empty and all(r[i] == "" for i in group[key_columns:]) for r in cells]
            stacked = [([r[i] for i in keys], r[wrap_i]) for r, e in zip(cells, empty, strict=True) if not e]
            _print_stacked(con, [columns[i] for i in keys], columns[wrap_i], stacked, wrap_at)
            continue
        for i in group:
            if i == wrap_i:
                table.add_column(
                    escape(columns[i]),
                    overflow="ellipsis" if one_line else "fold",
                    no_wrap=not narrow,  # narrow: a word longer than the column is folded, not cut
                    width=wrap_width,
                )
            else:
                table.add_column(
                    escape(columns[i]),
                    no_wrap=True,
                    min_width=widths[i],
                    justify="right" if columns[i] in right else "left",
                )
        for row in cells:
            if drop_empty and len(group) > key_columns and all(row[i] == "" for i in group[key_columns:]):
                continue
            shown = [
                wrap_items(row[i], wrap_width, wrap_at) if i == wrap_i and not one_line else row[i]
                for i in group
            ]
            table.add_row(*(escape(c) for c in shown))
        print_stripped(con, table)


#: rows of the plan table ``quadriga run`` prints before running (a screenful; the rest summarised)
PLAN_ROWS = 20


def plan_rows(
    rows: Sequence[Sequence[str]], limit: int = PLAN_ROWS
) -> tuple[list[Sequence[str]], str | None]:
    """The plan rows to print and a one-line summary of those left out (None when all fit).

    Args:
        rows: :meth:`quadriga.pipeline.Pipeline.describe` rows, ``(table, component, kind,
            inputs)`` with ``table`` as ``"task.NAME"`` or ``"stage.NAME"``.
        limit: the most rows printed, the summary line included.

    Returns:
        ``(shown, summary)``: the first ``limit - 1`` rows and, e.g., ``"... and 40 more stages
        (matrix x repeat) of mala, tv"`` naming how the left-out tables were expanded (a
        ``matrix``, a ``repeat``, both) and the tables they came from; all rows and None when
        there are at most ``limit``.
    """
    if len(rows) <= limit:
        return list(rows), None
    shown, rest = list(rows[: limit - 1]), rows[limit - 1 :]
    kinds: dict[str, int] = {}
    sources: dict[str, None] = {}
    matrix = repeat = False
    for row in rest:
        section, _, name = str(row[0]).partition(".")
        kinds[section] = kinds.get(section, 0) + 1
        try:
            parsed = parse_stage_name(name)
        except Exception:  # a name outside the grammar is named as it is
            sources[name] = None
            continue
        sources[parsed.source] = None
        matrix = matrix or bool(parsed.point)
        repeat = repeat or parsed.replicate is not None
    counts = ", ".join(
        f"{n} more {section}{'' if n == 1 else 's'}" for section, n in sorted(kinds.items(), reverse=True)
    )
    how = " x ".join(w for w, on in (("matrix", matrix), ("repeat", repeat)) if on)
    names = list(sources)
    named = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return shown, f"... and {counts}{f' ({how})' if how else ''} of {named}"


def pivot(
    values: Mapping[str, Any], stages: Any = ()
) -> tuple[list[str], list[str], dict[tuple[str, str], Any]]:
    """Split ``{"subject/metric": value}`` into subjects, metrics and cells.

    The subject is the longest part before a ``/`` that is one of ``stages`` (the run's stage
    names), else everything before the last ``/`` (``"rwm"``, ``"mala[0]"``, ``"a/b"``):
    :func:`~quadriga.stage_names.split_subject_key`, so that ``"fit/flowrl/mean_reward"`` is
    subject ``fit``, metric ``flowrl/mean_reward`` when ``fit`` is a stage. A key without ``/`` is
    a metric of the stage itself (subject ``""``). Order of first appearance is kept.

    Returns:
        ``(subjects, metrics, {(subject, metric): value})``.
    """
    subjects: list[str] = []
    metrics: list[str] = []
    cells: dict[tuple[str, str], Any] = {}
    for key, value in values.items():
        subject, metric = split_subject_key(key, stages)
        if subject not in subjects:
            subjects.append(subject)
        if metric not in metrics:
            metrics.append(metric)
        cells[(subject, metric)] = value
    return subjects, metrics, cells


def across_seed_rows(values: Mapping[str, Any], stages: Any = ()) -> tuple[dict[str, Any], list[list[Any]]]:
    """Split a stage's metrics into per-run values and across-seed aggregate rows.

    An evaluator that pools replicates writes, next to ``dqn[0]/auc`` ... ``dqn[4]/auc``, the
    aggregate ``dqn/auc_mean`` and ``dqn/auc_stderr`` (over seeds). A subject is an aggregate
    when replicate subjects ``<subject>[i]`` exist; its ``<metric>_mean`` / ``<metric>_stderr``
    keys become one row ``[subject, metric, n, mean, s.e.]``, ``n`` being the number of
    replicates that have ``metric`` (or all the subject's replicates, when they do not).

    Returns:
        ``(per-run values, aggregate rows)``; the rows are empty when nothing was pooled.
    """
    subjects, _, cells = pivot(values, stages)
    replicates: dict[str, list[str]] = {}
    for s in subjects:  # a replicate's subject: dqn[0], mala[step_size=0.1][2]
        if replicate_index(s) is not None:
            replicates.setdefault(replicate_base(s), []).append(s)
    per_run = {k: v for k, v in values.items() if split_subject_key(k, stages)[0] not in replicates}
    rows: dict[tuple[str, str], list[Any]] = {}
    for key, value in values.items():
        subject, metric = split_subject_key(key, stages)
        if subject not in replicates:
            continue
        column = 3
        for suffix, col in (("_mean", 3), ("_stderr", 4)):
            if metric.endswith(suffix):
                metric, column = metric[: -len(suffix)], col
                break
        reps = replicates[subject]
        have = [r for r in reps if (r, metric) in cells]
        row = rows.setdefault((subject, metric), [subject, metric, len(have or reps), "", ""])
        row[column] = value
    return per_run, list(rows.values())


def interval_notes(intervals: Mapping[str, Any]) -> list[str]:
    """How a stage's intervals were computed, one entry per distinct method and level.

    ``{"a/mse": {"method": "bootstrap percentile over 8 chains", "level": 0.95, ...}}`` gives
    ``["bootstrap percentile over 8 chains, 95%"]``.
    """
    notes: list[str] = []
    for ci in intervals.values():
        if isinstance(ci, Mapping):
            note = f"{ci.get('method', 'interval')}, {float(ci.get('level', 0.95)) * 100:g}%"
            if note not in notes:
                notes.append(note)
    return notes


def with_interval(value: Any, ci: Any) -> Any:
    """``value`` as ``"0.01234 [0.01, 0.015]"`` when ``ci`` holds its interval's ``low`` and ``high``."""
    if not isinstance(ci, Mapping) or "low" not in ci or "high" not in ci:
        return value
    return f"{format_value(value)} [{format_value(ci['low'])}, {format_value(ci['high'])}]"


def print_pivot(
    con: Console,
    values: Mapping[str, Any],
    *,
    title: str,
    intervals: Mapping[str, Any] | None = None,
    stages: Any = (),
) -> None:
    """Print a stage's metrics as one subject x metric table (metrics x subjects when that is narrower).

    Every value is shown; a table too wide for the console is split into parts (rows and columns
    empty in a part are left out). Aggregates over seeds (``dqn/auc_mean``, ``dqn/auc_stderr``
    next to ``dqn[0]/auc`` ...) go to a table of their own with the mean, its s.e. and ``n``
    (:func:`across_seed_rows`), so that no column mixes per-run and across-seed numbers. With
    ``n < 2`` the s.e. is ``-`` (one run has none; the evaluator's ``_stderr`` of 0 is not shown),
    and a table whose rows all have one run has no s.e. column and says so in its title.
    A value with an interval (``intervals``, keyed as ``values``) shows it in its cell,
    ``0.0123 [0.0101, 0.0150]``, and how the intervals were computed is said once under the table.
    ``stages`` (the run's stage names) tells a subject from a metric holding a ``/`` (:func:`pivot`).
    """
    intervals = intervals or {}
    per_run, pooled = across_seed_rows(values, stages)
    pooled = [[*r[:4], "-"] if int(r[2]) < 2 else r for r in pooled]
    per_run = {k: with_interval(v, intervals.get(k)) for k, v in per_run.items()}
    subjects, metrics, cells = pivot(per_run, stages)
    if subjects:
        by_subject = [[s or "(stage)", *(cells.get((s, m), "") for m in metrics)] for s in subjects]
        by_metric = [[m, *(cells.get((s, m), "") for s in subjects)] for m in metrics]

        def parts(header: list[str], rows: list[list[Any]]) -> int:
            widths = [max([len(h), *(len(format_value(r[i])) for r in rows)]) for i, h in enumerate(header)]
            return len(chunk_columns(widths, 1, con.width))

        wide = ["subject", *metrics]
        tall = ["metric", *(s or "(stage)" for s in subjects)]
        label = f"{title}: per run" if pooled else title
        if parts(tall, by_metric) < parts(wide, by_subject):
            print_table(con, tall, by_metric, title=label, right=tall[1:])
        else:
            print_table(con, wide, by_subject, title=label, right=wide[1:])
        notes = interval_notes({k: v for k, v in intervals.items() if k in per_run})
        if notes:
            con.print(f"intervals: {escape('; '.join(notes))}", soft_wrap=False)
    if pooled and all(int(r[2]) < 2 for r in pooled):  # one run each: no standard error to promise
        print_table(
            con,
            ["configuration", "metric", "n", "mean"],
            [r[:4] for r in pooled],
            title=f"{title}: across seeds (one run each, so no s.e.)",
            key_columns=2,
            right=["n", "mean"],
        )
    elif pooled:
        print_table(
            con,
            ["configuration", "metric", "n", "mean", "s.e."],
            pooled,
            title=f"{title}: across seeds (mean of n runs, its s.e.)",
            key_columns=2,
            right=["n", "mean", "s.e."],
        )


def results_payload(
    results: Mapping[str, Any], run_dir: Any = None, status: str | None = None
) -> dict[str, Any]:
    """What ``--json`` prints for a run: ``{"dir", "status", "pipeline", "seed", "stages"}``."""
    out: dict[str, Any] = {"dir": str(run_dir) if run_dir is not None else None}
    out["status"] = status or results.get("status")
    out.update({k: v for k, v in results.items() if k != "status"})
    return out


#: rows of the stages table ``quadriga run`` prints after a run (a screenful; the rest summarised)
RESULT_ROWS = 40


def print_results(con: Console, results: Mapping[str, Any], *, limit: int = RESULT_ROWS) -> None:
    """Print a run's ``results.json`` dict: one table of stages, one pivot per evaluator.

    Each stage's line is its artifact's :meth:`~quadriga.artifacts.Artifact.headline` (samples
    give ``n x d`` and the acceptance rate, estimates their value and standard error, fitted
    models their last logged values); every metric of every evaluator is printed as a pivot of
    its :meth:`~quadriga.artifacts.Artifact.scalars` (subject x metric). The stages table has at
    most ``limit`` lines: beyond that its first ``limit - 1`` stages are printed and one line
    summarises the rest (as :func:`plan_rows` does), whose results are in ``results.json``.
    """
    from quadriga.artifacts import artifact_class

    stages: Mapping[str, Any] = results.get("stages", {})
    overview: list[list[Any]] = []
    figures: list[list[Any]] = []
    pivots: list[tuple[str, Any, Mapping[str, float], Any]] = []
    headline: dict[str, Any] = {}  # made only for the rows printed
    for stage, res in stages.items():
        cls = artifact_class(res)
        if cls.keyed_by_subject:
            pivots.append((stage, res.get("component", "evaluator"), cls.scalars(res), res.get("intervals")))
        else:
            headline[stage] = lambda cls=cls, res=res: cls.headline(res)
            overview.append([f"stage.{stage}", res.get("component", "")])
        for fig in res.get("figures", []):
            figures.append([stage, fig])
    if overview:
        shown, rest = plan_rows(overview, limit)
        names = [str(r[0])[len("stage.") :] for r in shown]
        print_table(
            con,
            ["stage", "component", "result"],
            [[n, r[1], headline[n]()] for n, r in zip(names, shown, strict=True)],
            title="stages",
            key_columns=2,
            wrap="result",
            wrap_at=", ",
        )
        if rest is not None:
            con.print(escape(f"{rest} (every stage's result is in the run directory's results.json)"))
    for stage, component, values, intervals in pivots:
        if values:
            title = stage if component == stage else f"{stage} ({component})"
            print_pivot(
                con,
                values,
                title=title,
                intervals=intervals if isinstance(intervals, Mapping) else None,
                stages=stages,
            )
    if figures:
        print_table(con, ["stage", "figure"], figures, title="figures")


def _interval_text(e: Mapping[str, Any]) -> str:
    """The interval cell of a summary row: ``[low, high]``, ``all equal`` or ``-`` (n < 2)."""
    if int(e["n"]) < 2:
        return "-"
    if _all_equal(e):
        return "all equal"
    return f"[{format_value(e['ci_low'])}, {format_value(e['ci_high'])}]"


def _method_text(e: Mapping[str, Any]) -> str:
    """How a row's interval was computed, in words (``none (constant data, n=4), 95%`` is said plainly)."""
    method = str(e.get("ci_method", "not recorded"))
    if _all_equal(e):
        return f"all equal: no interval, all {e['n']} values equal"
    return method


def _all_equal(e: Mapping[str, Any]) -> bool:
    """Whether a summary row's values were all equal (its ``ci_method`` says there is no interval)."""
    method = str(e.get("ci_method", ""))
    return method.startswith("none (constant") or (method.startswith("no interval") and "equal" in method)


def print_summary(con: Console, summary: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> None:
    """Print grouped results (rows of :func:`quadriga.summary.aggregate`) as fitting tables.

    One table per stage (one per stage and metric when that does not fit the console), one row
    per grid point, subject and metric with ``n``, the mean, its standard error and the interval,
    so that the numbers of a row are never split across table parts. With ``n < 2`` the
    standard error and interval are ``-`` (one value has none). Sampler diagnostics that are 0
    in every run (:func:`quadriga.summary.constant_zero`) are left out, and said so in one line.
    How the intervals were computed is printed once under the tables.
    """
    from quadriga.summary import constant_zero, metric_parts

    zero = constant_zero(summary)
    summary = [e for e in summary if (e["stage"], e["metric"]) not in zero]
    grid = [k.split(".")[-1] for k in keys]
    stages: dict[str, list[list[Any]]] = {}
    methods: list[str] = []
    for e in summary:
        subject, metric = metric_parts(e)  # a metric named "flowrl/mean_reward" stays whole
        small = int(e["n"]) < 2
        stages.setdefault(str(e["stage"]), []).append(
            [
                *(e.get(k) for k in keys),
                subject or "-",
                metric,
                e["n"],
                format_value(e["mean"]),
                "-" if small else f"{e['stderr']:.2g}",
                _interval_text(e),
            ]
        )
        if not small and _method_text(e) not in methods:
            methods.append(_method_text(e))
    for stage, rows in stages.items():
        _print_stage_rows(con, stage, rows, grid)
    say = lambda markup: print_stripped(con, Text.from_markup(markup))  # noqa: E731 (wrapped, no trailing spaces)
    say("each row: n values (one per seed or run), their mean, its standard error and interval.")
    if zero:
        names = sorted({m for _, m in zero})
        where = ", ".join(sorted({st for st, _ in zero}))
        say(escape(f"left out: {', '.join(names)}, 0 in every run of {where} (kept in summary.csv)."))
    if methods:
        methods.sort(key=lambda m: m.startswith("all equal"))  # the computed intervals first
        say("intervals: " + escape("; ".join(methods)))
    pairs = [str(e.get("ci_method", "")) for e in summary if int(e["n"]) == 2]
    if any("bootstrap" in m.lower() for m in pairs):
        from quadriga.stats import small_sample_note

        say(f"[yellow]note[/]: bootstrap intervals at {small_sample_note(2)}.")
    elif any(m.startswith("Student t") for m in pairs):
        from scipy import stats as scipy_stats

        t = float(scipy_stats.t.ppf(0.975, 1))
        say(
            f"[yellow]note[/]: at n = 2 a Student t interval has 1 degree of freedom: mean ± {t:.1f} "
            "s.e. at 95%; more seeds narrow it."
        )


def _print_stage_rows(con: Console, stage: str, rows: list[list[Any]], grid: list[str]) -> None:
    """Print one stage's summary rows (grid values, subject, metric, n, mean, s.e., interval) as tables.

    A sampler's diagnostics (no subject) drop the subject column; rows too wide for the console
    are split into one table per metric, so that the numbers of a row are never split.
    """
    columns = [*grid, "subject", "metric", "n", "mean", "s.e.", "interval"]
    numbers = ["n", "mean", "s.e."]
    # compare's run labels ("my-pipeline (mala.step_size=0.3)") wrap at spaces, not split the table
    wrap = "source" if "source" in grid else None
    if all(r[len(grid)] == "-" for r in rows):  # a sampler's diagnostics: no subject column
        no_subject = [c for c in columns if c != "subject"]
        stage_rows = [r[: len(grid)] + r[len(grid) + 1 :] for r in rows]
        print_table(
            con,
            no_subject,
            stage_rows,
            title=f"stage {stage}",
            key_columns=len(grid) + 1,
            right=numbers,
            wrap=wrap,
        )
        return
    widths = [max([len(c), *(len(format_value(r[i])) for r in rows)]) for i, c in enumerate(columns)]
    if wrap:  # the labels may wrap: count the longest word of each
        at = columns.index("source")
        labels = ["source", *(str(r[at]) for r in rows)]
        widths[at] = max(len(word) for text in labels for word in text.split())
    if sum(widths) + 3 * len(widths) - 1 <= con.width:  # one rich table line
        print_table(
            con, columns, rows, title=f"stage {stage}", key_columns=len(grid) + 2, right=numbers, wrap=wrap
        )
        return
    by_metric: dict[str, list[list[Any]]] = {}
    for r in rows:
        by_metric.setdefault(str(r[len(grid) + 1]), []).append(r[: len(grid) + 1] + r[len(grid) + 2 :])
    for metric, part in by_metric.items():
        print_table(
            con,
            [*grid, "subject", "n", "mean", "s.e.", "interval"],
            part,
            title=f"stage {stage}: {metric}",
            key_columns=len(grid) + 1,
            right=numbers,
            wrap=wrap,
        )
