"""``quadriga new plugin NAME``: render the plugin template (copier)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

__all__ = ["add_new_command"]


def add_new_command(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``new`` to the CLI (filled in by the plugin template support)."""
    return None
