"""``quadriga sweep``: run a pipeline over seeds and parameter grids; one table and one plot."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from quadriga.cli._common import Formatter, Subparsers, add_common_options, name_completer
from quadriga.markup import escape

__all__ = ["EPILOG", "add_parser", "cmd_sweep", "header_lines", "print_summary"]

EPILOG = """\
examples:
  quadriga sweep gmm-mcmc-baselines --seeds 0:10
  quadriga sweep srmc-vs-mala --seeds 0:5 --workers 2 \\
      --grid stage.mala-gauss.step_size=0.02,0.05,0.1
  quadriga sweep cartpole-minto --seeds 0:10 --backend ray --address auto
  quadriga sweep gmm-mcmc-baselines --seeds 0:20 --backend submitit \\
      --max-jobs 8 --slurm partition=cpu --slurm time=30 \\
      --slurm cpus_per_task=2 --slurm mem=4G
Running the same command again skips the runs that finished (resume).
"""


def add_parser(sub: Subparsers) -> None:
    """Add ``sweep`` to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser(
        "sweep",
        help="run a pipeline over seeds and parameter grids; one table and plot",
        formatter_class=Formatter,
        epilog=EPILOG,
        description="Run every combination of --grid values times --seeds, each a normal run "
        "in its own directory, locally, on Ray or as submitit jobs (SLURM); then write results.parquet "
        "(or .csv), summary.csv and summary.png.",
    )
    p.add_argument(
        "pipeline", metavar="NAME_OR_PATH", help="a registered pipeline name or a TOML file"
    ).completer = name_completer("pipeline")
    p.add_argument(
        "--seeds",
        default="0:3",
        action=_GivenOnce,
        help="START:STOP or a,b,c (default 0:3; at most 10000 seeds)",
    )
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
    p.add_argument(
        "--backend",
        choices=["local", "ray", "submitit"],
        default="local",
        help="local worker processes, Ray tasks, or submitit jobs: SLURM where srun is found, else "
        "submitit's local executor (pip install 'quadriga[slurm]')",
    )
    p.add_argument("--workers", type=int, help="parallel runs, >= 1 (default: number of CPU cores)")
    p.add_argument(
        "--max-jobs",
        type=int,
        metavar="N",
        help="submitit: at most N jobs at once (SLURM array parallelism; default: CPU cores with the "
        "local executor, 256 on SLURM)",
    )
    p.add_argument(
        "--slurm",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="submitit: an sbatch setting, e.g. partition=cpu, time=120 (minutes or HH:MM:SS; default "
        "60), cpus_per_task=2, mem=4G, gpus_per_node=1, account=..., qos=...; repeatable; logs go to "
        "<sweep dir>/submitit",
    )
    p.add_argument("--address", help="Ray cluster address (default: start a local Ray instance)")
    p.add_argument(
        "--out",
        type=Path,
        help="sweep directory (default sweeps/<pipeline>-<hash of the pipeline and --set values>: "
        "more seeds or grid values later reuse its finished runs)",
    )
    p.add_argument(
        "--with",
        dest="trackers",
        action="append",
        default=[],
        metavar="TRACKER",
        help="log every run with an installed tracker plugin, e.g. mlflow (one parent run, nested runs); "
        "local and submitit backends",
    )
    add_common_options(p)
    p.set_defaults(func=cmd_sweep)


def print_summary(
    console: Console, summary: list[dict[str, Any]], keys: list[str], metric: str | None = None
) -> None:
    """Print the grouped summary (one row per grid point, stage and metric) as a rich table.

    Each row states ``n`` (the values pooled, one per seed or run), the mean, its standard error
    and the interval with the way it was computed (``ci_method``, e.g.
    ``"Student t (one sample, df 3), 95%"``).

    Args:
        console: where to print.
        summary: rows of :func:`quadriga.summary.aggregate` (``n``, ``mean``, ``stderr``, ``ci_low``,
            ``ci_high``, ``ci_method``, ...).
        keys: the grid keys (one column each, named by the key's last part).
        metric: only rows whose metric name contains this text.
    """
    from quadriga.cli.output import print_summary as show

    show(console, [e for e in summary if not metric or metric in e["metric"]], keys)


