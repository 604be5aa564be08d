"""``quadriga verify``: run the claims of a distribution (or one claim) and write a markdown report."""

from __future__ import annotations

import argparse
import datetime as dt
import os
from pathlib import Path
from typing import Any

from quadriga.cli._common import (
    Formatter,
    Subparsers,
    add_common_options,
    console,
    name_completer,
    registry_for,
)
from quadriga.markup import escape

__all__ = ["add_parser", "cmd_verify"]


def add_parser(sub: Subparsers) -> None:
    """Add ``verify`` to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser(
        "verify",
        help="check that plugins still reproduce their papers' claims",
        description=(
            "Run the claims of a distribution (e.g. quadriga-srmc) or one claim, and write\n"
            "report.md and report.json with the measured numbers and figures.\n\n"
            "Scales:\n"
            "  smoke (the default)  a few replicates per arm (2 to 5): seconds to a few\n"
            "                       minutes per claim. Numbers with their intervals, no\n"
            "                       verdict, p-value or MDE: the status is 'ran'.\n"
            "  paper                the replicates the claim was designed for: minutes to\n"
            "                       hours. Each comparison gets a verdict: passed, refuted\n"
            "                       or inconclusive (with the MDE and replicates needed).\n\n"
            "Modes:\n"
            "  --plan        run the claim's pilot (a few replicates at paper settings),\n"
            "                measure the spread and print the replicates its declared\n"
            "                minimum detectable effect needs at its power\n"
            "  --fragility   evaluate the claim at every point of its declared\n"
            "                neighbourhood of nuisance settings: where does it hold?\n"
            "  --stale       only claims whose recorded verdict is stale (the code or\n"
            "                libraries that produced it changed), at paper scale: minutes\n"
            "                to hours per claim; add --record to renew the records\n\n"
            "Exit status: 0 when every claim passed (paper), ran (smoke) or was planned\n"
            "(--plan, planned or underpowered); 1 when one was refuted, inconclusive or\n"
            "raised; 2 for a usage error.\n\n"
            "`quadriga info CLAIM` shows a claim's effect and replicates per scale."
        ),
        formatter_class=Formatter,
    )
    p.add_argument(
        "what",
        metavar="DIST_OR_CLAIM",
        nargs="?",
        default="",
        help="a plugin distribution (all its claims, e.g. quadriga-srmc) or one claim's name "
        "(optional with --stale: every installed claim)",
    ).completer = name_completer("claim", "distribution")
    p.add_argument(
        "--scale",
        choices=["smoke", "paper"],
        default=None,
        help="smoke (default): a few replicates, numbers only, no verdict; paper: the claim's full "
        "replicates and a verdict (minutes to hours)",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--plan",
        action="store_true",
        help="run the pilot and print the replicates the declared effect needs (no verdict)",
    )
    mode.add_argument(
        "--fragility",
        action="store_true",
        help="evaluate the claim over its declared nuisance settings (a table and a figure)",
    )
    p.add_argument(
        "--stale",
        action="store_true",
        help="only the claims whose recorded verdict is stale, at paper scale (add --record to renew them)",
    )
    p.add_argument("--json", action="store_true", help="print the records as JSON instead of text")
    p.add_argument("--out", type=Path, help="report directory (default verify/<what>/<timestamp>)")
    p.add_argument(
        "--record",
        action="store_true",
        help="keep the paper-scale verdicts in each plugin's claims_record.json (shown by quadriga list)",
    )
    add_common_options(p)
    p.set_defaults(func=cmd_verify)


#: the colour of each claim status on the terminal (any other: red)
_STATUS_COLOURS = {
    "passed": "green",
    "refuted": "red",
    "inconclusive": "yellow",
    "ran": "cyan",
    "planned": "green",
    "underpowered": "yellow",
}


#: statuses that leave ``verify``'s exit code 0: a passed verdict, a smoke run's numbers, and
#: either answer of ``--plan`` (an underpowered plan is a finding about the claim, not a failure)
_SUCCESS = frozenset({"passed", "ran", "planned", "underpowered"})


def print_markdown_tables(con: Any, text: str) -> None:
    """Print the markdown tables of a claim's report (``| a | b |`` blocks) as terminal tables.

    Blocks separated by a blank line that are not tables print as plain text (escaped).
    """
    from quadriga.cli.output import print_table

    for block in text.strip().split("\n\n"):
        lines = block.strip().splitlines()
        rule = len(lines) >= 2 and set(lines[1].replace("|", "").strip()) <= {"-", ":"}
        if not (rule and all(line.startswith("|") for line in lines)):
            con.print(escape(block), soft_wrap=True)
            continue
        header, _, *rows = ([c.strip() for c in line.strip().strip("|").split("|")] for line in lines)
        if any(len(r) != len(header) for r in rows):  # a cell holding "|": keep the text as written
            con.print(escape(block), soft_wrap=True)
            continue
        numeric = [h for j, h in enumerate(header) if rows and all(_is_number(r[j]) for r in rows)]
        print_table(con, header, rows, right=numeric)


def _is_number(cell: str) -> bool:
    """Whether a table cell reads as a number (right-aligned when its whole column does)."""
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _mode_and_scale(args: argparse.Namespace) -> tuple[str, str]:
    """``(mode, scale)`` of ``verify``: stale verdicts are renewed, and a plan's pilot run, at paper scale.

    Raises:
        QuadrigaError: ``--stale`` with ``--scale smoke`` (stale verdicts are renewed at paper scale).
    """
    from quadriga.errors import QuadrigaError

    mode = "plan" if args.plan else ("fragility" if args.fragility else "verdict")
    if args.stale and mode == "verdict" and args.scale == "smoke":
        raise QuadrigaError(
            "--stale re-runs stale verdicts at paper scale; drop --scale smoke (or name the claims "
            "without --stale to check them at smoke scale)."
        )
    scale = "paper" if (args.stale and mode == "verdict") or mode == "plan" else (args.scale or "smoke")
    return mode, scale


def _report_interrupt(exc: KeyboardInterrupt, args: argparse.Namespace, out: Path, mode: str) -> int:
    """Say on stderr where the partial report is and the command that runs the claims again; the exit code.

    Re-running into the same ``--out`` runs every selected claim again from its start (the claim
    directories an earlier verify left there are replaced, nothing is resumed).

    Returns:
        130 for Ctrl-C, 143 for SIGTERM (the interrupt's ``exit_code``).
    """
    import shlex

    code = int(getattr(exc, "exit_code", 130))
    words = ["quadriga", "verify"] + ([args.what] if args.what else [])
    words += ["--scale", args.scale] if args.scale else []
    words += [f"--{mode}"] if mode != "verdict" else []
    words += ["--stale"] if args.stale else []
    words += ["--record"] if args.record else []
    words += ["--out", str(out)]
    err = console(stderr=True)
    what = "interrupted" if code == 130 else "terminated (SIGTERM)"
    report = out / "report.md"
    if report.is_file():
        err.print(f"[yellow]{what}[/]: the claims that finished are reported (the others as interrupted) in")
        err.print(f"  {escape(str(report))}", soft_wrap=True)  # paths and commands are never wrapped
    else:
        err.print(f"[yellow]{what}[/] before any report was written.")
    err.print("run the claims again (each from its start: their earlier runs there are replaced) with")
    err.print(f"  {escape(shlex.join(words))}", soft_wrap=True)
    return code


def cmd_verify(args: argparse.Namespace) -> int:
    """``quadriga verify``: run claims and write a markdown report.

    Returns:
        0 when every claim passed (or ran, at smoke scale), else 1; 130 (143) when interrupted by
        Ctrl-C (SIGTERM), after saying on stderr how to run the claims again.
    """
    import json
    import sys

    from quadriga.claims import verify
    from quadriga.errors import QuadrigaError
    from quadriga.runs import safe_name

    if not args.what and not args.stale:
        raise QuadrigaError("name a distribution or a claim (or give --stale for every stale claim).")
    reg = registry_for(args)
    con = console()
    os.environ.setdefault("MPLBACKEND", "Agg")
    mode, scale = _mode_and_scale(args)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    label = safe_name(args.what or "stale") + ("" if mode == "verdict" else f"-{mode}")
    out = args.out or Path("verify") / label / stamp
    say = (lambda *a, **k: None) if args.json else con.print

    what = {"verdict": scale, "plan": "pilot at paper settings", "fragility": f"fragility, {scale}"}[mode]

    def on_start(spec: Any) -> None:
        say(f"claim [bold]{escape(spec.name)}[/] ({what}): {escape(spec.summary)}")

    def on_end(spec: Any, record: dict[str, Any]) -> None:
        color = _STATUS_COLOURS.get(record["status"], "red")
        say(f"  [{color}]{record['status']}[/] in {record['seconds']} s: {escape(str(record['summary']))}")
        if record.get("table") and mode != "verdict" and not args.json:  # the pilot's or fragility map's
            print_markdown_tables(con, str(record["table"]))

    try:
        records, report = verify(
            reg,
            args.what,
            scale=scale,
            out_dir=Path(out),
            record=args.record,
            mode=mode,
            stale=args.stale,
            on_start=on_start,
            on_end=on_end,
        )
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM: the report marks the unfinished claims
        return _report_interrupt(exc, args, Path(out), mode)
    if args.json:
        sys.stdout.write(
            json.dumps({"report": str(report), "records": records}, indent=2, default=str) + "\n"
        )
    elif not records:
        say("no claim selected" + (": no recorded verdict is stale." if args.stale else "."))
    say(f"report: [bold]{escape(str(report))}[/]", soft_wrap=True)  # a path is never wrapped
    return 0 if all(r["status"] in _SUCCESS for r in records) else 1
