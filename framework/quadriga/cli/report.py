"""``quadriga report``: one self-contained HTML page for runs, sweeps and claim verdicts."""

from __future__ import annotations

import argparse
from pathlib import Path

from quadriga.cli._common import Formatter, Subparsers, add_common_options, console
from quadriga.cli.output import print_json
from quadriga.markup import escape

__all__ = ["add_parser", "cmd_report"]

EPILOG = """\
examples:
  quadriga report runs/gmm-mcmc-baselines/20261201T122438Z
  quadriga report runs/gmm-mcmc-baselines/* --out gmm.html
  quadriga report sweeps/my-sweep --verify verify/srmc-alpha-scaling \\
      --out srmc.html
"""


def add_parser(sub: Subparsers) -> None:
    """Add ``report`` to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser(
        "report",
        help="write one self-contained HTML page for runs, sweeps and claim verdicts",
        description="Write one HTML file holding the figures (embedded), the results tables, the "
        "resolved pipeline and the manifest of each run or sweep, and the verdicts with intervals of "
        "`quadriga verify` outputs. Open it in a browser or send it as it is.",
        formatter_class=Formatter,
        epilog=EPILOG,
    )
    p.add_argument(
        "dirs",
        nargs="*",
        type=Path,
        metavar="RUN_OR_SWEEP_DIR",
        help="run or sweep directories to put on the page (optional with --verify)",
    )
    p.add_argument(
        "--verify",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="a `quadriga verify` output directory (its report.json verdicts are shown); repeatable",
    )
    p.add_argument(
        "--out", type=Path, default=Path("report.html"), help="the page to write (default ./report.html)"
    )
    p.add_argument("--title", help="the page title (default: what is reported)")
    p.add_argument("--json", action="store_true", help="print {report: PATH} as JSON")
    add_common_options(p)
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    """``quadriga report``: write the page and print where it is.

    Returns:
        0 when the page is written; 1 when a file given cannot be read (the message says which).

    Raises:
        ConfigError: a path is not a run, sweep or verify directory, a file in one is damaged,
            ``--out`` is refused or cannot be written, or nothing was given.
    """
    from quadriga.report import write_report

    try:
        out = write_report(args.dirs, args.out, verify=args.verify, title=args.title)
    except OSError as exc:  # a file of a directory given cannot be read: permissions, a vanished disk
        if getattr(args, "debug", False):
            raise
        where = f" ({exc.filename})" if exc.filename else ""
        console(stderr=True).print(
            f"[red]error:[/] {escape(f'cannot read a file{where}: {exc.strerror or exc}')}. Fix its "
            "permissions or restore it, then run `quadriga report` again (nothing was written).",
            highlight=False,
        )
        return 1
    if args.json:
        print_json({"report": str(out)})
    else:
        con = console()
        con.print(f"report: [bold]{escape(str(out))}[/]", soft_wrap=True)  # a path is never wrapped
        con.print("(self-contained: figures and tables embedded)")
    return 0
