"""The last paper-scale verdict of each claim, kept in the plugin's ``claims_record.json``."""

from __future__ import annotations

import copy
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["RECORD_FILE", "last_verdict", "record_pilots", "record_verdicts"]

#: the file, in a plugin's package, that keeps the last paper-scale verdict of each of its claims
#: (defined here, not in :mod:`quadriga.claims.model`, so that ``quadriga list`` reads verdicts
#: without building the claim classes)
RECORD_FILE = "claims_record.json"


#: ``{distribution: version}`` as :func:`_version` read it, once per process
_VERSIONS: dict[str, str] = {}


def _version(distribution: str) -> str:
    """The installed version of ``distribution``, ``"unknown"`` when absent or not a valid name.

    Read once per process (as :func:`quadriga.versions.version_of` reads the manifest's):
    ``quadriga list`` asks for the same few distributions once per claim, and each metadata
    lookup walks every ``sys.path`` entry. Only the ``Version`` header is read
    (:func:`_header_version`), not the whole metadata file.
    """
    found = _VERSIONS.get(distribution)
    if found is None:
        import importlib.metadata as md

        try:
            where = _metadata_dirs().get(_normalize(distribution))
            dist = md.PathDistribution(where) if where is not None else md.distribution(distribution)
            found = _header_version(dist) or dist.version or "unknown"
        except (md.PackageNotFoundError, ValueError):
            found = "unknown"
        _VERSIONS[distribution] = found
    return found


