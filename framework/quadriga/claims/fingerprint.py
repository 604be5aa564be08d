"""Freshness of recorded verdicts: the fingerprint of what produced a record, and staleness.

A recorded verdict is only as current as the code that produced it. Every record keeps a
fingerprint:

- ``protocol``: the version of the claims protocol (:data:`PROTOCOL`; 3 = calibrated intervals,
  p-values from the interval's own method, margins, plans, preconditions);
- ``core``: the version of the ``quadriga`` distribution;
- ``plugin``: the claim's distribution, its version and a SHA-256 of its package's source files
  (``*.py`` and ``*.toml`` under the package directory, by relative path and content; the record
  file itself is not part of it);
- ``libraries``: the versions of the distributions the claim declares as mattering
  (``Claim.libraries``, e.g. torch, torchrl, POT).

:func:`staleness` recomputes it without importing the plugin (the package is found on
``sys.path``), so ``quadriga list`` can mark stale verdicts cheaply (:func:`stale_reason` and
:func:`verdict_text` apply it to a claim's last verdict in :mod:`quadriga.claims.record`);
``quadriga verify --stale`` re-runs exactly the claims whose record is stale.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from quadriga.claims import record as _record

__all__ = [
    "PROTOCOL",
    "fingerprint",
    "one_look",
    "source_hash",
    "stale_reason",
    "staleness",
    "verdict_text",
]

#: version of the claims protocol; a record made under another one is stale
PROTOCOL = 3

#: package directory -> ((path, mtime_ns, size) of every source file, hash): rehashed when a file changes
_HASHES: dict[Path, tuple[tuple[tuple[str, int, int], ...], str]] = {}


def source_hash(package: Path) -> str:
    """SHA-256 (first 16 hex digits) of the ``*.py`` and ``*.toml`` files under ``package``.

    Files are taken in sorted order of their paths relative to ``package``; ``__pycache__`` is
    skipped. The hash is kept, with the files' modification times and sizes, in memory and in
    ``source-hashes.json`` beside the registry cache (:mod:`quadriga.registry.cache`), and
    recomputed only when a file changes: ``quadriga list`` marks stale records without hashing
    (nor importing ``hashlib``) on a warm cache.
    """
    if _BATCH and package in _BATCH[-1]:
        return _BATCH[-1][package]
    value = _source_hash(package)
    if _BATCH:
        _BATCH[-1][package] = value
    return value


#: the open :func:`one_look` scopes, innermost last: ``{package directory: its source hash}``
_BATCH: list[dict[Path, str]] = []


@contextlib.contextmanager
def one_look() -> Iterator[None]:
    """Within this block, each package's files are walked (and hashed) at most once.

    ``quadriga list`` checks the staleness of every claim at once, several claims per package;
    outside such a block every :func:`source_hash` walks the package again, so that a process that
    lives on (a notebook) sees a file edited between two calls.
    """
    _BATCH.append({})
    try:
        yield
    finally:
        _BATCH.pop()


def _source_hash(package: Path) -> str:
    """:func:`source_hash`, checking the package's files again."""
    key = tuple((rel, st.st_mtime_ns, st.st_size) for rel, st in _source_files(str(package)))
    cached = _HASHES.get(package)
    if cached is not None and cached[0] == key:
        return cached[1]
    stored = _stored().get(str(package))
    if stored is not None and [list(s) for s in key] == stored.get("stamp"):
        _HASHES[package] = (key, str(stored["hash"]))
        return str(stored["hash"])
    import hashlib

    digest = hashlib.sha256()
    for rel, _, _ in key:
        digest.update(rel.encode() + b"\0" + (package / rel).read_bytes() + b"\0")
    value = digest.hexdigest()[:16]
    _HASHES[package] = (key, value)
    _store(package, key, value)
    return value


