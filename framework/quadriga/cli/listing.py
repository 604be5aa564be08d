"""``quadriga list``: components, pipelines and claims of the installed plugins."""

from __future__ import annotations

import argparse

from quadriga.cli._common import (
    Formatter,
    Subparsers,
    add_common_options,
    console,
    print_problems,
    registry_for,
)
from quadriga.cli.output import print_json, print_table
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
    p.add_argument(
        "--full", action="store_true", help="print whole summaries (wrapped) instead of one line per entry"
    )
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
        print_json(data)
        return 0
    con = console()
    by_dist: dict[str, list[list[str]]] = {}
    for c in comps:
        by_dist.setdefault(c.distribution, []).append([c.kind, c.name, c.summary])
    for p in pipes:
        by_dist.setdefault(p.distribution, []).append(["pipeline", p.name, p.summary])
    for c in claims:
        by_dist.setdefault(c.distribution, []).append(["claim", c.name, f"({verdict_text(c)}) {c.summary}"])
    versions = {s.distribution: s.version for s in reg.plugins.values()}
    for dist in sorted(by_dist):
        title = f"{dist} {versions.get(dist, '')}".strip()
        print_table(
            con,
            ["kind", "name", "summary"],
            by_dist[dist],
            title=f"[bold]{title}[/]",
            key_columns=2,
            wrap="summary",
            one_line=not args.full,
        )
    if comps or pipes or claims:
        con.print(
            "pipelines: `quadriga run NAME`; claims (with the last paper-scale verdict): "
            "`quadriga verify NAME`; details: `quadriga info NAME`"
            + ("." if args.full else "; whole summaries: `quadriga list --full`.")
        )
    if not (comps or pipes or claims):
        con.print(
            "nothing registered"
            + (f" of kind '{kind}'" if kind else "")
            + ". Install plugins, e.g. `pip install -e plugins/quadriga-std`."
        )
    print_problems(con, reg)
    return 0
