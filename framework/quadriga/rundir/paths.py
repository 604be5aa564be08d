"""Creating run directories: :func:`make_dir` and :func:`new_run_dir`.

:func:`make_dir` creates any directory or says in one sentence why it cannot be;
:func:`new_run_dir` creates ``root/<pipeline>/<UTC timestamp>``.
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

from quadriga.errors import ConfigError, QuadrigaError
from quadriga.fileio import refuse_symlinks, safe_name


def make_dir(path: Path, flag: str | None = None) -> None:
    """Create the directory ``path`` (and its parents), or say in one sentence why it cannot be.

    Raises:
        ConfigError: ``path`` or a parent is a file, or the directory cannot be created or written
            (permissions, read-only file system); ``flag`` (``"--out"``) names the option at fault.
    """
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        for p in [path, *path.parents]:  # the file in the way, named (looked for only on failure)
            if p.exists() and not p.is_dir():
                what = "is a file" if p == path else f"lies below '{p}', which is a file"
                raise ConfigError(f"'{path}' {what}; give a directory.", key=flag) from None
        raise ConfigError(
            f"cannot create the directory '{path}': {exc.strerror or exc}. Choose a writable place.",
            key=flag,
        ) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(f"the directory '{path}' is not writable. Choose a writable place.", key=flag)


def new_run_dir(root: Path, pipeline_name: str) -> Path:
    """Create ``root/<pipeline>/<UTC timestamp>`` (a suffix is added if it exists) and return it."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    base = Path(root) / safe_name(pipeline_name)
    refuse_symlinks(base)
    make_dir(base)
    for i in range(1000):
        candidate = base / (stamp if i == 0 else f"{stamp}-{i}")
        try:
            candidate.mkdir(parents=True, exist_ok=False)
            return candidate
        except FileExistsError:
            continue
    raise QuadrigaError(f"could not create a run directory under {base}")