def _source_files(root: str) -> list[tuple[str, os.stat_result]]:
    """``(path relative to root, its stat)`` of every ``*.py`` and ``*.toml`` file under ``root``.

    In the order ``sorted(Path.rglob(...))`` gives (by path parts), ``__pycache__`` skipped,
    symbolic links to directories not followed: one walk of the tree (two ``rglob`` walks and a
    ``Path`` per file cost most of ``quadriga list``'s staleness check).
    """
    out = []
    for here, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = os.path.relpath(here, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        for name in names:
            if name.endswith((".py", ".toml")):
                out.append((prefix + name, os.stat(os.path.join(here, name))))
    out.sort(key=lambda item: item[0].split("/"))
    return out


def _hash_file() -> Path | None:
    """``source-hashes.json`` beside the registry cache, or None when caching is off."""
    from quadriga.registry import cache

    return cache.cache_path().with_name("source-hashes.json") if cache.enabled() else None


#: the last :func:`_stored`: ``[((path, inode, mtime_ns, size), contents)]``
_STORED: list[tuple[tuple[Any, ...], dict[str, Any]]] = []


def _stored() -> dict[str, Any]:
    """The stored hashes ``{package path: {stamp, hash}}`` (empty when missing or unreadable).

    Parsed once while the file is unchanged (same inode, modification time and size): ``quadriga
    list`` asks once per package, and the file holds every package's stamp.
    """
    path = _hash_file()
    if path is None:
        return {}
    try:
        st = os.stat(path)
    except OSError:
        return {}
    mark = (str(path), st.st_ino, st.st_mtime_ns, st.st_size)
    if _STORED and _STORED[0][0] == mark:
        return dict(_STORED[0][1])
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    data = data if isinstance(data, dict) else {}
    _STORED[:] = [(mark, data)]
    return dict(data)


def _store(package: Path, key: tuple[tuple[str, int, int], ...], value: str) -> None:
    """Keep one package's hash on disk; a cache that cannot be written is skipped silently."""
    path = _hash_file()
    if path is None:
        return
    data = _stored()
    data[str(package)] = {"stamp": [list(s) for s in key], "hash": value}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)
    except OSError:
        pass


def fingerprint(spec: Any, libraries: Iterable[str] = ()) -> dict[str, Any]:
    """The fingerprint of a claim as it would be recorded now.

    Args:
        spec: the claim's registry entry (``target`` ``"module:attr"`` and ``distribution``).
        libraries: distributions whose versions matter to the claim (``Claim.libraries``).

    Returns:
        ``{protocol, core, plugin: {distribution, version, source}, libraries: {name: version}}``;
        ``source`` is ``"unknown"`` when the package cannot be found.
    """
    record_file = _record._record_path(spec.target)  # the package is where its claims record lives
    package = None if record_file is None else record_file.parent
    return {
        "protocol": PROTOCOL,
        "core": _record._version("quadriga"),
        "plugin": {
            "distribution": spec.distribution,
            "version": _record._version(spec.distribution),
            "source": source_hash(package) if package is not None else "unknown",
        },
        "libraries": {name: _record._version(name) for name in sorted(libraries)},
    }


def staleness(spec: Any, record: Mapping[str, Any] | None) -> str:
    """Why a recorded verdict is stale, or ``""`` when its fingerprint matches the installed code.

    Args:
        spec: the claim's registry entry.
        record: its entry in ``claims_record.json`` (None: nothing recorded, never stale).

    Returns:
        ``""``, or the first difference in words: ``"recorded without a fingerprint"``,
        ``"recorded under claims protocol 2, now 3"``, ``"quadriga-srmc's source changed"``,
        ``"torch 2.13.0 -> 2.14.1"``, ...
    """
    if not record or "status" not in record:
        return ""
    old = record.get("fingerprint")
    if not isinstance(old, Mapping):
        return "recorded without a fingerprint (before claims protocol 3)"
    if old.get("protocol") != PROTOCOL:
        return f"recorded under claims protocol {old.get('protocol')}, now {PROTOCOL}"
    now = fingerprint(spec, (old.get("libraries") or {}).keys())
    if old.get("core") != now["core"]:
        return f"quadriga {old.get('core')} -> {now['core']}"
    plugin_old, plugin_now = old.get("plugin") or {}, now["plugin"]
    if plugin_old.get("version") != plugin_now["version"]:
        return f"{spec.distribution} {plugin_old.get('version')} -> {plugin_now['version']}"
    if plugin_old.get("source") != plugin_now["source"]:
        return f"{spec.distribution}'s source changed since the record"
    for name, version in (old.get("libraries") or {}).items():
        if now["libraries"].get(name) != version:
            return f"{name} {version} -> {now['libraries'].get(name)}"
    return ""


def verdict_text(spec: Any) -> str:
    """``"passed 2026-05-01 (v0.3.0)"`` for ``quadriga list``, or ``"not recorded"``.

    ``"passed stale 2026-05-01 (v0.3.0)"`` when the fingerprint no longer matches
    (:func:`stale_reason`).
    """
    last = _record._last(spec)
    if not last or "status" not in last:
        return "not recorded"
    stale = " stale" if stale_reason(spec) else ""
    return f"{last.get('status')}{stale} {last.get('date')} (v{last.get('version')})"


def stale_reason(spec: Any) -> str:
    """Why the claim's recorded verdict is stale (its fingerprint no longer matches), or ``""``.

    ``""`` too when nothing is recorded. See :func:`staleness`.
    """
    return staleness(spec, _record._last(spec))
