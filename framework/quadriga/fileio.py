"""File I/O of runs and sweeps: atomic writes, directory names, and no writing through symlinks.

Every file of a run or sweep is written atomically (a temporary file in the same
directory, then ``os.replace``), so a crash leaves either the old or the new content.
Inside a run or sweep directory nothing is written through a symbolic link: a link
could send ``metrics.jsonl``, ``stages/`` or a whole run elsewhere on disk, so
:func:`refuse_symlinks` raises a :class:`~quadriga.errors.ConfigError` instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from quadriga.errors import ConfigError

__all__ = [
    "append_jsonl",
    "atomic_path",
    "atomic_write_json",
    "atomic_write_text",
    "refuse_symlinks",
    "safe_name",
    "stage_dir_name",
]


def refuse_symlinks(path: Path, root: Path | None = None) -> None:
    """Raise if ``path``, or any directory between ``root`` and it (``root`` included), is a symlink.

    Args:
        path: a file or directory about to be written.
        root: the run or sweep directory containing it; ``None`` checks ``path`` alone.

    Raises:
        ConfigError: naming the link and what to do.
    """
    path = Path(path)
    chain = [path]
    if root is not None:
        root = Path(root)
        try:
            rel = path.relative_to(root)
        except ValueError:
            rel = None
        if rel is not None:
            chain = [root] + [root.joinpath(*rel.parts[: i + 1]) for i in range(len(rel.parts))]
    for p in chain:
        if p.is_symlink():
            raise ConfigError(
                f"'{p}' is a symbolic link; quadriga does not write through links inside a run or "
                "sweep directory. Replace it with a real directory or file, or choose another --out."
            )


def _readable(path: str) -> None:
    """Give a temporary file the permissions a plain ``open`` would (mkstemp makes it 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


@contextlib.contextmanager
def atomic_path(path: Path, suffix: str = ".tmp") -> Iterator[str]:
    """Yield a temporary file name next to ``path``; on success it replaces ``path`` atomically.

    The temporary file gets the permissions a plain ``open`` would give; on error it is removed
    and ``path`` is left as it was.

    Raises:
        ConfigError: ``path`` or its directory is a symbolic link.
    """
    path = Path(path)
    refuse_symlinks(path.parent)
    refuse_symlinks(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    os.close(fd)
    try:
        yield tmp
        _readable(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file in the same directory, then ``os.replace``)."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)


def atomic_write_json(path: Path, data: Any) -> None:
    """Atomically write ``data`` as indented JSON (small tensors as lists, NaN/inf as strings)."""
    from quadriga.artifacts import jsonable

    atomic_write_text(path, json.dumps(jsonable(data), indent=2, sort_keys=False) + "\n")


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line to ``path`` (refusing a symlink).

    Raises:
        ConfigError: ``path`` is a symbolic link.
    """
    from quadriga.artifacts import jsonable

    refuse_symlinks(path)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o666)
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(jsonable(record)) + "\n")


def safe_name(name: str) -> str:
    """A directory-safe version of ``name``: letters, digits, ``.``, ``_``, ``-`` only, never ``..``.

    Lossy (``mala`` and ``mala_`` give the same result): use :func:`stage_dir_name` where names
    must stay distinct.
    """
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "unnamed"
    return cleaned[:80]


def stage_dir_name(name: str) -> str:
    """A directory name for a stage, distinct for distinct names (``mala`` and ``mala_`` differ).

    Letters, digits, ``.``, ``_``, ``-`` and ``~`` are kept; every other character becomes ``%XX``
    (its UTF-8 bytes), so ``dqn[0]`` is ``dqn%5B0%5D``. A name longer than 100 characters is
    cut and suffixed with 16 hex digits of its SHA-256.
    """
    import hashlib
    from urllib.parse import quote

    encoded = quote(name, safe="-_")
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    if len(encoded) > 100:
        encoded = encoded[:80] + "-" + hashlib.sha256(name.encode()).hexdigest()[:16]
    return encoded
