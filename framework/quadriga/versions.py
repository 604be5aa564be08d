"""Installed versions, read from the distributions' metadata (``importlib.metadata``), in one place."""

from __future__ import annotations

import importlib.metadata as md
import re
from functools import cache

__all__ = ["header_fields", "version_of"]


@cache
def version_of(distribution: str) -> str:
    """The installed version of ``distribution`` (e.g. ``"quadriga"``, ``"torch"``), or ``""`` when absent.

    Reads the metadata only, so nothing is imported.
    """
    try:
        return md.version(distribution)
    except md.PackageNotFoundError:
        return ""


#: a header line's name, as the e-mail parser accepts it (printable ASCII but space and colon)
_HEADER_NAME = re.compile(r"[\041-\071\073-\176]+")


def header_fields(dist: md.Distribution, fields: tuple[str, ...]) -> dict[str, str] | None:
    """The one-line headers ``fields`` (``("Name", "Version")``) of a distribution's metadata file.

    Read from ``METADATA`` (or ``PKG-INFO``) without parsing the rest: ``dist.metadata`` parses
    the whole file as an e-mail message (its long description included), again at every access,
    which for every installed distribution is most of a fresh process's first run. The values are
    what ``dist.metadata[field]`` gives for a header on one line.

    Returns:
        ``{field: value}``, or ``None`` (the caller then asks ``dist.metadata``) when the file is
        missing, a field is absent from the header block, empty, or continues on the next line, or
        a line before the fields is not a header (where the e-mail parser ends the header block).
    """
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO")
    if not text:
        return None
    wanted = {f.lower(): f for f in fields}
    found: dict[str, str] = {}
    lines = text.split("\n", 200)[:200]  # the header block comes first
    for i, line in enumerate(lines):
        if line[:1] in (" ", "\t"):
            continue  # the continuation of an earlier (unwanted) header
        if not line.strip():
            break  # the end of the headers
        name, colon, value = line.partition(":")
        if not colon or not _HEADER_NAME.fullmatch(name):
            return None  # not a header line: the e-mail parser would end the headers here
        field = wanted.get(name.lower())
        if field is None or field in found:
            continue
        following = lines[i + 1] if i + 1 < len(lines) else ""
        value = value.lstrip(" \t").rstrip("\r\n")
        if following[:1] in (" ", "\t") or not value:
            return None
        found[field] = value
        if len(found) == len(fields):
            break  # the rest of the block is not needed
    return found if len(found) == len(fields) else None