def _normalize(name: str) -> str:
    """A distribution name as ``importlib.metadata`` matches it to a metadata folder's name."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


#: ``(sys.path, {normalized name: its first metadata folder})`` of the last :func:`_metadata_dirs`
_DIRS: list[tuple[tuple[str, ...], dict[str, Path]]] = []


def _metadata_dirs() -> dict[str, Path]:
    """``{normalized name: metadata folder}``, from one listing of each ``sys.path`` entry.

    The folder (``*.dist-info``, ``*.egg-info``) is the one ``importlib.metadata.distribution``
    would find first; ``importlib.metadata`` walks every entry again for each name; ``quadriga list`` asks for
    dozens. Empty (every name then asked of ``importlib.metadata`` itself) when ``sys.path`` holds
    an entry this does not read as it does: a file (a zip archive) or an ``.egg`` folder.
    Kept while ``sys.path`` is unchanged (for a process, as the versions are).
    """
    paths = tuple(sys.path)
    if _DIRS and _DIRS[0][0] == paths:
        return _DIRS[0][1]
    found: dict[str, Path] = {}
    for entry in paths:
        where = entry or os.getcwd()
        if where.lower().endswith(".egg") or os.path.isfile(where):
            found = {}
            break
        try:
            names = os.listdir(where)
        except OSError:
            continue
        for child in names:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                key = _normalize(low.rpartition(".")[0].partition("-")[0])
                found.setdefault(key, Path(where, child))
    _DIRS[:] = [(paths, found)]
    return found


def _header_version(dist: Any) -> str | None:
    """The ``Version`` header of a distribution's ``METADATA`` (or ``PKG-INFO``), the rest unparsed.

    ``Distribution.version`` parses the whole file as an e-mail message (a long description
    included: milliseconds for some libraries); the header block comes first, and a version is one
    line. ``None`` (the caller then asks ``dist.version``) when there is no such line, or it
    continues on the next (a folded header).
    """
    from quadriga.versions import header_fields

    found = header_fields(dist, ("Version",))
    return None if found is None else found["Version"]


#: (package, sys.path) -> its record file: ``quadriga list`` asks once per claim, several per plugin
_FOUND: dict[tuple[str, tuple[str, ...]], Path | None] = {}
#: record file -> ((inode, mtime, size), its contents): read once while it is unchanged
_READ: dict[Path, tuple[tuple[int, int, int], dict[str, Any]]] = {}


def _record_path(target: str) -> Path | None:
    """``claims_record.json`` in the package of a ``"module:attr"`` target, found without importing it.

    The package is looked up on ``sys.path`` once per package and ``sys.path`` (each lookup walks
    every entry); a package already imported is where it was imported from.
    """
    import importlib.util
    import sys

    top = target.split(":", 1)[0].split(".", 1)[0]
    key = (top, tuple(sys.path))
    if top not in sys.modules and key in _FOUND:
        return _FOUND[key]
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    path = None
    if found is not None and found.submodule_search_locations:
        path = Path(next(iter(found.submodule_search_locations))) / RECORD_FILE
    _FOUND[key] = path
    return path


def _read_record(path: Path) -> dict[str, Any] | None:
    """The contents of a record file (None when it is missing or unreadable), reread when it changes."""
    try:
        st = path.stat()
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        cached = _READ.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    _READ[path] = (stamp, data)
    return data


#: what a record keeps of each comparison
_COMPARISON_KEYS = (
    "group",
    "arm",
    "baseline",
    "estimate",
    "low",
    "high",
    "n",
    "method",
    "p_claim",
    "p_claim_holm",
    "low_holm",
    "high_holm",
    "level_holm",
    "verdict",
)


def record_verdicts(registry: Any, records: list[dict[str, Any]]) -> list[Path]:
    """Keep each paper-scale verdict in its plugin's ``claims_record.json``; return the files written.

    Each entry: ``{status, summary, estimate, low, high, n, method, comparisons, effect, plan,
    preconditions, precondition_failed, fingerprint, date, version, seconds}`` (``estimate`` ...
    ``method``
    are the first comparison's; every comparison under ``comparisons``; ``effect`` and ``plan`` as
    declared before the run; ``fingerprint`` as :func:`quadriga.claims.fingerprint.fingerprint`;
    ``seconds``: the paper run's wall time, shown by ``quadriga info``).
    """

    def entry(rec: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
        first = rec["comparisons"][0] if rec.get("comparisons") else {}
        pilot = old.get("pilot")
        return {
            "status": rec["status"],
            "summary": rec["summary"],
            **{k: first.get(k) for k in ("estimate", "low", "high", "n", "method")},
            "comparisons": [
                {k: c.get(k) for k in _COMPARISON_KEYS if k in c} for c in rec.get("comparisons", [])
            ],
            **{
                k: rec[k]
                for k in ("effect", "plan", "preconditions", "precondition_failed", "fingerprint")
                if k in rec
            },
            "date": rec["date"],
            "version": rec["version"],
            **({"seconds": rec["seconds"]} if isinstance(rec.get("seconds"), (int, float)) else {}),
            **({"pilot": pilot} if pilot else {}),
        }

    return _update_entries(registry, records, entry)


def record_pilots(registry: Any, records: list[dict[str, Any]]) -> list[Path]:
    """Keep each ``verify --plan`` pilot under ``pilot`` of the claim's entry in ``claims_record.json``.

    The entry's verdict (if any) is kept; a later recorded verdict keeps the pilot. Returns the
    files written.
    """

    def entry(rec: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
        pilot = {**rec["pilot"], "date": rec["date"], "fingerprint": rec.get("fingerprint")}
        return {**old, "pilot": pilot}

    return _update_entries(registry, records, entry)


def _update_entries(
    registry: Any,
    records: list[dict[str, Any]],
    entry: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]],
) -> list[Path]:
    """Replace each claim's entry in its plugin's ``claims_record.json`` by ``entry(record, old entry)``.

    Claims without a record file (not registered, or no plugin folder) are skipped; each file is
    rewritten atomically after each record. Returns the files written.
    """
    from quadriga.runs import atomic_write_json

    specs = {c.name: c for c in registry.claims()}
    written = []
    for rec in records:
        spec = specs.get(rec["name"])
        path = _record_path(spec.target) if spec else None
        if path is None:
            continue
        data: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
        data[rec["name"]] = entry(rec, data.get(rec["name"]) or {})
        atomic_write_json(path, data)
        written.append(path)
    return written


def last_verdict(spec: Any) -> dict[str, Any] | None:
    """The last recorded paper-scale verdict of a claim, or ``None``.

    The record holds ``status``, ``date``, ``version``, ...; it is read from the plugin's
    ``claims_record.json`` without importing the plugin. A copy: the caller may change it.
    """
    return _copied(_last(spec))


def _copied(value: Any) -> Any:
    """A deep copy of JSON data (dicts, lists, scalars), as ``copy.deepcopy`` makes it, but faster.

    ``quadriga list`` copies every claim's record entry; anything other than a dict or a list is
    immutable here (the entries come from ``json.loads``) and shared, as ``deepcopy`` shares it.
    Other containers are left to ``copy.deepcopy``.
    """
    kind = type(value)
    if kind is dict:
        return {k: _copied(v) for k, v in value.items()}
    if kind is list:
        return [_copied(v) for v in value]
    if kind in (str, int, float, bool) or value is None:
        return value
    return copy.deepcopy(value)


def _last(spec: Any) -> Any:
    """The record entry of ``spec`` as cached (not to be changed), or None."""
    path = _record_path(spec.target)
    data = None if path is None else _read_record(path)
    return None if data is None else data.get(spec.name)
