"""The ``quadriga`` command line.

Exit codes: 0 success, 1 a run or claim failed, 2 a usage or configuration error, 130 interrupted (Ctrl-C).
Errors are printed as one paragraph without a traceback unless ``--debug`` is given.
This module imports neither torch nor any plugin algorithm at import time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from quadriga.errors import QuadrigaError
from quadriga.registry import KINDS, Registry

__all__ = ["build_parser", "main"]

EPILOG_RUN = """\
examples:
  quadriga run cartpole-minto                       a registered pipeline, by name
  quadriga run my-pipeline.toml --seed 3            a pipeline file
  quadriga run srmc-vs-mala --set stage.sr1-gauss.alpha=2 --set pipeline.seed=1
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


def _console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show full tracebacks"
    )
    parser.add_argument(
        "--disable",
        action="append",
        metavar="PLUGIN",
        default=argparse.SUPPRESS,
        help="do not load this plugin (entry-point or distribution name); repeatable; "
        "QUADRIGA_DISABLE=a,b does the same",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``quadriga`` command (subcommands list, info, run, verify, doctor, ...)."""
    parser = argparse.ArgumentParser(
        prog="quadriga",
        description="Recent machine-learning methods as composable plugins: Sampler, Learner, Estimator, "
        "Evaluator. Pipelines are TOML files composed by name.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Start with `quadriga list`, then `quadriga run NAME`. `quadriga COMMAND --help` for details.",
    )
    _common(parser)
    from quadriga import __version__

    parser.add_argument("--version", action="version", version=f"quadriga {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "list",
        help="list components, pipelines and claims of the installed plugins",
        description="List what the installed plugins register, without importing their algorithms.",
    )
    p.add_argument("--kind", choices=[*KINDS, "pipeline", "claim"], help="only this kind")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    _common(p)

    p = sub.add_parser(
        "info",
        help="parameters, inputs and paper of a component (or a pipeline/claim)",
        description="Show a component's parameters with types, defaults and documentation, "
        "its inputs and output, its paper, and the distribution it comes from.",
    )
    p.add_argument("name")
    p.add_argument("--kind", choices=[*KINDS, "pipeline", "claim"], help="when the name has several kinds")
    _common(p)

    p = sub.add_parser(
        "run",
        help="check and run a pipeline",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Check a pipeline (every name, parameter, type and input) and run it. "
        "Results go to runs/<pipeline>/<UTC timestamp>/ unless --out is given.",
        epilog=EPILOG_RUN,
    )
    p.add_argument("pipeline", metavar="NAME_OR_PATH", help="a registered pipeline name or a TOML file")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a key, e.g. stage.sr1-gauss.alpha=2 (value parsed as TOML); repeatable",
    )
    p.add_argument("--seed", type=int, help="root seed (replaces [pipeline] seed)")
    p.add_argument("--out", type=Path, help="run directory (default runs/<pipeline>/<timestamp>)")
    p.add_argument(
        "--resume", type=Path, metavar="RUN_DIR", help="re-run only the unfinished stages of a run"
    )
    p.add_argument("--check", action="store_true", help="check the pipeline and print it; run nothing")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    _common(p)

    p = sub.add_parser(
        "verify",
        help="check that plugins still reproduce their papers' claims",
        description="Run the claims of a distribution (e.g. quadriga-srmc) or one claim, and write "
        "a markdown report with the measured numbers and figures.",
    )
    p.add_argument("what", metavar="DIST_OR_CLAIM")
    p.add_argument(
        "--scale",
        choices=["smoke", "paper"],
        default="smoke",
        help="smoke: seconds, checks numbers are produced; paper: the full check (minutes)",
    )
    p.add_argument("--out", type=Path, help="report directory (default verify/<what>/<timestamp>)")
    p.add_argument(
        "--record",
        action="store_true",
        help="keep the paper-scale verdicts in each plugin's claims_record.json (shown by quadriga list)",
    )
    _common(p)

    p = sub.add_parser(
        "doctor",
        help="installed plugins, versions, and the broken ones with the reason",
        description="Report the Python environment, every plugin distribution and its status, "
        "plugins that failed to load (and why), and name collisions.",
    )
    _common(p)

    from quadriga.extensions import add_extension_commands

    add_extension_commands(sub, _common)
    return parser


def _registry(args: argparse.Namespace) -> Registry:
    from quadriga.registry import get_registry

    return get_registry(disable=getattr(args, "disable", None) or ())


# ---------------------------------------------------------------------------- list
def cmd_list(args: argparse.Namespace) -> int:
    """``quadriga list``: components, pipelines and claims (imports no plugin algorithm)."""
    from quadriga.claims import last_verdict, verdict_text

    reg = _registry(args)
    kind = args.kind
    comps = [c for c in reg.components() if kind in (None, c.kind)]
    pipes = reg.pipelines() if kind in (None, "pipeline") else []
    claims = reg.claims() if kind in (None, "claim") else []
    if args.json:
        data = {
            "components": [
                dict(kind=c.kind, name=c.name, summary=c.summary, paper=c.paper, distribution=c.distribution)
                for c in comps
            ],
            "pipelines": [dict(name=p.name, summary=p.summary, distribution=p.distribution) for p in pipes],
            "claims": [
                dict(
                    name=c.name, summary=c.summary, distribution=c.distribution, last_verdict=last_verdict(c)
                )
                for c in claims
            ],
            "broken": [
                dict(plugin=b.plugin, distribution=b.distribution, stage=b.stage, error=b.error)
                for b in reg.broken
            ],
            "conflicts": [
                dict(kind=k, name=n, distributions=[s.distribution for s in specs])
                for (k, n), specs in reg.conflicts.items()
            ],
        }
        print(json.dumps(data, indent=2))
        return 0
    con = _console()
    sections = [
        (
            "components",
            ("kind", "name", "summary", "distribution"),
            [(c.kind, c.name, c.summary, c.distribution) for c in comps],
        ),
        (
            "pipelines (quadriga run NAME)",
            ("name", "summary", "distribution"),
            [(p.name, p.summary, p.distribution) for p in pipes],
        ),
        (
            "claims (quadriga verify NAME)",
            ("name", "claim", "distribution", "last paper-scale verdict"),
            [(c.name, c.summary, c.distribution, verdict_text(c)) for c in claims],
        ),
    ]
    for title, columns, rows in sections:
        if not rows:
            continue
        table = Table(title=title)
        for col in columns:
            table.add_column(col, overflow="fold")
        name_col = columns.index("name")
        for row in rows:
            cells = [escape(str(v)) for v in row]
            cells[name_col] = f"[bold]{cells[name_col]}[/]"
            table.add_row(*cells)
        con.print(table)
    if not (comps or pipes or claims):
        con.print(
            "nothing registered"
            + (f" of kind '{kind}'" if kind else "")
            + ". Install plugins, e.g. `pip install -e plugins/quadriga-std`."
        )
    _print_problems(con, reg)
    return 0


def _print_problems(con: Console, reg: Registry) -> None:
    for b in reg.broken:
        con.print(
            f"[red]broken plugin[/] '{b.plugin}' from '{b.distribution}' ({b.stage}): {escape(b.error)}. "
            f"Its components are unavailable; the others work. Details: `quadriga doctor`."
        )
    for (kind, name), specs in reg.conflicts.items():
        who = " and ".join(f"'{s.distribution}'" for s in specs)
        con.print(
            f"[red]name collision[/]: {kind} '{name}' is registered by {who}; using it is an error "
            "until one is disabled (--disable PLUGIN)."
        )


# ---------------------------------------------------------------------------- info
def cmd_info(args: argparse.Namespace) -> int:
    """``quadriga info NAME``: a component's parameters, inputs, output and paper."""
    from quadriga.errors import UnknownComponentError, suggest
    from quadriga.params import describe_params

    reg = _registry(args)
    con = _console()
    name, kind = args.name, args.kind
    shown = False
    if kind in (None, "pipeline"):
        for p in reg.pipelines():
            if p.name == name:
                con.print(f"[bold]pipeline {p.name}[/] from {p.distribution}: {p.summary}\n")
                con.print(p.read_text(), markup=False)
                shown = True
    if kind in (None, "claim"):
        for c in reg.claims():
            if c.name == name:
                con.print(
                    f"[bold]claim {c.name}[/] from {c.distribution}: {c.summary}\nsource: {c.paper}\n"
                    f"run it: quadriga verify {c.name} [--scale paper]"
                )
                shown = True
    specs = [s for s in reg.components() if s.name == name and kind in (None, s.kind)]
    for spec in specs:
        cls = reg.load_class(spec)
        version = reg.plugins.get(spec.plugin, {}).get("version", "")
        con.print(f"[bold]{spec.kind} {spec.name}[/]  ({spec.distribution} {version}, {spec.target})")
        if spec.summary:
            con.print(spec.summary)
        if spec.paper:
            con.print(f"paper: {spec.paper}")
        doc = (cls.__doc__ or "").strip()
        if doc:
            con.print()
            con.print(doc, markup=False)
        table = Table(title="parameters")
        for col in ("name", "type", "default", "doc"):
            table.add_column(col, overflow="fold")
        for row in describe_params(cls):
            table.add_row(row["name"], escape(row["type"]), escape(row["default"]), escape(row["doc"]))
        con.print(table)
        inputs = getattr(cls, "input_types", {})
        if inputs:
            con.print("inputs: " + ", ".join(f"{k} ({' | '.join(v)})" for k, v in inputs.items()))
        con.print(f"output: {cls.output_type}")
        shown = True
    if not shown:
        known = (
            [c.name for c in reg.components()]
            + [p.name for p in reg.pipelines()]
            + [c.name for c in reg.claims()]
        )
        raise UnknownComponentError(
            f"nothing named '{name}' is registered.{suggest(name, known)} Run `quadriga list`."
        )
    return 0


# ---------------------------------------------------------------------------- run
@contextlib.contextmanager
def _rich_progress(enabled: bool) -> Iterator[Any]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = _console()
    progress = Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not enabled,
        transient=False,
    )

    @contextlib.contextmanager
    def display(stage: str) -> Iterator[Any]:
        task = progress.add_task(stage, total=None)

        def on_update(completed: float, total: float | None, description: str | None) -> None:
            label = stage if not description or description == stage else f"{stage}: {description}"
            progress.update(task, completed=completed, total=total, description=label)

        try:
            yield on_update
        except BaseException:
            progress.update(task, description=f"{stage} (stopped)")
            if not enabled:
                console.print(f"  stage [bold]{escape(stage)}[/] stopped")
            raise
        t = progress.tasks[task] if task < len(progress.tasks) else None
        if t is not None and t.total is None:
            progress.update(task, total=1, completed=1)
        elif t is not None:
            progress.update(task, completed=t.total)
        if not enabled:
            console.print(f"  stage [bold]{escape(stage)}[/] done")

    with progress:
        yield display