def header_lines(name: str, plan: Any) -> list[str]:
    """The lines printed before a sweep's first run ends: runs, reuse, directory, backend.

    Args:
        name: the pipeline as given on the command line.
        plan: the :class:`quadriga.sweep.SweepPlan`.

    Returns:
        Plain text lines (no markup), e.g. ``sweep gmm: 10 runs, 2 already finished (reused), 8 to
        run`` (and ``, 1 resumed from its finished stages`` when runs to do continue an interrupted
        or failed attempt), ``  directory: sweeps/gmm-1a2b3c4d``, ``  backend: local, 2 runs at a
        time (worker processes)``; a submitit sweep adds ``  executor: ...`` (a SLURM job array, or
        submitit's local executor where there is no ``srun``). When earlier commands finished other
        runs in the directory (another grid or other seeds), a line after the first says that the
        table and summary include them: ``  summary: 8 runs in the directory: 2 to run, 6 finished
        earlier``.
    """
    reused = len(plan.reused)
    head = f"sweep {name}: {plan.total} run{'s' if plan.total != 1 else ''}"
    if reused:
        head += f", {reused} already finished (reused), {plan.todo} to run"
    resumed = getattr(plan, "resumed", 0)
    if resumed:
        head += f", {resumed} resumed from {'its' if resumed == 1 else 'their'} finished stages"
    earlier = len(getattr(plan, "earlier", []) or [])
    extra = []
    if earlier:
        extra.append(
            f"  summary: {plan.total + earlier} runs in the directory: {plan.todo} to run, "
            f"{reused + earlier} finished earlier"
        )
    at_most = "at most " if plan.backend != "local" else ""
    runs = f"{at_most}{plan.parallel} run{'s' if plan.parallel != 1 else ''} at a time"
    if plan.backend == "submitit":  # said once, on its own line: where the jobs go
        return [
            head,
            *extra,
            f"  directory: {plan.dir}",
            f"  backend: submitit, {runs}",
            f"  executor: {plan.executor}",
        ]
    return [head, *extra, f"  directory: {plan.dir}", f"  backend: {plan.backend}, {runs} ({plan.executor})"]


class _GivenOnce(argparse.Action):
    """An option that may be given once: a second ``--seeds`` is an error, not a silent override."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option: Any = None
    ) -> None:
        seen = getattr(namespace, f"_{self.dest}_given", None)
        if seen is not None:
            parser.error(
                f"{option} given twice ({seen} and {values}); give one list, e.g. {option} 0,1,2 "
                f"or {option} 0:10"
            )
        setattr(namespace, f"_{self.dest}_given", values)
        setattr(namespace, self.dest, values)


def cmd_sweep(args: argparse.Namespace) -> int:
    """``quadriga sweep``: run, aggregate, print and plot.

    Returns:
        0 when every run finished, else 1 (running the same command again retries only the failed runs).
    """
    from quadriga.cli._common import registry_for
    from quadriga.sweep import parse_grid, parse_seeds
    from quadriga.tracking import check as check_trackers

    reg = registry_for(args)
    trackers = check_trackers(args.trackers, reg)
    os.environ.setdefault("MPLBACKEND", "Agg")
    console = Console(highlight=False)
    seeds = parse_seeds(args.seeds)
    grids = [parse_grid(g) for g in args.grid]
    lines = _RunLines(console, str(args.pipeline))
    sweep = {
        "source": str(args.pipeline),
        "seeds": seeds,
        "grid": dict(grids),
        "fixed": list(args.overrides or []),
        "dir": None,
    }
    try:
        return _sweep(args, reg, trackers, console, seeds, grids, lines, sweep)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (kill, timeout, a batch time limit)
        code = int(getattr(exc, "exit_code", 130))
        what = "interrupted" if code == 130 else "terminated (SIGTERM)"
        err = Console(stderr=True, highlight=False)
        # two lines, each within 80 columns (the command line below is the one left unwrapped)
        err.print(f"[yellow]{what}[/]: the runs it started are recorded interrupted,")
        err.print("their finished stages kept. Resume by running the same sweep command again")
        err.print("(finished runs are skipped):")
        err.print(f"  quadriga {escape(shlex.join(sys.argv[1:]))}", soft_wrap=True)
        return code


def _sweep(
    args: argparse.Namespace,
    reg: Any,
    trackers: Any,
    console: Console,
    seeds: Any,
    grids: Any,
    lines: _RunLines,
    sweep: dict[str, Any],
) -> int:
    """The body of :func:`cmd_sweep`: run the sweep, call the trackers' hooks, print the result."""
    from quadriga.sweep import run_sweep
    from quadriga.tracking import held_notes, using

    with held_notes() as tracker_notes:
        with lines.progress, using(*trackers):
            hook_warnings = reg.call_hook("quadriga_sweep_start", sweep=sweep) if trackers else []
            result = run_sweep(
                args.pipeline,
                seeds=seeds,
                grids=grids,
                fixed=args.overrides,
                backend=args.backend,
                workers=args.workers,
                address=args.address,
                out=args.out,
                max_jobs=args.max_jobs,
                slurm=args.slurm,
                on_start=lines.on_start,
                on_done=lines.on_done,
                on_plan=lines.on_plan,
            )
            if trackers:
                status = "finished" if all(r["status"] == "finished" for r in result.runs) else "failed"
                hook_warnings += reg.call_hook(
                    "quadriga_sweep_end", sweep={**sweep, "dir": str(result.dir)}, status=status
                )
        for w in hook_warnings:
            console.print(f"[yellow]warning[/]: {escape(w)}")
        return _print_result(console, result, result.keys, args.backend, tracker_notes)


