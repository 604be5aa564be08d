"""``quadriga run``: check a pipeline, then run it with progress bars and a results table."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from quadriga.cli._common import (
    Formatter,
    Subparsers,
    add_common_options,
    console,
    name_completer,
    registry_for,
)
from quadriga.errors import QuadrigaError

__all__ = ["EPILOG", "add_parser", "cmd_run"]

EPILOG = """\
examples:
  quadriga run cartpole-minto                       a registered pipeline, by name
  quadriga run my-pipeline.toml --seed 3            a pipeline file
  quadriga run srmc-vs-mala --set stage.mala-gauss.step_size=0.1 --set pipeline.seed=1
  quadriga run gmm-mcmc-baselines --check           check the pipeline, run nothing
  quadriga run cartpole-minto --resume runs/cartpole-minto/20260101T000000Z

a pipeline file:
  [pipeline]
  name = "my-pipeline"
  seed = 0
  [task.gmm]
  use = "gaussian-mixture"
  preset = "4-mode-2d"
  [stage.mala]
  use = "mala"
  inputs = { target = "gmm" }
  step_size = 0.1
  [stage.compare]
  use = "energy-distance"
  inputs = { subject = ["mala"], reference = "gmm" }
"""

#: what a progress display gives each stage: ``on_update(completed, total, description)``
OnUpdate = Callable[[float, "float | None", "str | None"], None]


def add_parser(sub: Subparsers) -> None:
    """Add ``run`` to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser(
        "run",
        help="check and run a pipeline",
        formatter_class=Formatter,
        description="Check a pipeline (every name, parameter, type and input) and run it. "
        "Results go to runs/<pipeline>/<UTC timestamp>/ unless --out is given.",
        epilog=EPILOG,
    )
    p.add_argument(
        "pipeline", metavar="NAME_OR_PATH", help="a registered pipeline name or a TOML file"
    ).completer = name_completer("pipeline")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a key, e.g. stage.mala-gauss.step_size=0.1 (value parsed as TOML); repeatable",
    )
    p.add_argument("--seed", type=int, help="root seed (replaces [pipeline] seed)")
    p.add_argument("--out", type=Path, help="run directory (default runs/<pipeline>/<timestamp>)")
    p.add_argument(
        "--resume", type=Path, metavar="RUN_DIR", help="re-run only the unfinished stages of a run"
    )
    p.add_argument("--check", action="store_true", help="check the pipeline and print it; run nothing")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_common_options(p)
    p.set_defaults(func=cmd_run)


