"""``quadriga list``: components, pipelines and claims of the installed plugins."""

from __future__ import annotations

import argparse
import json

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
from quadriga.registry import KINDS

__all__ = ["add_parser", "cmd_list"]


def add_parser(sub: Subparsers) -> None:
    """Add ``list`` to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser(
        "list",
        help="list components, pipelines and claims of the installed plugins",
        description="List what the installed plugins register, without importing their algorithms.",
        formatter_class=Formatter,
    )
    p.add_argument("--kind", choices=[*KINDS, "pipeline", "claim"], help="only this kind")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_common_options(p)
    p.set_defaults(func=cmd_list)


def cmd_list(args: argparse.Namespace) -> int:
    """``quadriga list``: components, pipelines and claims (imports no plugin algorithm)."""
    from quadriga.claims import last_verdict, verdict_text

    reg = registry_for(args)
    kind = args.kind
    comps = [c for c in reg.components() if kind in (None, c.kind)]
    for (k, _), specs in reg.conflicts.items():  # every registration of a colliding name, flagged
        import attrs

        if k in KINDS and kind in (None, k):
            others = " and ".join(s.distribution for s in specs)
            comps += [attrs.evolve(s, summary=f"NAME COLLISION ({others}): {s.summary}") for s in specs]
    comps.sort(key=lambda c: (c.kind, c.name))
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
    con = console()
    sections: list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]] = [
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
    print_problems(con, reg)
    return 0
