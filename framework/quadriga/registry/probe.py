"""Plugin imports tried first in a child process, so that a plugin ending the process cannot end ours.

A plugin module may call ``os._exit`` at import, or crash the interpreter (a segfault in an
extension): nothing in-process can catch that, and ``quadriga list`` would die with it. So before
the registry imports a plugin module it has not seen import cleanly, :func:`probe` imports it in a
fresh interpreter (``sys.executable -c``, the same ``sys.path``), one child for all such plugins
in turn. A child that ends while importing one of them marks that plugin as ending the process
(:class:`Outcome` ``"exited"``, with its exit code or signal); one that runs past the import
deadline marks it ``"timeout"``; every other outcome (imported, or raised any exception, even
``SystemExit`` or ``KeyboardInterrupt``) leaves the plugin to the in-process import, which records
the real error.

Which plugins imported cleanly is kept in a record beside the registry cache
(``imports-<tag>.json`` in :func:`quadriga.registry.cache.cache_path`'s folder), keyed by the
distribution, its version and the entry point, together with the modification time and size of
the plugin module's files: a known plugin is imported in-process at once (no child), and one whose
distribution or files changed is probed again. So the child runs once per installed or edited
plugin, not per command (and once per command for a plugin that does not import cleanly: its
fix is then seen at once; the registry cache is not kept while a plugin is broken anyway). The
record is used with ``--no-cache`` too (it holds no discovery, only which imports are safe); a
record that cannot be read or written means probing again.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

import attrs

__all__ = ["ImportRecord", "Outcome", "module_files", "probe", "record_path"]

#: bump when the record's layout changes
FORMAT = 1

#: the child: imports each ``(name, value)`` in turn, writing ``start``/``ok``/``raised`` lines to fd
_CHILD = r"""
import json, os, sys
paths, todo, fd = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
sys.path[:] = paths
out = os.fdopen(fd, "w", buffering=1)
from importlib.metadata import EntryPoint
for name, value in todo:
    out.write("start " + name + "\n")
    try:
        EntryPoint(name, value, "quadriga").load()
    except BaseException:
        out.write("raised " + name + "\n")
    else:
        out.write("ok " + name + "\n")
out.close()
os._exit(0)
"""


@attrs.define
class Outcome:
    """What a probe found for one plugin.

    Attributes:
        state: ``"ok"`` (imported, or raised an exception: import it in-process), ``"exited"``
            (the import ended the child process) or ``"timeout"`` (still importing at the deadline).
        error: for ``"exited"`` and ``"timeout"``, the sentence the registry reports.
    """

    state: str
    error: str = ""


def record_path() -> str:
    """The import record's file: ``imports-<tag>.json`` beside the registry cache of this interpreter."""
    from quadriga.registry.cache import cache_path

    cache = cache_path()
    return str(cache.with_name(cache.name.replace("registry-", "imports-", 1)))


