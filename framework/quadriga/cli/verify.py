"""``quadriga verify``: run the claims of a distribution (or one claim) and write a markdown report."""

from __future__ import annotations

import argparse
import datetime as dt
import os
from pathlib import Path
from typing import Any

from rich.markup import escape

from quadriga.cli._common import (
    Formatter,
    Subparsers,
    add_common_options,
    console,
    name_completer,
    registry_for,
)

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
            "  smoke (the default)  a few replicates per arm (3 or so): seconds to a few\n"
            "                       minutes per claim. Numbers with their intervals, no\n"
            "                       verdict, p-value or MDE: the status is 'ran'.\n"
            "  paper                the replicates the claim was designed for: minutes to\n"
            "                       hours. Each comparison gets a verdict: passed, refuted\n"
            "                       or inconclusive (with the MDE and replicates needed).\n\n"
            "`quadriga info CLAIM` shows a claim's effect and replicates per scale."
        ),
        formatter_class=Formatter,
    )
    p.add_argument(
        "what",
        metavar="DIST_OR_CLAIM",
        help="a plugin distribution (all its claims, e.g. quadriga-srmc) or one claim's name",
    ).completer = name_completer("claim", "distribution")
    p.add_argument(
        "--scale",
        choices=["smoke", "paper"],
        default="smoke",
        help="smoke (default): a few replicates, numbers only, no verdict; paper: the claim's full "
        "replicates and a verdict (minutes to hours)",
    )
    p.add_argument("--out", type=Path, help="report directory (default verify/<what>/<timestamp>)")
    p.add_argument(
        "--record",
        action="store_true",
        help="keep the paper-scale verdicts in each plugin's claims_record.json (shown by quadriga list)",
    )
    add_common_options(p)
    p.set_defaults(func=cmd_verify)


def cmd_verify(args: argparse.Namespace) -> int:
    """``quadriga verify``: run claims and write a markdown report.

    Returns:
        0 when every claim passed (or ran, at smoke scale), else 1.
    """
    from quadriga.claims import verify
    from quadriga.runs import safe_name

    reg = registry_for(args)
    con = console()
    os.environ.setdefault("MPLBACKEND", "Agg")
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = args.out or Path("verify") / safe_name(args.what) / stamp

    def on_start(spec: Any) -> None:
        con.print(f"claim [bold]{escape(spec.name)}[/] ({args.scale}): {escape(spec.summary)}")

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
    con.print(f"report: [bold]{escape(str(report))}[/]", soft_wrap=True)  # a path is never wrapped
    return 0 if all(r["status"] in ("passed", "ran") for r in records) else 1
