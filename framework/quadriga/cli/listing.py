"""``quadriga list``: components, pipelines and claims of the installed plugins."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from quadriga.cli._common import (
    Formatter,
    Subparsers,
    add_common_options,
    console,
    print_problems,
    registry_for,
)
from quadriga.registry import KINDS

if TYPE_CHECKING:
    from rich.console import Console

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
        from quadriga.cli.output import print_json

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
    plain = not args.full and not con.is_terminal
    for dist in sorted(by_dist):
        title = f"{dist} {versions.get(dist, '')}".strip()
        if plain and _write_plain_table(con, title, by_dist[dist]):
            continue
        from quadriga.cli.output import print_table  # rich.table: imported only when it is used

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
            + ("." if args.full else "; whole summaries: `quadriga list --full`."),
            emoji=False,  # no :codes: here; replacing them first imports rich's emoji table
        )
    if not (comps or pipes or claims):
        con.print(
            "nothing registered"
            + (f" of kind '{kind}'" if kind else "")
            + ". Install plugins, e.g. `pip install -e plugins/quadriga-std`."
        )
    print_problems(con, reg)
    return 0


def _write_plain_table(con: Console, title: str, rows: list[list[str]]) -> bool:
    """Write one distribution's one-line table as plain text; False when it needs rich.

    The same characters as :func:`quadriga.cli.output.print_table` with ``one_line=True``
    prints on a console that is not a terminal (``rich.box.SIMPLE_HEAD``, the summary cut to
    the room left with "…"), written in one call instead of rendered through a rich ``Table``
    (the larger part of the time of ``quadriga list``). Rows whose cells need rich's measuring
    (tabs, newlines, characters not one cell wide) and tables wider than the console (which
    ``print_table`` splits) are left to ``print_table``.

    Args:
        con: the console written to (its ``width`` and ``file``).
        title: printed above the table.
        rows: ``[kind, name, summary]`` strings.
    """
    columns = ["kind", "name", "summary"]
    text = [title, *columns, *(c for row in rows for c in row)]
    if not all((t.isascii() and t.isprintable()) or _one_cell_each(t) for t in text):
        return False
    widths = [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(columns)]
    # as print_table sizes it (2 = its _PAD per column); with two key columns and one more,
    # its chunk_columns always keeps one table
    widths[2] = max(20, min(widths[2], con.width - (widths[0] + widths[1] + 4) - 2))
    # rich's Table: columns of w + padding ([w0 + 1, w1 + 2, w2 + 1]) between 1-space edges and
    # dividers; wider than the console, it takes the excess evenly from the columns (round() as
    # rich.Table rounds), the two key columns keep their minimum width, and lines are cropped
    excess = sum(widths) + 4 + 4 - con.width
    if excess > 0:
        remaining, ratio = excess, 3
        for _ in range(2):
            remaining -= round(remaining / ratio)
            ratio -= 1
        widths[2] -= min(widths[2] + 1, remaining)
    total = sum(widths) + 2 * (len(widths) - 1) + 2 + 2
    if len(title) > total or widths[2] < len(columns[2]):
        return False

    def cut(cell: str, width: int) -> str:
        return cell if len(cell) <= width else cell[: width - 1] + "…"

    def line(cells: list[str]) -> str:
        return " " + "   ".join(cut(c, w).ljust(w) for c, w in zip(cells, widths, strict=True)) + " "

    out = [title.ljust(total), " " * total, line(columns), " " + "─" * (total - 2) + " "]
    out += [line(row) for row in rows]
    out.append(" " * total)
    con.file.write("".join(ln[: con.width] + "\n" for ln in out))
    return True


def _one_cell_each(text: str) -> bool:
    """Whether every character of ``text`` is printable and one terminal cell wide."""
    from quadriga.cli._common import cell_len  # rich's cell_len, without importing rich for text like 'è'

    return text.isprintable() and cell_len(text) == len(text)