@contextlib.contextmanager
def rich_progress(
    con: Console, enabled: bool
) -> Iterator[Callable[[str], contextlib.AbstractContextManager[OnUpdate]]]:
    """A rich progress display; yields ``display(stage)``, a context manager giving the stage's ``on_update``.

    Args:
        con: where to print.
        enabled: draw bars; when false only one line per finished or stopped stage is printed.
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    progress = Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=con,
        disable=not enabled,
        transient=False,
    )

    @contextlib.contextmanager
    def display(stage: str) -> Iterator[OnUpdate]:
        task = progress.add_task(stage, total=None)

        def on_update(completed: float, total: float | None, description: str | None) -> None:
            label = stage if not description or description == stage else f"{stage}: {description}"
            progress.update(task, completed=completed, total=total, description=label)

        try:
            yield on_update
        except BaseException:
            progress.update(task, description=f"{stage} (stopped)")
            if not enabled:
                con.print(f"  stage [bold]{escape(stage)}[/] stopped")
            raise
        t = progress.tasks[task] if task < len(progress.tasks) else None
        if t is not None and t.total is None:
            progress.update(task, total=1, completed=1)
        elif t is not None:
            progress.update(task, completed=t.total)
        if not enabled:
            con.print(f"  stage [bold]{escape(stage)}[/] done")

    with progress:
        yield display


def cmd_run(args: argparse.Namespace) -> int:
    """``quadriga run``: check a pipeline, then run it with progress bars and a results table.

    Returns:
        0 when the run finished (or ``--check`` found the pipeline valid), 130 when interrupted,
        otherwise the failing error's exit code.

    Raises:
        ConfigError: the pipeline is invalid (before anything runs).
    """
    from quadriga.pipeline import load_pipeline
    from quadriga.runs import execute

    reg = registry_for(args)
    con = console()
    if args.resume is not None:
        from quadriga.api import load_resumed
        from quadriga.runs import resume_plan

        pipeline = load_resumed(args.pipeline, args.resume, reg, overrides=args.overrides, seed=args.seed)
        reloaded, rerun = resume_plan(args.resume)
        con.print(
            f"resuming {args.resume}: reloading {', '.join(reloaded) or 'no stage'}"
            + (f"; re-running {', '.join(rerun)} (trained models are not reloaded)" if rerun else "")
        )
    else:
        pipeline = load_pipeline(args.pipeline, reg, overrides=args.overrides, seed=args.seed)
    table = Table(title=f"pipeline {pipeline.name} (seed {pipeline.seed})")
    for col in ("table", "component", "kind", "inputs"):
        table.add_column(col, overflow="fold")
    for row in pipeline.describe():
        table.add_row(*(escape(c) for c in row))
    con.print(table)
    if args.check:
        con.print("[green]pipeline is valid[/] (nothing was run).")
        return 0
    os.environ.setdefault("MPLBACKEND", "Agg")
    show = not args.quiet and con.is_terminal
    try:
        with rich_progress(con, show) as display:
            result = execute(pipeline, reg, out=args.out, resume=args.resume, argv=sys.argv, display=display)
    except KeyboardInterrupt as exc:
        run_dir = getattr(exc, "run_dir", "RUN_DIR")
        con.print(
            f"[yellow]interrupted[/]: finished stages are saved in {run_dir}; continue with "
            f"`quadriga run {args.pipeline} --resume {run_dir}`."
        )
        return 130
    for w in result.warnings:
        con.print(f"[yellow]warning[/]: {escape(w)}")
    print_results(con, result.results)
    con.print(f"run directory: [bold]{result.dir}[/]")
    if result.status != "finished":
        err = result.error
        debug = getattr(args, "debug", False)
        con.print(
            f"[red]run {result.status}[/]: {escape(str(err))}\nFinished stages are saved; after a fix, "
            f"`quadriga run {args.pipeline} --resume {result.dir}` re-runs only the rest."
            + ("" if debug else " (details: error.txt in the run directory)")
        )
        if debug and err is not None:
            raise err
        return err.exit_code if isinstance(err, QuadrigaError) else 1
    return 0


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def print_results(con: Console, results: dict[str, Any]) -> None:
    """Print a run's ``results.json`` dict as one table (at most 12 metrics per stage)."""
    table = Table(title="results")
    for col in ("stage", "metric", "value"):
        table.add_column(col, overflow="fold")
    for stage, res in results.get("stages", {}).items():
        if res.get("type") == "Metrics":
            items = list(res.get("values", {}).items())
            grouped = [
                (k, v) for k, v in items if "/" in k and k.split("/")[0] not in results.get("stages", {})
            ]
            shown = grouped if grouped and len(items) > 12 else items  # summaries per component first
            for key, value in shown[:12]:
                table.add_row(stage, escape(key), _fmt(value))
            if len(items) > len(shown[:12]):
                table.add_row(stage, f"... {len(items) - len(shown[:12])} more", "see results.json")
        elif res.get("type") == "Estimate":
            err = res.get("stderr")
            table.add_row(
                stage, "estimate", _fmt(res.get("value")) + (f" ± {_fmt(err)}" if err is not None else "")
            )
        elif res.get("type") == "Samples":
            acc = res.get("info", {}).get("acceptance_rate")
            table.add_row(
                stage,
                "samples",
                f"{res.get('num_samples')} x {res.get('dim')}"
                + (f", acceptance {_fmt(acc)}" if acc is not None else ""),
            )
        elif res.get("type") == "Fitted":
            table.add_row(
                stage,
                "fitted",
                ", ".join(f"{k}={_fmt(v)}" for k, v in list(res.get("final", {}).items())[:3]),
            )
        for fig in res.get("figures", []):
            table.add_row(stage, "figure", fig)
    if table.row_count:
        con.print(table)
