"""What every subcommand shares: the console, the common options, the registry and its problems."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich_argparse import RawDescriptionRichHelpFormatter

if TYPE_CHECKING:
    from quadriga.registry import Registry

__all__ = [
    "Formatter",
    "Subparsers",
    "add_common_options",
    "console",
    "name_completer",
    "print_problems",
    "registry_for",
]

#: what ``ArgumentParser.add_subparsers`` returns; each command module adds its parser to it
Subparsers = argparse._SubParsersAction  # the class is private in argparse, public in its type stubs


class Formatter(RawDescriptionRichHelpFormatter):
    """The help formatter of every parser: rich colours, text wrapped to the terminal, examples verbatim.

    In descriptions and epilogs, lines that start with a space (examples, TOML), blank lines and
    lines ending in ``:`` (headers such as ``examples:``) are kept as written; the other lines
    are paragraphs, joined and wrapped at spaces to the terminal width. Argument help is wrapped
    as by argparse. Markup is off, so that ``[pipeline]`` in a help text or a TOML example
    prints as written.
    """

    help_markup = False
    text_markup = False

    def _rich_fill_text(self, text: Any, width: int, indent: Any) -> Any:
        """``text`` (a :class:`rich.text.Text`) with its paragraphs wrapped to ``width``."""
        from rich.text import Text

        out: list[Text] = []
        paragraph: list[Text] = []

        def flush() -> None:
            if paragraph:
                joined = Text(" ").join(line for line in paragraph)
                out.extend(indent + line for line in self._rich_split_lines(joined, width))
                paragraph.clear()

        for line in text.split():
            plain = line.plain
            if not plain.strip() or plain[:1].isspace() or plain.rstrip().endswith(":"):
                flush()
                out.append(indent + line)
            else:
                paragraph.append(line)
        flush()
        return Text("\n").join(out) + "\n\n"


def console(stderr: bool = False) -> Console:
    """A rich console without syntax highlighting (numbers and paths print as written)."""
    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def add_common_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--debug``, ``--disable PLUGIN`` and ``--no-cache`` to ``parser``.

    Both use ``argparse.SUPPRESS`` defaults, so that the options can be given before or
    after the subcommand without the subparser's default overwriting the main parser's value.
    """
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
    parser.add_argument(
        "--no-cache",
        action="store_true",
        default=argparse.SUPPRESS,
        help="discover the plugins afresh instead of reusing the registry cache "
        "(QUADRIGA_NO_CACHE=1 does the same)",
    )


def registry_for(args: argparse.Namespace) -> Registry:
    """The process-wide registry, without the plugins named by ``--disable``; cached unless ``--no-cache``."""
    from quadriga.registry import get_registry

    return get_registry(
        disable=getattr(args, "disable", None) or (), cache=not getattr(args, "no_cache", False)
    )


def name_completer(*kinds: str) -> Callable[..., Iterable[str]]:
    """An argcomplete completer offering the registered names of ``kinds`` (``"pipeline"``, ``"claim"``, ...).

    Shell completion runs the command with the partial line; registration is cheap (no plugin
    algorithm is imported), so the names come from the registry itself.
    """

    def complete(prefix: str, parsed_args: argparse.Namespace, **_: Any) -> Iterable[str]:
        reg = registry_for(parsed_args)
        names = {s.name for s in reg.specs() if s.kind in kinds}
        if "distribution" in kinds:
            names |= {s.distribution for s in reg.specs() if s.kind == "claim"}
        return sorted(n for n in names if n.startswith(prefix))

    return complete


def print_problems(con: Console, reg: Registry) -> None:
    """Print broken plugins and name collisions, each with what to do about it."""
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