def cmd_run(args: argparse.Namespace) -> int:
    """``quadriga run``: check a pipeline, then run it with progress bars and a results table."""
    from quadriga.pipeline import load_pipeline
    from quadriga.runs import execute

    reg = _registry(args)
    con = _console()
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
        with _rich_progress(show) as display:
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
    _print_results(con, result.results)
    con.print(f"run directory: [bold]{result.dir}[/]")
    if result.status != "finished":
        err = result.error
        con.print(
            f"[red]run {result.status}[/]: {escape(str(err))}\nFinished stages are saved; after a fix, "
            f"`quadriga run {args.pipeline} --resume {result.dir}` re-runs only the rest."
            + ("" if getattr(args, "debug", False) else " (details: error.txt in the run directory)")
        )
        if getattr(args, "debug", False) and err is not None:
            raise err
        return getattr(err, "exit_code", 1) if isinstance(err, QuadrigaError) else 1
    return 0


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _print_results(con: Console, results: dict[str, Any]) -> None:
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


# ---------------------------------------------------------------------------- verify
def cmd_verify(args: argparse.Namespace) -> int:
    """``quadriga verify``: run claims and write a markdown report."""
    import datetime as dt

    from quadriga.claims import verify

    reg = _registry(args)
    con = _console()
    os.environ.setdefault("MPLBACKEND", "Agg")
    from quadriga.runs import safe_name

    out = args.out or Path("verify") / safe_name(args.what) / dt.datetime.now(dt.timezone.utc).strftime(
        "%Y%m%dT%H%M%SZ"
    )

    def on_start(spec: Any) -> None:
        con.print(f"claim [bold]{spec.name}[/] ({args.scale}): {escape(spec.summary)}")

    def on_end(spec: Any, record: dict[str, Any]) -> None:
        color = {"passed": "green", "refuted": "red", "inconclusive": "yellow", "ran": "cyan"}.get(
            record["status"], "red"
        )
        con.print(
            f"  [{color}]{record['status']}[/] in {record['seconds']} s: {escape(str(record['summary']))}"
        )

    records, report = verify(
        reg,
        args.what,
        scale=args.scale,
        out_dir=Path(out),
        record=args.record,
        on_start=on_start,
        on_end=on_end,
    )
    con.print(f"report: [bold]{report}[/]")
    return 0 if all(r["status"] in ("passed", "ran") for r in records) else 1


