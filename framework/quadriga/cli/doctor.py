"""``quadriga doctor``: the environment, every plugin and its status, broken plugins, collisions."""

from __future__ import annotations

import argparse
import platform
import sys

from rich.markup import escape
from rich.table import Table

from quadriga.cli._common import (
    Formatter,
    Subparsers,
    add_common_options,
    console,
    print_problems,
    registry_for,
)
from quadriga.errors import QuadrigaError
from quadriga.versions import version_of

__all__ = ["add_parser", "cmd_doctor"]

#: libraries whose versions the report shows
LIBRARIES = ("torch", "numpy", "pluggy", "attrs", "cattrs", "rich")


def add_parser(sub: Subparsers) -> None:
    """Add ``doctor`` to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser(
        "doctor",
        help="installed plugins, versions, and the broken ones with the reason",
        description="Report the Python environment, every plugin distribution and its status, "
        "plugins that failed to load (and why), and name collisions.",
        formatter_class=Formatter,
    )
    add_common_options(p)
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    """``quadriga doctor``: environment, plugins, broken plugins and collisions.

    Imports every component (slower than ``list``, but finds bad ``module:attr`` paths).

    Returns:
        0 when every plugin loads and every component imports, else 1.
    """
    reg = registry_for(args).load()
    con = console()
    con.print(f"quadriga {version_of('quadriga')} on Python {platform.python_version()} ({sys.executable})")
    for lib in LIBRARIES:
        version = version_of(lib)
        con.print(f"  {lib} {version}" if version else f"  {lib} [yellow]not installed[/]")
    table = Table(title="plugins")
    for col in ("plugin", "distribution", "version", "status", "components"):
        table.add_column(col)
    counts: dict[str, int] = {}
    for c in reg.components():
        counts[c.plugin] = counts.get(c.plugin, 0) + 1
    for name, status in sorted(reg.plugins.items()):
        color = {"ok": "green", "broken": "red", "disabled": "yellow"}.get(status.status, "white")
        table.add_row(
            name,
            status.distribution,
            status.version,
            f"[{color}]{status.status}[/]",
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
    if reg.conflicts:
        print_problems(con, reg)
    unresolved = []
    for spec in reg.components():
        try:
            reg.load_class(spec)
        except QuadrigaError as exc:
            unresolved.append(spec)
            con.print(f"[red]{spec.kind} '{escape(spec.name)}' cannot be imported[/]: {escape(str(exc))}")
    if not reg.broken and not reg.conflicts and not unresolved:
        con.print(f"[green]all plugins load and all {len(reg.components())} components import[/]")
    return 1 if reg.broken or reg.conflicts or unresolved else 0
