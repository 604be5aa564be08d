"""The ``sweep``, ``compare`` and ``new`` subcommands.

Kept apart from :mod:`quadriga.cli` so that each one's modules are imported only when it runs.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["EXTENSION_COMMANDS", "add_extension_commands", "cmd_compare", "cmd_sweep", "print_summary"]

EXTENSION_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {}

SWEEP_EPILOG = """\
examples:
  quadriga sweep gmm-mcmc-baselines --seeds 0:10
  quadriga sweep srmc-vs-mala --seeds 0:5 --grid stage.sr1-gauss.alpha=0.5,1,2 --workers 2
  quadriga sweep cartpole-minto --seeds 0:10 --backend ray --address auto
Running the same command again skips the runs that finished (resume).
"""


def add_extension_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``sweep``, ``compare`` and ``new`` to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser(
        "sweep",
        help="run a pipeline over seeds and parameter grids; one table and plot",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=SWEEP_EPILOG,
        description="Run every combination of --grid values times --seeds, each a normal run "
        "in its own directory, locally or on Ray; then write results.parquet (or .csv), "
        "summary.csv and summary.png.",
    )
    p.add_argument("pipeline", metavar="NAME_OR_PATH")
    p.add_argument("--seeds", default="0:3", help="START:STOP or a,b,c (default 0:3)")
    p.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="KEY=V1,V2,...",
        help="values to sweep, e.g. stage.srmc.alpha=0.5,1,2; repeatable (Cartesian product)",
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override applied to every run; repeatable",
    )
    p.add_argument("--backend", choices=["local", "ray"], default="local")
    p.add_argument("--workers", type=int, help="parallel runs (default: number of CPU cores)")
    p.add_argument("--address", help="Ray cluster address (default: start a local Ray instance)")
    p.add_argument("--out", type=Path, help="sweep directory (default sweeps/<pipeline>-<hash>)")
    common(p)
    EXTENSION_COMMANDS["sweep"] = cmd_sweep

    p = sub.add_parser(
        "compare",
        help="re-print and re-plot saved runs or sweeps without re-running",
        description="Read results from run or sweep directories and print the summary table; "
        "write summary.csv and summary.png to --out.",
    )
    p.add_argument("dirs", nargs="+", type=Path, metavar="RUN_OR_SWEEP_DIR")
    p.add_argument(
        "--out", type=Path, default=Path("compare"), help="where to write the summary (default ./compare)"
    )
    p.add_argument("--metric", help="only metrics containing this text")
    common(p)
    EXTENSION_COMMANDS["compare"] = cmd_compare

    from quadriga.scaffold import add_new_command

    add_new_command(sub, common)


def print_summary(
    console: Any, summary: list[dict[str, Any]], keys: list[str], metric: str | None = None
) -> None:
    """Print the grouped summary as a rich table."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="summary (mean over seeds, standard error, bootstrap 95% interval)")
    for col in [*[k.split(".")[-1] for k in keys], "stage", "metric", "n", "mean", "s.e.", "95% interval"]:
        table.add_column(col, overflow="fold")
    for e in summary:
        if metric and metric not in e["metric"]:
            continue
        table.add_row(
            *[escape(str(e.get(k))) for k in keys],
            escape(e["stage"]),
            escape(e["metric"]),
            str(e["n"]),
            f"{e['mean']:.4g}",
            f"{e['stderr']:.2g}",
            f"[{e['ci_low']:.4g}, {e['ci_high']:.4g}]",
        )
    console.print(table)


def cmd_sweep(args: argparse.Namespace) -> int:
    """``quadriga sweep``: run, aggregate, print and plot."""
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from quadriga.sweep import parse_grid, parse_seeds, run_sweep

    os.environ.setdefault("MPLBACKEND", "Agg")
    console = Console(highlight=False)
    seeds = parse_seeds(args.seeds)
    grids = [parse_grid(g) for g in args.grid]
    progress = Progress(
        TextColumn("[bold]sweep"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not console.is_terminal,
    )
    state: dict[str, Any] = {}

    def on_start(todo: int, finished: int) -> None:
        state["task"] = progress.add_task("sweep", total=todo)
        if finished:
            console.print(f"{finished} run(s) already finished: skipped (resume)")

    def on_done(outcome: dict[str, Any]) -> None:
        ok = outcome["status"] == "finished"
        secs = f" after {outcome['seconds']:.1f} s" if outcome.get("seconds") else ""
        if ok:
            console.print(f"  {outcome['run_id']} [green]finished[/]{secs}")
        else:
            console.print(
                f"  {outcome['run_id']} [red]{outcome['status']}[/]{secs}: {escape(str(outcome.get('error')))} "
                f"(log: runs/{outcome['run_id']}/log.txt)"
            )
        progress.advance(state["task"])

    with progress:
        result = run_sweep(
            args.pipeline,
            seeds=seeds,
            grids=grids,
            fixed=args.overrides,
            backend=args.backend,
            workers=args.workers,
            address=args.address,
            out=args.out,
            on_start=on_start,
            on_done=on_done,
        )
    print_summary(console, result.summary, [k for k, _ in grids])
    failed = [r for r in result.runs if r["status"] != "finished"]
    console.print(
        f"sweep directory: [bold]{result.dir}[/]  table: {result.table_path}  figure: {result.figure_path}"
    )
    if failed:
        console.print(
            f"[red]{len(failed)} of {len(result.runs)} runs failed[/]; logs are in each run's log.txt. "
            "Run the same command again to retry only those."
        )
        return 1
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """``quadriga compare``: summary and figure from saved results, nothing re-run."""
    from rich.console import Console

    from quadriga.errors import ConfigError
    from quadriga.summary import aggregate, load_rows, write_outputs

    os.environ.setdefault("MPLBACKEND", "Agg")
    console = Console(highlight=False)
    all_rows: list[dict[str, Any]] = []
    keys: list[str] = []
    for d in args.dirs:
        if not d.exists():
            raise ConfigError(f"'{d}' does not exist.", key="compare")
        if d.is_dir() and not (d / "results.json").exists() and not (d / "sweep.json").exists():
            children = sorted(c for c in d.iterdir() if (c / "results.json").exists())
            if children:
                raise ConfigError(
                    f"'{d}' holds runs rather than being one; pass them, e.g. `quadriga compare {d}/*`.",
                    key="compare",
                )
        try:
            rows, grid_keys = load_rows(d)
        except FileNotFoundError as exc:
            raise ConfigError(
                f"{exc}. Pass run directories (runs/NAME/TIMESTAMP) or sweep directories."
            ) from None
        for row in rows:
            row["source"] = d.name if len(args.dirs) > 1 else row.get("source", d.name)
        all_rows += rows
        keys += [k for k in grid_keys if k not in keys]
    if len(args.dirs) > 1:
        keys = ["source", *keys]
    if args.metric:
        all_rows = [r for r in all_rows if args.metric in r["metric"]]
    if not all_rows:
        console.print("no finished results in these directories.")
        return 1
    summary = aggregate(all_rows, keys)
    print_summary(console, summary, keys)
    args.out.mkdir(parents=True, exist_ok=True)
    table, figure = write_outputs(args.out, all_rows, summary, keys)
    console.print(f"table: {table}  figure: {figure}")
    return 0