# ---------------------------------------------------------------------------- doctor
def cmd_doctor(args: argparse.Namespace) -> int:
    """``quadriga doctor``: environment, plugins, broken plugins and collisions."""
    import importlib.metadata as md
    import platform

    from quadriga import __version__

    reg = _registry(args).load()
    con = _console()
    con.print(f"quadriga {__version__} on Python {platform.python_version()} ({sys.executable})")
    for lib in ("torch", "numpy", "pluggy", "attrs", "cattrs", "rich"):
        try:
            con.print(f"  {lib} {md.version(lib)}")
        except md.PackageNotFoundError:
            con.print(f"  {lib} [yellow]not installed[/]")
    table = Table(title="plugins")
    for col in ("plugin", "distribution", "version", "status", "components"):
        table.add_column(col)
    counts: dict[str, int] = {}
    for c in reg.components():
        counts[c.plugin] = counts.get(c.plugin, 0) + 1
    for name, info in sorted(reg.plugins.items()):
        color = {"ok": "green", "broken": "red", "disabled": "yellow"}.get(info["status"], "white")
        table.add_row(
            name,
            info["distribution"],
            info["version"],
            f"[{color}]{info['status']}[/]",
            str(counts.get(name, 0)),
        )
    con.print(table)
    for b in reg.broken:
        con.print(f"[red]'{b.plugin}' ({b.distribution}) failed at {b.stage}[/]: {escape(b.error)}")
        con.print(
            f"  entry point: {b.entry_point}. Fix the error above and reinstall '{b.distribution}' "
            f"(pip install --force-reinstall, or pip install -e <its folder>), or disable it "
            f"(--disable {b.plugin})."
        )
        if getattr(args, "debug", False):
            con.print(b.traceback, markup=False)
    _print_problems(con, reg) if reg.conflicts else None
    unresolved = []
    for spec in reg.components():  # import every component: slower than `list`, but finds bad paths
        try:
            reg.load_class(spec)
        except QuadrigaError as exc:
            unresolved.append(spec)
            con.print(f"[red]{spec.kind} '{escape(spec.name)}' cannot be imported[/]: {escape(str(exc))}")
    if not reg.broken and not reg.conflicts and not unresolved:
        con.print(f"[green]all plugins load and all {len(reg.components())} components import[/]")
    return 1 if reg.broken or reg.conflicts or unresolved else 0


COMMANDS = {"list": cmd_list, "info": cmd_info, "run": cmd_run, "verify": cmd_verify, "doctor": cmd_doctor}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``quadriga`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    from quadriga.extensions import EXTENSION_COMMANDS

    if not getattr(args, "debug", False):
        # torchrl logs every buffer allocation at INFO; keep the terminal for progress and results
        os.environ.setdefault("RL_LOGGING_LEVEL", "WARNING")
    handler = COMMANDS.get(args.command) or EXTENSION_COMMANDS[args.command]
    try:
        return handler(args)
    except QuadrigaError as exc:
        if getattr(args, "debug", False):
            raise
        _console(stderr=True).print(f"[red]error:[/] {escape(str(exc))}", markup=True, highlight=False)
        return exc.exit_code
    except KeyboardInterrupt:
        _console(stderr=True).print("[yellow]interrupted[/]")
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:
        if getattr(args, "debug", False):
            raise
        _console(stderr=True).print(
            f"[red]internal error:[/] {escape(f'{type(exc).__name__}: {exc}')} "
            "(run again with --debug for the traceback)"
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
