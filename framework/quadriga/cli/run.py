"""``quadriga run``: check a pipeline, then run it with progress bars and a results table."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from quadriga.cli._common import (
    Formatter,
    Subparsers,
    add_common_options,
    console,
    name_completer,
    registry_for,
)
from quadriga.cli.output import plan_rows, print_json, print_results, print_table, results_payload
from quadriga.errors import QuadrigaError, RunInterrupted, sigterm_interrupts
from quadriga.markup import escape
from quadriga.progress_display import rich_progress

__all__ = ["EPILOG", "add_parser", "cmd_run"]

EPILOG = """\
examples:
  quadriga run cartpole-minto                a registered pipeline, by name
  quadriga run my-pipeline.toml --seed 3     a pipeline file
  quadriga run srmc-vs-mala --set stage.mse-gauss.level=0.9 --seed 1
  quadriga run gmm-mcmc-baselines --check    check the pipeline, run nothing
  quadriga run --resume runs/cartpole-minto/20260101T000000Z

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
        "pipeline",
        metavar="NAME_OR_PATH",
        nargs="?",
        help="a registered pipeline name or a TOML file (optional with --resume: the run knows it)",
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
    p.add_argument(
        "--json",
        action="store_true",
        help="print only the results, as JSON (implies --quiet); with --check, the checked plan",
    )
    p.add_argument(
        "--with",
        dest="trackers",
        action="append",
        default=[],
        metavar="TRACKER",
        help="also log this run with an installed tracker plugin, e.g. mlflow (quadriga-mlflow); repeatable",
    )
    add_common_options(p)
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    """``quadriga run``: check a pipeline, then run it with progress bars and a results table.

    Returns:
        0 when the run finished (or ``--check`` found the pipeline valid), 130 when interrupted by
        Ctrl-C, 143 when stopped by SIGTERM (both: the run marked interrupted, its finished stages
        kept, the resume command printed on stderr), otherwise the failing error's exit code (the
        error and the resume command on stderr).

    Raises:
        ConfigError: the pipeline is invalid (before anything runs).
    """
    from quadriga.errors import ConfigError
    from quadriga.pipeline import load_pipeline
    from quadriga.pipeline_source import INT64
    from quadriga.runs import execute
    from quadriga.tracking import check as check_trackers
    from quadriga.tracking import held_notes, using

    if args.pipeline is None and args.resume is None:
        raise ConfigError(
            "quadriga run needs NAME_OR_PATH: a registered pipeline name or a TOML file "
            "(or --resume RUN_DIR to continue a run)."
        )
    if args.resume is not None and args.out is not None:
        raise ConfigError(
            f"--resume continues {args.resume} in place and --out would be ignored; give one of them "
            "(copy the run directory first to resume a copy).",
            key="--out",
        )
    if args.seed is not None and not INT64[0] <= args.seed <= INT64[1]:
        raise ConfigError(f"the seed {args.seed} does not fit in a signed 64-bit integer.", key="--seed")
    reg = registry_for(args)
    trackers = check_trackers(args.trackers, reg)
    con = console(stderr=args.json)  # with --json, stdout carries the JSON alone
    if args.resume is not None:
        from quadriga.api import load_resumed
        from quadriga.runs import resume_plan

        pipeline = load_resumed(args.pipeline, args.resume, reg, overrides=args.overrides, seed=args.seed)
        con.print(f"resuming {escape(str(args.resume))}: {escape(resume_plan(args.resume).describe())}")
    else:
        pipeline = load_pipeline(args.pipeline, reg, overrides=args.overrides, seed=args.seed)
    shown, rest = plan_rows(pipeline.describe())
    print_table(
        con,
        ["table", "component", "kind", "inputs"],
        shown,
        title=f"pipeline {pipeline.name} (seed {pipeline.seed})",
        wrap="inputs",
        wrap_at=", ",
    )
    if rest is not None:
        con.print(escape(rest))
    for note in pipeline.notes:
        con.print(f"[cyan]note[/]: {escape(note)}")
    if args.check:
        con.print("[green]pipeline is valid[/] (nothing was run).")
        if args.json:
            print_json(
                {
                    "pipeline": pipeline.name,
                    "seed": pipeline.seed,
                    "valid": True,
                    "tables": [
                        {"table": n.table, "component": n.use, "kind": n.kind, "inputs": dict(n.inputs)}
                        for n in (*pipeline.tasks.values(), *pipeline.stages.values())
                    ],
                    "notes": list(pipeline.notes),
                }
            )
        return 0
    os.environ.setdefault("MPLBACKEND", "Agg")
    show = not (args.quiet or args.json) and con.is_terminal
    lines = not (args.quiet or args.json) and not con.is_terminal
    err = console(stderr=True)  # what went wrong, and how to go on, goes to stderr
    with held_notes() as tracker_notes:
        try:
            with sigterm_interrupts(), rich_progress(con, show, lines=lines) as display, using(*trackers):
                result = execute(
                    pipeline, reg, out=args.out, resume=args.resume, argv=sys.argv, display=display
                )
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (kill, timeout, a batch time limit)
            code = int(getattr(exc, "exit_code", 130))
            run_dir = exc.run_dir if isinstance(exc, RunInterrupted) else "RUN_DIR"
            what = "interrupted" if code == 130 else "terminated (SIGTERM)"
            err.print(f"[yellow]{what}[/]: finished stages are saved in")
            err.print(f"  {escape(str(run_dir))}", soft_wrap=True)  # paths and commands are never wrapped
            err.print("continue with")
            err.print(f"  quadriga run --resume {escape(str(run_dir))}", soft_wrap=True)
            return code
        for w in result.warnings:
            con.print(f"[yellow]warning[/]: {escape(w)}")
        if args.json:
            print_json(results_payload(result.results, result.dir, result.status))
        else:
            print_results(con, result.results)
        con.print(f"run directory: [bold]{escape(str(result.dir))}[/]", soft_wrap=True)
        tracker_notes()  # where the run was logged (MLflow's run id), after its results
        if result.status != "finished":
            error = result.error
            debug = getattr(args, "debug", False)
            err.print(
                f"[red]run {result.status}[/]: {escape(str(error))}\nFinished stages are saved. After a fix "
                "(in the data, the code, the environment, or a setting edited in the run directory's "
                "pipeline.toml, whose stage and everything downstream then run again), this re-runs only "
                "the rest"
                + ("; details: error.txt in the run directory:" if result.error_file and not debug else ":")
            )
            err.print(f"  quadriga run --resume {escape(str(result.dir))}", soft_wrap=True)
            if debug and error is not None:
                raise error
            return error.exit_code if isinstance(error, QuadrigaError) else 1
        return 0
