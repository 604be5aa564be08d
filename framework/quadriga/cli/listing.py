"""``quadriga list``: components, pipelines and claims of the installed plugins."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from quadriga.cli._common import (
    Formatter,
    Subparsers,
    add_common_options,
    add_kind_option,
    console,
    print_problems,
    registry_for,
)
from quadriga.registry import KINDS

if TYPE_CHECKING:
    from rich.console import Console

    from quadriga.catalogue import Entry
    from quadriga.registry import Registry

__all__ = ["add_parser", "cmd_list"]


def add_parser(sub: Subparsers) -> None:
    """Add ``list`` to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser(
        "list",
        help="list components, pipelines and claims of the installed plugins",
        description="List what the installed plugins register, without importing their algorithms.",
        formatter_class=Formatter,
    )
    add_kind_option(p, "only this kind")
    p.add_argument(
        "--full", action="store_true", help="print whole summaries (wrapped) instead of one line per entry"
    )
    p.add_argument(
        "--where",
        action="append",
        metavar="TAG",
        help="only components with this capability tag (repeat it, or give a comma list: all must "
        "hold); `quadriga list --tags` shows the tags",
    ).completer = _complete_tag
    p.add_argument(
        "--all",
        action="store_true",
        help="also list the repository's plugins that are not installed, with their install commands",
    )
    p.add_argument("--tags", action="store_true", help="list the capability tags and what each means")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_common_options(p)
    p.set_defaults(func=cmd_list)


def _complete_tag(prefix: str, **_: object) -> list[str]:
    """Shell completion of ``--where``: the tags starting with the last word of ``prefix``."""
    from quadriga.tags import TAGS

    head, _comma, last = prefix.rpartition(",")
    return [f"{head},{t}" if head else t for t in TAGS if t.startswith(last)]


def cmd_list(args: argparse.Namespace) -> int:
    """``quadriga list``: components, pipelines and claims (imports no plugin algorithm)."""
    where = _where_tags(args.where)
    if args.tags and where:
        from quadriga.errors import ConfigError

        raise ConfigError(
            "--tags lists the tag vocabulary and cannot be combined with --where; list the "
            "components with a tag by `quadriga list --where TAG`.",
            key="--where",
        )
    reg = registry_for(args)
    if args.tags:
        return _print_tags(reg, args.json, args.kind)
    kind = args.kind
    comps = [c for c in reg.components() if kind in (None, c.kind)]
    for (k, _), specs in reg.conflicts.items():  # every registration of a colliding name, flagged
        import attrs

        if k in KINDS and kind in (None, k):
            others = " and ".join(s.distribution for s in specs)
            comps += [attrs.evolve(s, summary=f"NAME COLLISION ({others}): {s.summary}") for s in specs]
    comps = [c for c in comps if where <= set(c.tags)]
    comps.sort(key=lambda c: (c.kind, c.name))
    pipes = reg.pipelines() if kind in (None, "pipeline") and not where else []  # no tags on these
    claims = reg.claims() if kind in (None, "claim") and not where else []
    absent = _not_installed(reg, kind) if args.all else []
    disabled = _disabled(reg, kind) if args.all else []
    if args.json:
        return _print_list_json(reg, comps, pipes, claims, absent, disabled, args.all)
    con = console()
    by_dist, any_stale = _rows_by_distribution(comps, pipes, claims, full=args.full)
    versions = {s.distribution: s.version for s in reg.plugins.values()}
    _print_list_tables(con, by_dist, versions, full=args.full)
    _print_list_notes(con, kind, where, comps, pipes, claims, any_stale=any_stale, full=args.full)
    if args.all:
        _print_not_installed(con, absent, disabled, full=args.full, filtered=bool(where))
    print_problems(con, reg)
    return 0


def _print_list_tables(
    con: Any, by_dist: dict[str, list[list[str]]], versions: dict[str, str], *, full: bool
) -> None:
    """One table per distribution (plain text when not a terminal and not ``--full``)."""
    plain = not full and not con.is_terminal
    for dist in sorted(by_dist):
        title = f"{dist} {versions.get(dist, '')}".strip()
        columns = ["kind", "name", "verdict", "summary"]
        rows = by_dist[dist]
        if all(row[2] == "" for row in rows):  # no claim: no verdict column
            columns, rows = ["kind", "name", "summary"], [[r[0], r[1], r[3]] for r in rows]
        if plain and _write_plain_table(con, title, rows, columns):
            continue
        from rich.text import Text

        from quadriga.cli.output import print_table  # rich.table: imported only when it is used

        print_table(
            con,
            columns,
            rows,
            title=Text(title, style="bold"),
            key_columns=len(columns) - 1,
            wrap="summary",
            one_line=not full,
            drop_empty=False,
        )


