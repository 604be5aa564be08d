"""What every subcommand shares: the console, the common options, the registry and its problems.

Nothing here imports rich at import time: the help formatter builds rich's formatter only when a
help text is printed, and :func:`console` writes plain lines itself when the output is not a
terminal (``quadriga list | less``, a test capturing stdout), building a rich ``Console`` only for
what needs one. ``quadriga list`` then starts without importing rich at all.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

from quadriga.markup import escape

if TYPE_CHECKING:
    from rich.console import Console

    from quadriga.registry import Registry

__all__ = [
    "Formatter",
    "Subparsers",
    "add_common_options",
    "cell_len",
    "console",
    "name_completer",
    "print_problems",
    "registry_for",
]

#: what ``ArgumentParser.add_subparsers`` returns; each command module adds its parser to it
Subparsers = argparse._SubParsersAction  # the class is private in argparse, public in its type stubs


def _rich_formatter_class() -> type[argparse.HelpFormatter]:
    """rich-argparse's formatter with markup off (``[pipeline]`` in a help text prints as written)."""
    from rich_argparse import RawDescriptionRichHelpFormatter

    class RichFormatter(RawDescriptionRichHelpFormatter):
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

    return RichFormatter


class Formatter(argparse.RawDescriptionHelpFormatter):
    """The help formatter of every parser: rich colours, text wrapped to the terminal, examples verbatim.

    In descriptions and epilogs, lines that start with a space (examples, TOML), blank lines and
    lines ending in ``:`` (headers such as ``examples:``) are kept as written; the other lines
    are paragraphs, joined and wrapped at spaces to the terminal width. Argument help is wrapped
    as by argparse.

    argparse makes a formatter for every ``add_argument`` (to check the metavar) and for every
    usage or help text. This class does the metavar check itself and hands the help-producing
    calls to rich-argparse's ``RawDescriptionRichHelpFormatter`` (markup off, so that ``[pipeline]``
    in a help text or a TOML example prints as written), which is made, and rich imported, only
    when a usage or help text is printed.
    """

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ) -> None:
        super().__init__(prog, indent_increment, max_help_position, width)
        self._q_args = (prog, indent_increment, max_help_position, width)
        self._q_rich: argparse.HelpFormatter | None = None

    def _q_formatter(self) -> argparse.HelpFormatter:
        if self._q_rich is None:
            self._q_rich = _rich_formatter_class()(*self._q_args)
        return self._q_rich

    def add_usage(self, *args: Any, **kwargs: Any) -> None:
        """Forward argparse's ``add_usage`` to the rich-argparse formatter (made on first use)."""
        self._q_formatter().add_usage(*args, **kwargs)

    def add_text(self, text: str | None) -> None:
        """Forward argparse's ``add_text`` (a description or epilog), on the rich-argparse formatter."""
        self._q_formatter().add_text(text)

    def start_section(self, heading: str | None) -> None:
        """Forward argparse's ``start_section`` (a group heading) to the rich-argparse formatter."""
        self._q_formatter().start_section(heading)

    def end_section(self) -> None:
        """Forward argparse's ``end_section``, on the rich-argparse formatter."""
        self._q_formatter().end_section()

    def add_argument(self, action: argparse.Action) -> None:
        """Forward argparse's ``add_argument`` (one option's help line), on the rich-argparse formatter."""
        self._q_formatter().add_argument(action)

    def add_arguments(self, actions: Iterable[argparse.Action]) -> None:
        """Forward argparse's ``add_arguments``, on the rich-argparse formatter."""
        self._q_formatter().add_arguments(actions)

    def format_help(self) -> str:
        """The help text rich-argparse renders (colours on a terminal, plain text otherwise)."""
        return self._q_formatter().format_help()


# --- rich markup, as rich.markup reads it (the plain text of a markup string; escaping is in
# quadriga.markup)
_RE_TAGS = re.compile(r"((\\*)\[([a-z#/@][^[]*?)])")
_RE_WORD = re.compile(r"\s*\S+\s*")
_RE_EMOJI = re.compile(r":\S*?:")


#: code point ranges [start, stop) that rich counts one cell wide: Latin-1 and Latin extended,
#: Greek and Cyrillic, dashes, quotes and the ellipsis, arrows and mathematical operators, box drawing
#: (tests/test_cli_plain_console.py checks every one against rich's table)
ONE_CELL = (
    (0x20, 0x7F),
    (0xA0, 0x300),
    (0x370, 0x483),
    (0x2010, 0x2028),
    (0x2030, 0x205F),
    (0x2190, 0x231A),
    (0x2500, 0x2580),
)


