"""File I/O of runs and sweeps: atomic writes, directory names, and no writing through symlinks.

Every file of a run or sweep is written atomically (a temporary file in the same
directory, then ``os.replace``), so a crash leaves either the old or the new content.
Inside a run or sweep directory nothing is written through a symbolic link: a link
could send ``metrics.jsonl``, ``stages/`` or a whole run elsewhere on disk, so
:func:`refuse_symlinks` raises a :class:`~quadriga.errors.ConfigError` instead.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import re
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path, PurePath
from typing import Any

from quadriga.errors import ConfigError, QuadrigaError
from quadriga.serialization import indented_json, jsonable

#: the lock file of a run or sweep run directory (see :func:`lock_dir`)
LOCK = ".lock"
#: the locks this process holds: resolved directory -> [file descriptor, depth]
_HELD: dict[str, list[int]] = {}


class DirectoryLocked(QuadrigaError):
    """Another process holds the lock of a run directory (it is running there)."""


@contextlib.contextmanager
def lock_dir(directory: Path, *, wait: bool = False) -> Iterator[None]:
    """Hold an exclusive lock on ``directory`` (``fcntl.flock`` on ``directory/.lock``) while in the block.

    Re-entrant within a process (a sweep worker holds it around the run, which takes it again).
    The lock dies with its process, so a killed run never leaves a stale lock. The holder writes
    its process id and host name into the lock file (read by :func:`run_alive`).

    Args:
        directory: an existing run directory.
        wait: block until the other holder is done, instead of raising.

    Raises:
        DirectoryLocked: another process holds it and ``wait`` is false.
        ConfigError: ``directory/.lock`` is a symbolic link.
    """
    import fcntl

    key = os.path.realpath(directory)
    if key in _HELD:
        _HELD[key][1] += 1
        try:
            yield
        finally:
            _HELD[key][1] -= 1
        return
    path = Path(directory) / LOCK
    refuse_symlinks(path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise DirectoryLocked(
                f"'{directory}' is in use by another quadriga process (it is running there). Wait for it "
                "to finish, or use another directory."
            ) from None
        _HELD[key] = [fd, 1]
        with contextlib.suppress(OSError):  # who holds it, for run_alive (the lock itself decides)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {_host()}\n".encode(), 0)
        try:
            yield
        finally:
            del _HELD[key]
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def held_here(directory: Path) -> bool:
    """Whether this process holds the lock of ``directory`` (see :func:`lock_dir`)."""
    return os.path.realpath(directory) in _HELD


def held_elsewhere(directory: Path) -> bool:
    """Whether another process holds the lock of ``directory`` right now (see :func:`lock_dir`)."""
    import fcntl

    if os.path.realpath(directory) in _HELD:
        return False
    path = Path(directory) / LOCK
    if not path.is_file() or path.is_symlink():
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _host() -> str:
    import socket

    return socket.gethostname()


def lock_owner(directory: Path) -> tuple[int, str] | None:
    """``(process id, host name)`` the last holder of ``directory``'s lock wrote, ``None`` if unknown."""
    try:
        with open(Path(directory) / LOCK, encoding="utf-8") as f:
            pid, host = f.read(400).split()
        return int(pid), host
    except (OSError, ValueError):
        return None