def _print_list_json(
    reg: Any,
    comps: list[Any],
    pipes: list[Any],
    claims: list[Any],
    absent: list[Any],
    disabled: list[Any],
    all_: bool,
) -> int:
    """``quadriga list --json``: the listing as one JSON object (returns the exit code 0)."""
    from quadriga.claims import last_verdict, stale_reason
    from quadriga.claims.fingerprint import one_look
    from quadriga.cli.output import print_json

    with one_look():  # each plugin's files walked once for all its claims
        verdicts = [(last_verdict(c), stale_reason(c)) for c in claims]
    data: dict[str, Any] = {
        "components": [
            dict(
                kind=c.kind,
                name=c.name,
                summary=c.summary,
                paper=c.paper,
                distribution=c.distribution,
                tags=list(c.tags),
            )
            for c in comps
        ],
        "pipelines": [dict(name=p.name, summary=p.summary, distribution=p.distribution) for p in pipes],
        "claims": [
            dict(
                name=c.name,
                summary=c.summary,
                distribution=c.distribution,
                last_verdict=last,
                stale=stale,
            )
            for c, (last, stale) in zip(claims, verdicts, strict=True)
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
    if all_:
        data["disabled"] = [e.distribution for e in disabled]
        data["not_installed"] = [_absent_json(e) for e in absent]
    print_json(data)
    return 0


def _absent_json(entry: Any) -> dict[str, Any]:
    """One ``not_installed`` entry of ``quadriga list --json --all``: a catalogue plugin not installed."""
    return dict(
        distribution=entry.distribution,
        summary=entry.summary,
        install=entry.install,
        provides={k: list(v) for k, v in entry.names.items()},
    )


def _rows_by_distribution(
    comps: list[Any], pipes: list[Any], claims: list[Any], *, full: bool
) -> tuple[dict[str, list[list[str]]], bool]:
    """``({distribution: [[kind, name, verdict, summary]]}, whether a verdict is stale)``."""
    from quadriga.claims import last_verdict, stale_reason
    from quadriga.claims.fingerprint import one_look

    by_dist: dict[str, list[list[str]]] = {}
    for c in comps:
        by_dist.setdefault(c.distribution, []).append([c.kind, c.name, "", c.summary])
    for p in pipes:
        by_dist.setdefault(p.distribution, []).append(["pipeline", p.name, "", p.summary])
    any_stale = False
    with one_look():  # each plugin's files walked once for all its claims
        for c in claims:
            last = last_verdict(c)
            verdict = "-"
            if last and last.get("status"):  # the status, * when stale; with --full its date too
                stale = "*" if stale_reason(c) else ""
                any_stale = any_stale or bool(stale)
                verdict = f"{last.get('status')}{stale}"
                verdict += f" {last.get('date')}" if full else ""
            by_dist.setdefault(c.distribution, []).append(["claim", c.name, verdict, c.summary])
    return by_dist, any_stale


def _print_list_notes(
    con: Any,
    kind: str | None,
    where: set[str],
    comps: list[Any],
    pipes: list[Any],
    claims: list[Any],
    *,
    any_stale: bool,
    full: bool,
) -> None:
    """The lines under the listing: what to run next, or why nothing is listed."""
    print_text = _print_text

    if where and comps:
        print_text(
            con,
            f"components with every tag of {', '.join(sorted(where))} (pipelines and claims have no "
            "tags); details: `quadriga info NAME`; the tags: `quadriga list --tags`.",
        )
    elif comps or pipes or claims:
        hints = [  # one per line: no command is wrapped, no line ends in a space
            "pipelines: `quadriga run NAME`; details: `quadriga info NAME`",
            "claims: `quadriga verify NAME` (verdict: the last paper-scale one)",
        ]
        if any_stale:
            hints.append("*: stale, the code that recorded it changed: `quadriga verify --stale --record`")
        if not full:
            hints.append("whole summaries and verdict dates: `quadriga list --full`")
        # no :codes: here; replacing them first imports rich's emoji table
        if max(map(len, hints)) <= con.width:
            con.print("\n".join(hints), emoji=False, soft_wrap=True)
        else:  # a narrow console: wrapped at words
            print_text(con, "\n".join(hints))
    if not (comps or pipes or claims):
        if where:
            print_text(
                con,
                f"no installed component{f' of kind {kind!r}' if kind else ''} has all of the tags "
                f"{', '.join(sorted(where))}.",
            )
        else:
            print_text(
                con,
                "nothing registered"
                + (f" of kind '{kind}'" if kind else "")
                + ". Install plugins, e.g. `pip install -c constraints.txt -e plugins/quadriga-std`.",
            )


def _where_tags(given: list[str] | None) -> set[str]:
    """The tags of the ``--where`` options (each a tag or a comma list), checked.

    Tags are matched case-insensitively (``MCMC`` is ``mcmc``).

    Raises:
        ConfigError: an unknown tag, or a ``--where`` that names no tag (``''``, ``,,,``); names
            ``--where``, the tag, the closest known ones and where the tags are documented.
    """
    from quadriga.errors import ConfigError, suggest
    from quadriga.tags import TAG_DOCS, TAGS

    tags = {t.strip().lower() for value in given or () for t in value.split(",") if t.strip()}
    if not tags:
        if given:
            raise ConfigError(
                f"--where {given[-1]!r} names no tag; give one or a comma list, e.g. "
                f"--where mcmc,needs-score. The tags are listed in {TAG_DOCS}.",
                key="--where",
            )
        return tags

    for tag in sorted(tags):
        if tag not in TAGS:
            raise ConfigError(
                f"unknown tag '{tag}'.{suggest(tag, TAGS)} The tags are listed in {TAG_DOCS}.",
                key="--where",
            )
    return tags


def _print_tags(reg: Registry, as_json: bool, kind: str | None = None) -> int:
    """``quadriga list --tags``: every tag, its meaning and how many installed components declare it.

    With ``kind`` (``--kind``) only components of that kind are counted.
    """
    from quadriga.cli.output import print_json, print_table, print_text
    from quadriga.tags import TAGS

    count = {tag: 0 for tag in TAGS}
    for spec in reg.components():
        if kind is not None and spec.kind != kind:
            continue
        for tag in spec.tags:
            count[tag] = count.get(tag, 0) + 1
    if as_json:
        print_json([dict(tag=t, meaning=m, components=count[t]) for t, m in TAGS.items()])
        return 0
    con = console()
    rows = [[t, str(count[t]), m] for t, m in TAGS.items()]
    print_table(con, ["tag", "n", "meaning"], rows, key_columns=2, wrap="meaning", right=["n"])
    among = f"installed {kind}s" if kind else "installed components"
    print_text(con, f"n: {among} declaring it; find them: `quadriga list --where TAG`.")
    return 0


def _not_installed(reg: Registry, kind: str | None) -> list[Entry]:
    """The catalogued distributions none of whose plugins is installed (that provide ``kind``)."""
    from quadriga.catalogue import not_installed

    return [e for e in not_installed(reg.plugins) if kind is None or e.names.get(kind)]


def _disabled(reg: Registry, kind: str | None) -> list[Entry]:
    """The catalogued distributions installed but disabled (``--disable``), none of whose plugins loaded."""
    from quadriga.catalogue import catalogue
    from quadriga.registry.specs import normalize_name

    states: dict[str, set[str]] = {}
    for status in reg.plugins.values():
        states.setdefault(normalize_name(status.distribution), set()).add(status.status)
    return [
        e
        for e in catalogue().values()
        if states.get(e.distribution) == {"disabled"} and (kind is None or e.names.get(kind))
    ]


def _print_text(con: Console, text: str) -> None:
    """:func:`quadriga.cli.output.print_text`, without importing rich for a line that fits.

    A one-line plain ASCII ``text`` no wider than the console is printed as it is (the same
    characters; off a terminal no rich is imported); anything else is wrapped at words.
    """
    if len(text) <= con.width and "\n" not in text and text.isascii() and text.isprintable():
        con.print(text, markup=False, emoji=False, soft_wrap=True)
        return
    from quadriga.cli.output import print_text

    print_text(con, text)


def _print_not_installed(
    con: Console, absent: list[Entry], disabled: list[Entry], *, full: bool, filtered: bool
) -> None:
    """The ``--all`` section: catalogued distributions disabled or not installed, and their commands."""
    print_text = _print_text

    if disabled:
        names = ", ".join(e.distribution for e in disabled)
        print_text(con, f"installed, disabled (--disable or QUADRIGA_DISABLE): {names}")
    if not absent:
        rest = "The other plugins" if disabled else "Every plugin"
        print_text(con, f"{rest} of the repository's catalogue {'are' if disabled else 'is'} installed.")
        return
    from quadriga.cli.output import print_table

    rows = []
    for e in absent:
        provides = "; ".join(f"{k} {', '.join(v)}" for k, v in e.names.items())
        summary = f"{e.summary}. Provides: {provides}" if full and provides else e.summary
        rows.append([e.distribution, summary])
    print_table(
        con,
        ["distribution", "summary"],
        rows,
        title="[bold]not installed[/] (from a clone of the repository, in its root directory)",
        wrap="summary",
        one_line=not full,
    )
    if filtered:
        print_text(con, "(--where does not filter these: a plugin's tags are known once it is installed)")
    con.print("install with:")
    for e in absent:
        con.print(f"  {e.install}", soft_wrap=True, highlight=False, markup=False)


def _write_plain_table(
    con: Console, title: str, rows: list[list[str]], columns: list[str] | None = None
) -> bool:
    """Write one distribution's one-line table as plain text; False when it needs rich.

    The same characters as :func:`quadriga.cli.output.print_table` with ``one_line=True``
    prints on a console that is not a terminal (``rich.box.SIMPLE_HEAD``, the summary cut to
    the room left with "…", no trailing spaces), written in one call instead of rendered
    through a rich ``Table`` (the larger part of the time of ``quadriga list``). Rows whose
    cells need rich's measuring (tabs, newlines, characters not one cell wide) and tables
    wider than the console (which rich shrinks) are left to ``print_table``.

    Args:
        con: the console written to (its ``width`` and ``file``).
        title: printed above the table.
        rows: one string per column; the last column is the summary.
        columns: the headers (default ``kind``, ``name``, ``summary``).
    """
    columns = columns or ["kind", "name", "summary"]
    width = con.width  # looked up once (off a terminal, each look asks the stream whether it is one)
    text = [title, *columns, *(c for row in rows for c in row)]
    if not all((t.isascii() and t.isprintable()) or _one_cell_each(t) for t in text):
        return False
    widths = [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(columns)]
    # as print_table sizes the free-text column: the room left (a line is sum(widths) +
    # 3 * columns - 1 characters), at least its header, so that it is cut with "…", not cropped
    room = width + 1 - sum(w + 3 for w in widths[:-1]) - 3
    widths[-1] = max(len(columns[-1]), min(widths[-1], room))
    # wider than the console (a narrow one), rich's Table takes the excess evenly from the
    # columns (round() as rich.Table rounds), the key columns keep their minimum width, and
    # lines are cropped
    excess = sum(widths) + 3 * len(widths) - 1 - width
    if excess > 0:
        remaining, ratio = excess, len(columns)
        for _ in range(len(columns) - 1):
            remaining -= round(remaining / ratio)
            ratio -= 1
        widths[-1] -= min(widths[-1] + 1, remaining)
    total = sum(widths) + 3 * len(widths) - 1
    if len(title) > width or widths[-1] < len(columns[-1]):
        return False

    def cut(cell: str, width: int) -> str:
        return cell if len(cell) <= width else cell[: width - 1] + "…"

    def line(cells: list[str]) -> str:
        return " " + "   ".join(cut(c, w).ljust(w) for c, w in zip(cells, widths, strict=True))

    out = [title, "", line(columns), " " + "─" * (total - 2), *(line(row) for row in rows), ""]
    con.file.write("".join(ln[:width].rstrip() + "\n" for ln in out))
    return True


def _one_cell_each(text: str) -> bool:
    """Whether every character of ``text`` is printable and one terminal cell wide."""
    from quadriga.cli._common import cell_len  # rich's cell_len, without importing rich for text like 'è'

    return text.isprintable() and cell_len(text) == len(text)