def cell_len(text: str) -> int:
    """``rich.cells.cell_len``: the terminal cells ``text`` takes; rich is imported only when needed.

    Text whose every character lies in :data:`ONE_CELL` takes one cell per character; any other
    text is measured by rich (wide East Asian characters, combining marks, emoji, controls).
    """
    for ch in text:
        code = ord(ch)
        if not any(start <= code < stop for start, stop in ONE_CELL):
            from rich.cells import cell_len as rich_cell_len

            return int(rich_cell_len(text))
    return len(text)


def _plain_text(markup: str) -> str | None:
    """The characters rich prints for console markup ``markup`` (tags removed, escapes undone).

    As ``rich.markup.render`` reads it. None for what is left to rich: a closing tag that names
    its style (``[/bold]``) or closes nothing (rich raises), and ``@`` handler tags.
    """
    if "[" not in markup:
        return markup
    out: list[str] = []
    position = 0
    depth = 0
    for match in _RE_TAGS.finditer(markup):
        full, escapes, tag = match.groups()
        start, end = match.span()
        if start > position:
            out.append(markup[position:start].replace("\\[", "["))
        if escapes:
            slashes, escaped = divmod(len(escapes), 2)
            out.append("\\" * slashes)
            if escaped:
                out.append(full[len(escapes) :])
                position = end
                continue
        if tag.startswith("@"):
            return None
        if tag.startswith("/"):
            if tag[1:].strip() or not depth:
                return None
            depth -= 1
        else:
            depth += 1
        position = end
    if position < len(markup):
        out.append(markup[position:].replace("\\[", "["))
    return "".join(out)


def _wrap(text: str, width: int) -> list[str] | None:
    """``text`` (printable ASCII, no tab or newline) word-wrapped as rich's ``Text.wrap`` does it.

    Greedy over words with their trailing spaces (``rich._wrap.divide_line``), each line's
    trailing spaces cut only beyond ``width`` (``Text.rstrip_end``). None when a word is wider
    than the line (rich folds it): left to rich.
    """
    breaks: list[int] = []
    offset = 0
    for match in _RE_WORD.finditer(text):
        start, word = match.start(), match.group(0)
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:
            return None
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    lines = []
    for a, b in zip([0, *breaks], [*breaks, len(text)], strict=True):
        line = text[a:b]
        if len(line) > width:
            stripped = line.rstrip()
            line = line[: max(width, len(stripped))]
        lines.append(line)
    return lines


#: spaces (and tabs) before a line end, possibly followed by ANSI style codes
_TRAILING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)(?=\n|$)")


def _rich_console(stderr: bool, **options: Any) -> Console:
    """A rich ``Console(highlight=False, soft_wrap=False)`` whose lines off a terminal end without spaces.

    rich keeps the space at each word-wrap break and pads padded renderables to the full width;
    copied or redirected output then carries trailing spaces. On a terminal nothing is stripped
    (a live display relies on the padding to overwrite what it drew before).
    """
    from rich.console import Console

    class _StrippedConsole(Console):
        def _render_buffer(self, buffer: Iterable[Any]) -> str:
            text = super()._render_buffer(buffer)
            return text if self.is_terminal else _TRAILING.sub(r"\1", text)

    return _StrippedConsole(stderr=stderr, **{"highlight": False, "soft_wrap": False, **options})


