"""``quadriga compare``: re-print and re-plot saved runs or sweeps without re-running them."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from quadriga.cli._common import Formatter, Subparsers, add_common_options
from quadriga.cli._common import console as make_console
from quadriga.cli.output import print_json, print_summary
from quadriga.markup import escape

__all__ = ["add_parser", "cmd_compare"]


def add_parser(sub: Subparsers) -> None:
    """Add ``compare`` to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser(
        "compare",
        help="re-print and re-plot saved runs or sweeps without re-running",
        description="Read results from run or sweep directories and print the summary table; "
        "write summary.csv and summary.png to --out.",
        formatter_class=Formatter,
    )
    p.add_argument(
        "dirs",
        nargs="+",
        type=Path,
        metavar="RUN_OR_SWEEP_DIR",
        help="run directories (runs/NAME/TIMESTAMP) or sweep directories; several are compared",
    )
    p.add_argument(
        "--out", type=Path, default=Path("compare"), help="where to write the summary (default ./compare)"
    )
    p.add_argument("--metric", help="only metrics containing this text")
    p.add_argument(
        "--json", action="store_true", help="print the summary rows as JSON (files are still written)"
    )
    add_common_options(p)
    p.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    """``quadriga compare``: summary and figure from saved results, nothing re-run.

    Returns:
        0 when there were finished results to summarise, else 1.

    Raises:
        ConfigError: a directory does not exist, holds runs rather than being one, or holds no
            results; ``--out`` is a file, or holds files compare does not write (:func:`_check_out`).
    """
    from quadriga.rundir import make_dir
    from quadriga.summary import aggregate, drop_repeated_seeds, metric_label, write_outputs

    _check_out(args.out)
    os.environ.setdefault("MPLBACKEND", "Agg")
    console = make_console()
    all_rows: list[dict[str, Any]] = []
    keys: list[str] = []
    for d in args.dirs:
        rows, grid_keys = _rows_of(d)
        for note in _unfinished(d):
            console.print(f"note: {escape(note)}")  # wrapped at the console width
        for row in rows:
            row["source"] = d.name if len(args.dirs) > 1 else row.get("source", d.name)
        all_rows += rows
        keys += [k for k in grid_keys if k not in keys]
    if len(args.dirs) > 1:
        keys = ["source", *keys]
    if len(args.dirs) > 1:
        all_rows, dropped = drop_repeated_seeds(all_rows)
        for run, owner in dropped:
            console.print(
                f"note: {escape(run)} repeats the seed and settings of {escape(owner)}; counted once.",
                soft_wrap=True,
            )
    if args.metric:
        known = sorted({metric_label(r) for r in all_rows})
        all_rows = [r for r in all_rows if args.metric in metric_label(r)]
        if known and not all_rows:
            from quadriga.errors import ConfigError, suggest

            shown = ", ".join(known[:12]) + (f" and {len(known) - 12} more" if len(known) > 12 else "")
            raise ConfigError(
                f"no metric of these runs contains '{args.metric}'."
                f"{suggest(args.metric, known)} Their metrics: {shown}.",
                key="--metric",
            )
    if not all_rows:
        if args.json:
            print_json({"summary": [], "keys": keys})
        else:
            console.print("no finished results in these directories.")
        return 1
    summary = aggregate(all_rows, keys)
    replaced = args.out.is_dir() and any(args.out.iterdir())  # an earlier compare's files (_check_out)
    make_dir(args.out, "--out")
    table, figure = write_outputs(args.out, all_rows, summary, keys)
    if args.json:
        print_json({"keys": keys, "summary": summary, "table": str(table), "figure": str(figure)})
        return 0
    print_summary(console, summary, keys)
    console.print(f"table: {escape(str(table))}", soft_wrap=True)  # paths are never wrapped
    console.print(f"figure: {escape(str(figure))}", soft_wrap=True)
    if replaced:
        console.print(
            f"note: replaced an earlier compare's files in {escape(str(args.out))}; --out DIR keeps "
            "each comparison apart."
        )
    return 0


#: the files ``compare`` writes into ``--out`` (:func:`quadriga.summary.write_outputs`)
COMPARE_FILES = frozenset({"results.parquet", "results.csv", "summary.csv", "summary.png"})


def _check_out(out: Path) -> None:
    """Refuse an ``--out`` that is a file, or a directory holding anything but compare's own files.

    A directory holding only :data:`COMPARE_FILES` (an earlier compare's output) is written over;
    one holding anything else (a run, a sweep, a user's files) would get the summary mixed in.

    Raises:
        ConfigError: naming the directory's other entries and the fix (key ``--out``).
    """
    from quadriga.errors import ConfigError
    from quadriga.rundir import refuse_other_files

    if out.exists() and not out.is_dir():
        raise ConfigError(f"'{out}' is a file; give a directory.", key="--out")
    try:
        names = {p.name for p in out.iterdir()}
    except OSError:  # absent (or unreadable: make_dir says why it cannot be written)
        names = set()
    if not names <= COMPARE_FILES:
        refuse_other_files(out, "an earlier compare's output", "the summary")


def _rows_of(d: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The tidy rows and swept keys of a run or sweep directory ``d`` (:func:`quadriga.summary.load_rows`).

    Raises:
        ConfigError: ``d`` does not exist, holds runs rather than being one, or holds no results.
    """
    from quadriga.errors import ConfigError
    from quadriga.rundir.loaded import is_run
    from quadriga.summary import load_rows

    if not d.exists():
        raise ConfigError(f"'{d}' does not exist.")
    if d.is_dir() and not is_run(d) and not (d / "sweep.json").exists():
        children = sorted(c for c in d.iterdir() if is_run(c))
        if children:
            raise ConfigError(
                f"'{d}' holds runs rather than being one; pass them, e.g. `quadriga compare {d}/*`.",
            )
    try:
        return load_rows(d)
    except FileNotFoundError as exc:
        raise ConfigError(
            f"{exc}. Pass run directories (runs/NAME/TIMESTAMP) or sweep directories."
        ) from None


def _unfinished(d: Path) -> list[str]:
    """One line for a run directory, or the runs of a sweep, not finished (their states as read now).

    A run recorded as ``running`` whose process is gone reads as ``interrupted``
    (:meth:`quadriga.rundir.RunDir.read_status`), so a killed run is never shown as running.
    """
    from quadriga.rundir import RunDir
    from quadriga.rundir.loaded import is_run
    from quadriga.summary import sweep_runs

    if (d / "sweep.json").is_file():
        runs = sweep_runs(d)
        left = [r for r in runs if r["status"] != "finished"]
        if not left:
            return []
        counts: dict[str, int] = {}
        for r in left:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        states = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
        done = len(runs) - len(left)
        return [f"{d}: {done} of {len(runs)} runs finished ({states}); only finished runs are compared."]
    if is_run(d) and (d / "status.json").is_file():
        record = RunDir(d).read_status()
        if record.status != "finished":
            why = f": {record.error.rstrip('.')}" if record.error else ""  # one full stop
            return [f"{d} is {record.status}{why}. Its finished stages are compared."]
    return []