def run_alive(directory: Path) -> bool | None:
    """Whether the process that runs in ``directory`` (a run or sweep directory) is still alive.

    The one decision every reader of a ``running`` record makes (:meth:`quadriga.rundir.RunDir.read_status`):
    a record that says ``running`` while this is false was left by a process that was killed
    (SIGKILL, ``os._exit``, a crash, a power cut) and never wrote its end.

    Alive when this process holds the lock (:func:`lock_dir`), or another process holds it and,
    when that holder wrote this host's name, its process id still exists (a child forked by the
    run keeps the lock's descriptor after the run itself was killed; a holder on another host
    sharing the file system is trusted on the lock alone). Not alive when nobody holds it: the
    lock dies with its process.

    Returns:
        ``True`` or ``False``; ``None`` when ``directory`` has no lock file (nothing ran there under
        a lock, so nothing can be said).
    """
    if held_here(directory):
        return True
    if not (Path(directory) / LOCK).is_file():
        return None
    if not held_elsewhere(directory):
        return False
    owner = lock_owner(directory)
    if owner is None or owner[1] != _host():
        return True
    try:
        os.kill(owner[0], 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by another user
        return True
    return True


__all__ = [
    "LOCK",
    "DirectoryLocked",
    "append_jsonl",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "held_elsewhere",
    "held_here",
    "lock_dir",
    "lock_owner",
    "refuse_symlinks",
    "run_alive",
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
    if isinstance(path, PurePath) and (root is None or isinstance(root, PurePath)):
        if _refuse_links_below(str(path), None if root is None else str(root)):
            return
    path = Path(path)
    rel = None
    if root is not None:
        root = Path(root)
        try:
            rel = path.relative_to(root)
        except ValueError:
            rel = None
    if rel is None:
        _refuse_link(str(path))
        return
    here = str(root)  # root, then each directory down to path: one lstat each, no Path objects
    _refuse_link(here)
    for part in rel.parts:
        here = os.path.join(here, part)
        _refuse_link(here)


def _refuse_links_below(path: str, root: str | None) -> bool:
    """:func:`refuse_symlinks` on the strings of two ``Path`` objects; ``False`` when it cannot tell.

    A ``Path``'s string is normalised (no empty or ``.`` parts, no trailing ``/``), so when it
    starts with ``root + "/"`` the rest is ``path.relative_to(root)``, its parts split by ``/``.
    Other cases (``root`` of ``.`` or ``/``, ``path`` outside ``root``) are left to the caller.
    """
    if root is None:
        _refuse_link(path)
        return True
    if path == root:
        _refuse_link(root)
        return True
    if root in (".", "/") or not path.startswith(root + "/"):
        return False
    _refuse_link(root)
    here = root
    for part in path[len(root) + 1 :].split("/"):
        here = f"{here}/{part}"
        _refuse_link(here)
    return True


#: the errors of ``lstat`` that mean "no link here" (as :meth:`pathlib.Path.is_symlink` ignores them)
_NO_LINK = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def _refuse_link(path: str) -> None:
    """Raise :class:`ConfigError` if ``path`` is a symbolic link (missing: not one)."""
    try:
        link = stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError as exc:
        if exc.errno not in _NO_LINK:
            raise
        return
    except ValueError:  # an embedded NUL, as Path.is_symlink
        return
    if link:
        raise ConfigError(
            f"'{Path(path)}' is a symbolic link; quadriga does not write through links inside a run or "
            "sweep directory. Replace it with a real directory or file, or choose another --out."
        )


#: how many temporary names :func:`_create_temporary` tries before giving up (as ``tempfile``)
_TEMPORARY_TRIES = 100


def _create_temporary(path: Path, suffix: str) -> tuple[int, str]:
    """Create a new, empty temporary file next to ``path``; return its open descriptor and name.

    Named ``.<name>.<8 random hex digits><suffix>`` (created exclusively, never through a link),
    with the permissions a plain ``open`` would give (``0o666`` less the umask), so nothing is
    changed afterwards. ``path``'s directory is made only when it is missing.

    Raises:
        FileExistsError: no free name after :data:`_TEMPORARY_TRIES` tries.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(_TEMPORARY_TRIES):
        tmp = os.path.join(path.parent, f".{path.name}.{os.urandom(4).hex()}{suffix}")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
        except FileNotFoundError:
            if path.parent.is_dir():
                raise
            path.parent.mkdir(parents=True, exist_ok=True)
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(path.parent))


def _replaced(path: Path, tmp: str, exc: BaseException) -> None:
    """Clean up after a failed write of ``tmp`` (meant to replace ``path``): free it, name a full disk.

    The file is emptied before it is removed: a library's writer that failed may still hold it
    open (torch's zip writer, kept alive by the traceback until the error is handled), and an
    unlinked file keeps its blocks until its last descriptor closes. Emptied, its space is free
    for the failure's own records (``error.txt``, ``status.json``) on a full disk.

    Raises:
        OSError: ``ENOSPC`` when ``exc`` is a library's ``RuntimeError`` hiding a full disk (torch's
            zip writer: "unexpected pos 64 vs 0").
    """
    with contextlib.suppress(OSError):
        os.truncate(tmp, 0)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    if isinstance(exc, RuntimeError) and _disk_full(path.parent):
        raise OSError(errno.ENOSPC, "No space left on device", str(path)) from exc


@contextlib.contextmanager
def atomic_path(path: Path, suffix: str = ".tmp") -> Iterator[str]:
    """Yield a temporary file name next to ``path``; on success it replaces ``path`` atomically.

    The temporary file exists (empty) when yielded, with the permissions a plain ``open`` would
    give; on error it is removed and ``path`` is left as it was.

    Raises:
        ConfigError: ``path`` or its directory is a symbolic link.
    """
    path = Path(path)
    refuse_symlinks(path.parent)
    refuse_symlinks(path)
    fd, tmp = _create_temporary(path, suffix)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException as exc:
        _replaced(path, tmp, exc)
        raise


def _disk_full(directory: Path) -> bool:
    """Whether the file system holding ``directory`` has under 1 MiB free (unknown: ``False``)."""
    try:
        return shutil.disk_usage(directory).free < 1 << 20
    except OSError:
        return False


def atomic_write_text(path: Path, text: str, *, checked: bool = False) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file in the same directory, then ``os.replace``).

    As :func:`atomic_path` and ``open(tmp, "w", encoding="utf-8")`` would, with one file opened
    and written once.

    Raises:
        ConfigError: ``path`` or its directory is a symbolic link.
        OSError: the file cannot be written (``ENOSPC`` on a full disk; the temporary file is removed).
    """
    atomic_write_bytes(path, text.encode("utf-8"), checked=checked)


def atomic_write_bytes(path: Path, data: bytes | memoryview, *, checked: bool = False) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file in the same directory, then ``os.replace``).

    One file opened and written once, with the permissions a plain ``open`` would give; on error
    the temporary file is emptied and removed and ``path`` is left as it was. ``checked``: the
    caller has just refused symbolic links on ``path`` and its directory (:func:`refuse_symlinks`
    from its run directory down, as :class:`quadriga.rundir.RunDir` does for its files), so they
    are not looked at again.

    Raises:
        ConfigError: ``path`` or its directory is a symbolic link.
        OSError: the file cannot be written (``ENOSPC`` on a full disk).
    """
    path = Path(path)
    if not checked:
        refuse_symlinks(path.parent)
        refuse_symlinks(path)
    fd, tmp = _create_temporary(path, ".tmp")
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as exc:
        _replaced(path, tmp, exc)
        raise


def atomic_write_json(path: Path, data: Any, *, checked: bool = False) -> None:
    """Atomically write ``data`` as indented JSON (small tensors as lists, NaN/inf as strings).

    ``checked`` as for :func:`atomic_write_bytes`.
    """
    atomic_write_text(path, indented_json(jsonable(data)) + "\n", checked=checked)


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line to ``path`` (refusing a symlink).

    Raises:
        ConfigError: ``path`` is a symbolic link.
    """
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


@functools.lru_cache(maxsize=4096)
def stage_dir_name(name: str) -> str:
    """A directory name for a stage, distinct for distinct names (``mala`` and ``mala_`` differ).

    Letters, digits, ``.``, ``_``, ``-`` and ``~`` are kept; every other character becomes ``%XX``
    (its UTF-8 bytes), so ``dqn[0]`` is ``dqn%5B0%5D``. A name longer than 100 characters is
    cut and suffixed with 16 hex digits of its SHA-256. A plain function of the name, kept for the
    process (a run asks for each stage's several times).
    """
    import hashlib
    from urllib.parse import quote

    encoded = quote(name, safe="-_")
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    if len(encoded) > 100:
        encoded = encoded[:80] + "-" + hashlib.sha256(name.encode()).hexdigest()[:16]
    return encoded
