"""Further subcommands (``sweep``, ``compare``, ``new``) registered on the CLI parser.

Kept apart from :mod:`quadriga.cli` so that each subcommand's module is imported
only when it runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

__all__ = ["EXTENSION_COMMANDS", "add_extension_commands"]

EXTENSION_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {}


def add_extension_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add the extension subcommands to ``sub`` (an argparse subparsers object)."""
    return None
