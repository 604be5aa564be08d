"""Where quadriga-std keeps files between runs."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_root"]


def cache_root() -> Path:
    """``$QUADRIGA_CACHE_DIR`` (default ``$XDG_CACHE_HOME/quadriga`` or ``~/.cache/quadriga``), read now.

    The same root as the framework's registry cache; callers add their own subdirectory.
    """
    base = os.environ.get("QUADRIGA_CACHE_DIR")
    if not base:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(cache, "quadriga")
    return Path(base)
