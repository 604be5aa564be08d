"""Installed versions, read from the distributions' metadata (``importlib.metadata``), in one place."""

from __future__ import annotations

import importlib.metadata as md
from functools import cache

__all__ = ["version_of"]


@cache
def version_of(distribution: str) -> str:
    """The installed version of ``distribution`` (e.g. ``"quadriga"``, ``"torch"``), or ``""`` when absent.

    Reads the metadata only, so nothing is imported.
    """
    try:
        return md.version(distribution)
    except md.PackageNotFoundError:
        return ""