class _RunLines:
    """What ``quadriga sweep`` prints while it runs: the header, one line per ended run, the progress.

    On a terminal a rich bar counts the runs; without one a :class:`quadriga.progress.ProgressLines`
    line (``"  sweep: 3/12 runs (25%) ..."``) is written now and then instead. Its methods are the
    ``on_plan``, ``on_start`` and ``on_done`` callbacks of :func:`quadriga.sweep.run_sweep`.
    """

    def __init__(self, console: Console, name: str) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskID,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console, self.name = console, name
        self.progress = Progress(
            TextColumn("[bold]sweep"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            disable=not console.is_terminal,
        )
        self.tasks: list[TaskID] = []
        self.counts: list[Any] = []  # the ProgressLines, without a terminal
        self.done = [0, 0]  # runs finished, runs to do
        self.ended, self.total = 0, 0  # runs ended so far, runs to run: "[3/8]" on each run's line

    def on_plan(self, plan: Any) -> None:
        """Print the :func:`header_lines` of the :class:`quadriga.sweep.SweepPlan`."""
        for line in header_lines(self.name, plan):
            self.console.print(escape(line), soft_wrap=True)

    def on_start(self, todo: int, finished: int) -> None:
        """Start counting ``todo`` runs (``finished`` were reused)."""
        from quadriga.progress import ProgressLines

        self.total = todo
        self.tasks.append(self.progress.add_task("sweep", total=todo))
        if not self.console.is_terminal:
            write = lambda text: self.console.print(text, markup=False, soft_wrap=True)  # noqa: E731
            self.counts.append(ProgressLines("sweep", write, prefix="", unit="runs"))
            self.done[:] = [0, todo]
            self.counts[-1](0, todo, None)

    def on_done(self, outcome: dict[str, Any]) -> None:
        """One line for an ended run (with its error and log file when it failed); advance the count."""
        console = self.console
        self.ended += 1
        secs = f" after {outcome['seconds']:.1f} s" if outcome.get("seconds") else ""
        count = f"[{self.ended}/{self.total}]"
        if outcome["status"] == "finished":
            console.print(f"  {count} {escape(outcome['run_id'])} [green]finished[/]{secs}", soft_wrap=True)
        else:
            error = escape(str(outcome.get("error")))
            console.print(f"  {count} {escape(outcome['run_id'])} [red]{outcome['status']}[/]{secs}: {error}")
            console.print(f"    log: runs/{escape(outcome['run_id'])}/log.txt", soft_wrap=True)
        self.progress.advance(self.tasks[-1])
        if self.counts:
            self.done[0] += 1
            self.counts[-1](self.done[0], self.done[1], None)


def _print_result(console: Console, result: Any, keys: list[str], backend: str, notes: Any) -> int:
    """Print a finished sweep's summary table and where its files are; 1 when a run failed, else 0.

    ``notes`` prints what the trackers held back (where the sweep was logged) after the results.
    """
    print_summary(console, result.summary, keys)
    failed = [r for r in result.runs if r["status"] != "finished"]
    # paths are never wrapped: one per line, longer than the console if need be
    console.print(f"sweep directory: [bold]{escape(str(result.dir))}[/]", soft_wrap=True)
    console.print(f"table: {escape(str(result.table_path))}", soft_wrap=True)
    console.print(f"figure: {escape(str(result.figure_path))}", soft_wrap=True)
    if backend == "submitit":
        console.print(f"submitit logs: {escape(str(result.dir / 'submitit'))}", soft_wrap=True)
        console.print("(jobs.json there maps each run to its job and its stdout/stderr files)")
    notes()  # where the sweep was logged (MLflow's parent run), after its results
    if failed:
        console.print(
            f"[red]{len(failed)} of {len(result.runs)} runs failed[/]; logs are in each run's log.txt. "
            "Run the same command again to retry only those."
        )
        return 1
    return 0