def _stat(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def module_files(value: str) -> dict[str, list[int] | None]:
    """The files of an imported entry point's module and its parent packages, with their stamps."""
    parts = value.partition(":")[0].strip().split(".")
    files: dict[str, list[int] | None] = {}
    for i in range(1, len(parts) + 1):
        path = getattr(sys.modules.get(".".join(parts[:i])), "__file__", None)
        if path:
            files[path] = _stat(path)
    return files


class ImportRecord:
    """The record of which plugin imports were clean (see module doc).

    Keys are ``"<distribution> <version> <entry-point name> = <value>"``; values are the stamps
    (modification time in ns, size) of the module's files, ``{path: [mtime_ns, size]}``.
    """

    def __init__(self) -> None:
        self._path = record_path()
        self._data: dict[str, Any] = {}
        self._changed = False
        try:
            with open(self._path, encoding="utf-8") as f:
                data = json.load(f)
            if (
                isinstance(data, dict)
                and data.get("format") == FORMAT
                and isinstance(data.get("imports"), dict)
            ):
                self._data = data["imports"]
        except Exception:  # missing, damaged, unreadable: probe again
            self._data = {}

    @staticmethod
    def key(distribution: str, version: str, name: str, value: str) -> str:
        """The record's key of one entry point."""
        return f"{distribution} {version} {name} = {value}"

    def known(self, key: str) -> bool:
        """Whether ``key`` imported cleanly before and its module's files are unchanged since."""
        files = self._data.get(key)
        if not isinstance(files, dict) or not files:
            return False
        return all(_stat(path) == stamp for path, stamp in files.items())

    def remember(self, key: str, files: dict[str, list[int] | None]) -> None:
        """Record that ``key`` imported cleanly, with the stamps of its module's files."""
        if files and self._data.get(key) != files:
            self._data[key] = files
            self._changed = True

    def save(self) -> None:
        """Write the record when it changed (silently skipped on any error: probing again is safe)."""
        if not self._changed:
            return
        try:
            os.makedirs(os.path.dirname(self._path), exist_ok=True)
            tmp = f"{self._path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"format": FORMAT, "imports": self._data}, f)
            os.replace(tmp, self._path)
            self._changed = False
        except Exception:
            return


def _ended(code: int) -> str:
    """How a child ended: ``"exit code 3"``, ``"signal SIGSEGV"``."""
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


def probe(todo: Sequence[tuple[str, str, str]], seconds: float) -> dict[str, Outcome]:
    """Import each ``(entry-point name, value, distribution)`` of ``todo`` in a child, in order.

    Args:
        todo: the entry points to try.
        seconds: the deadline of each import (``QUADRIGA_IMPORT_TIMEOUT``); the child's start-up
            does not count.

    Returns:
        ``{name: Outcome}`` for every entry of ``todo``: ``"exited"`` for the one during whose
        import a child ended (a new child then tries the rest), ``"timeout"`` for one past the
        deadline (the child is killed), ``"ok"`` for the others. When no child can be started
        (no ``sys.executable``), every entry is ``"ok"``: the in-process import is all there is.

    Raises:
        PluginImportInterrupted: Ctrl-C while a plugin was being imported in the child (killed).
    """
    outcomes: dict[str, Outcome] = {}
    left = list(todo)
    while left and sys.executable:
        current = _run_child(left, seconds, outcomes)
        if current is None:
            break
        left = left[[n for n, _, _ in left].index(current) + 1 :]
    for name, _, _ in todo:
        outcomes.setdefault(name, Outcome("ok"))
    return outcomes


def _run_child(left: list[tuple[str, str, str]], seconds: float, outcomes: dict[str, Outcome]) -> str | None:
    """One child over ``left``; fills ``outcomes``; returns the plugin it ended on (``None``: all done)."""
    from quadriga.errors import PluginImportInterrupted

    about = {name: (value, dist) for name, value, dist in left}
    pairs = [[name, value] for name, value, _ in left]
    read, write = os.pipe()
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, json.dumps(sys.path), json.dumps(pairs), str(write)],
            pass_fds=(write,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches this process, which names the plugin and kills it
        )
    except OSError:
        os.close(read)
        os.close(write)
        return None  # cannot start a child: the in-process import decides
    os.close(write)
    current: str | None = None
    buffer = b""
    sel = selectors.DefaultSelector()
    sel.register(read, selectors.EVENT_READ)
    deadline = None
    try:
        while True:
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not sel.select(timeout):  # only while importing: the deadline is set by "start"
                outcomes[str(current)] = Outcome(
                    "timeout",
                    f"importing plugin '{current}' did not finish within {seconds:g} s "
                    "(QUADRIGA_IMPORT_TIMEOUT)",
                )
                child.kill()
                return current
            chunk = os.read(read, 4096)
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                word, _, name = line.decode().partition(" ")
                if word == "start":
                    current, deadline = name, time.monotonic() + seconds
                else:
                    current, deadline = None, None
        code = child.wait()
    except KeyboardInterrupt:
        child.kill()
        if current is not None:
            raise PluginImportInterrupted(current, *about[current]) from None
        raise
    finally:
        sel.close()
        os.close(read)
        if child.poll() is None:
            child.kill()
        child.wait()
    if current is None:
        return None
    outcomes[current] = Outcome(
        "exited",
        f"importing its module ended the process ({_ended(code)}); quadriga imported it in a "
        "separate process, so nothing else is affected",
    )
    return current