class _PlainConsole:
    """A stand-in for ``rich.console.Console(highlight=False, soft_wrap=False)`` off a terminal.

    ``print`` of one string (console markup, printable ASCII, no emoji code) writes the same
    characters rich would, without importing rich; anything else (a table, other options, a
    terminal, Jupyter, Windows, ``TTY_COMPATIBLE``/``FORCE_COLOR``) and every other attribute go to
    a real rich ``Console`` made on first need, which then serves all later calls that need rich,
    and every print while it holds its output back (``capture()``, ``Live`` and the like see
    every print then: :meth:`_q_idle`).
    """

    def __init__(self, stderr: bool) -> None:
        object.__setattr__(self, "_q_stderr", stderr)
        object.__setattr__(self, "_q_real", None)
        object.__setattr__(self, "_q_widths", {})  # COLUMNS -> width: looked up once, not per line

    def _q_console(self) -> Console:
        real = self._q_real
        if real is None:
            real = _rich_console(self._q_stderr)
            object.__setattr__(self, "_q_real", real)
        return real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._q_console(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._q_console(), name, value)

    @property
    def file(self) -> Any:
        """The stream written to, looked up at each use (as rich does)."""
        if self._q_real is not None:
            return self._q_real.file
        return sys.stderr if self._q_stderr else sys.stdout

    @property
    def is_terminal(self) -> bool:
        """Whether rich would treat the output as a terminal (see :func:`_plain_ok`)."""
        if self._q_real is not None:
            return bool(self._q_real.is_terminal)
        return not _plain_ok(self.file)

    @property
    def width(self) -> int:
        """The width rich gives a console that is not a terminal: ``COLUMNS``, else a terminal's, else 80."""
        if self._q_real is not None or not _plain_ok(self.file):
            return int(self._q_console().width)
        return self._q_width()

    def _q_width(self) -> int:
        columns = os.environ.get("COLUMNS")
        width = self._q_widths.get(columns)
        if width is None:
            width = self._q_widths[columns] = _plain_width()
        return int(width)

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """``Console.print``: one markup string written as plain lines, anything else by rich."""
        if (
            self._q_idle()
            and len(objects) == 1
            and isinstance(objects[0], str)
            and set(kwargs) <= {"markup", "emoji", "highlight", "soft_wrap"}
        ):
            lines = self._q_plain_lines(
                objects[0], kwargs.get("markup"), kwargs.get("emoji"), bool(kwargs.get("soft_wrap"))
            )
            if lines is not None:
                self.file.write("".join(line + "\n" for line in lines))
                return
        self._q_console().print(*objects, **kwargs)

    def _q_idle(self) -> bool:
        """Whether a print may bypass rich: no rich console yet, or one that would write at once.

        A rich console made earlier (for a table) writes a plain string straight to its file when
        nothing holds its output back: no live display, no ``capture()`` or pager buffer, not
        recording, not quiet. A rich version without these attributes always gets the print.
        """
        real = self._q_real
        if real is None:
            return True
        try:
            return not (real.record or real.quiet or real._live_stack or real._buffer_index)
        except AttributeError:
            return False

    def _q_plain_lines(
        self, text: str, markup: bool | None, emoji: bool | None, soft_wrap: bool = False
    ) -> list[str] | None:
        """The lines rich would write for ``text``, or None when rich must do it.

        With ``soft_wrap`` (rich writes the text unwrapped, uncropped) ``text`` may hold newlines;
        each line is written as it is.
        """
        if not _plain_ok(self.file):
            return None
        plain = text if markup is False else _plain_text(text)
        if plain is None:
            return None
        lines = plain.split("\n") if soft_wrap else [plain]
        if not all(line.isascii() and line.isprintable() for line in lines):
            return None
        if emoji is not False and _RE_EMOJI.search(text):
            return None  # an emoji code rich may replace
        width = self._q_width() if self._q_real is None else int(self._q_real.width)
        wrapped = lines if soft_wrap else _wrap(plain, width)
        return None if wrapped is None else [line.rstrip(" \t") for line in wrapped]


def _plain_ok(file: Any) -> bool:
    """Whether rich would write ``file`` as a plain stream (no terminal, no Jupyter, not Windows).

    As ``rich.console.Console.is_terminal`` decides it: ``TTY_COMPATIBLE`` (0/1), then
    ``FORCE_COLOR``, then ``file.isatty()``. IPython in the process, IDLE or Windows: always rich.
    """
    if sys.platform == "win32" or "IPython" in sys.modules or file is None:
        return False
    stdin = sys.stdin
    if stdin is not None and str(getattr(stdin, "__module__", "")).startswith("idlelib"):
        return False
    tty = os.environ.get("TTY_COMPATIBLE", "")
    if tty in ("0", "1"):
        return tty == "0"
    if os.environ.get("FORCE_COLOR") is not None:
        return os.environ["FORCE_COLOR"] == ""
    isatty = getattr(file, "isatty", None)
    try:
        return not (isatty is not None and isatty())
    except ValueError:
        return True


def _plain_width() -> int:
    """The width rich gives a console off a terminal: ``COLUMNS``, else a terminal of fds 0-2, else 80."""
    width = 0
    for fd in (0, 1, 2):
        try:
            width = os.get_terminal_size(fd).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        width = int(columns)
    return width or 80


def console(stderr: bool = False) -> Console:
    """A rich console without syntax highlighting (numbers and paths print as written).

    On a terminal, a ``rich.console.Console``; otherwise a stand-in that prints plain strings
    itself (the same characters) and makes the rich console only when something needs it. Off a
    terminal no line ends in spaces (:func:`_rich_console`).
    """
    stream = sys.stderr if stderr else sys.stdout
    if _plain_ok(stream):
        return cast("Console", _PlainConsole(stderr))
    return _rich_console(stderr)


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


def add_kind_option(parser: argparse.ArgumentParser, lead: str) -> None:
    """Add ``--kind KIND``: a component kind, ``pipeline`` or ``claim`` (:data:`SPEC_KINDS`).

    Its help is ``lead`` followed by the kinds, e.g. ``"only this kind: sampler, ..., claim"``.
    """
    from quadriga.registry import SPEC_KINDS

    parser.add_argument(
        "--kind", choices=list(SPEC_KINDS), metavar="KIND", help=f"{lead}: {', '.join(SPEC_KINDS)}"
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
