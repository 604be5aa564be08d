"""Text read from run files, made safe for a terminal and for rich markup, without importing rich.

- :func:`strip_controls`: drop C0 and C1 control characters (newline and tab kept);
- :func:`escape`: ``rich.markup.escape`` after :func:`strip_controls`.

The command line (:mod:`quadriga.cli`), the progress display (:mod:`quadriga.progress_display`)
and the sweep summary's figure (:mod:`quadriga.summary`) use them on stage names, error messages
and other text a run directory holds.
"""

from __future__ import annotations

import re

__all__ = ["escape", "strip_controls"]

#: a markup tag as rich.markup reads it, with the backslashes before it
_RE_ESCAPE = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")

#: C0 and C1 control characters but newline and tab: a run file's text (a stage name, an error
#: message) could otherwise move the cursor, retitle the terminal or hide what follows
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> str:
    """``text`` without C0 and C1 control characters (newline and tab kept).

    For text read from run files before it reaches a terminal, a figure or a warning.
    """
    return _CONTROL.sub("", text)


def escape(markup: str) -> str:
    """``rich.markup.escape`` without importing rich, and without terminal control characters.

    ``[tag]`` in ``markup`` prints as written: the same regular expression and rule as rich 13-15
    (each ``[name...]`` gets a backslash, a trailing single backslash is doubled);
    ``tests/test_cli_plain_console.py`` checks it against rich's own on random strings. Control
    characters (escape sequences included; newline and tab kept) are removed first: text read
    from files reaches the terminal as text only.
    """
    markup = strip_controls(markup)

    def backslashes(match: re.Match[str]) -> str:
        slashes, text = match.groups()
        return f"{slashes}{slashes}\\{text}"

    markup = _RE_ESCAPE.sub(backslashes, markup)
    if markup.endswith("\\") and not markup.endswith("\\\\"):
        return markup + "\\"
    return markup
