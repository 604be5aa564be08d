"""The last paper-scale verdict of each claim, kept in the plugin's ``claims_record.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from quadriga.claims.model import RECORD_FILE

__all__ = ["last_verdict", "record_verdicts", "verdict_text"]


def _version(distribution: str) -> str:
    import importlib.metadata as md

    try:
        return md.version(distribution)
    except (md.PackageNotFoundError, ValueError):
        return "unknown"


def _record_path(target: str) -> Path | None:
    """``claims_record.json`` in the package of a ``"module:attr"`` target, found without importing it."""
    import importlib.util

    top = target.split(":", 1)[0].split(".", 1)[0]
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    return Path(next(iter(found.submodule_search_locations))) / RECORD_FILE


def record_verdicts(registry: Any, records: list[dict[str, Any]]) -> list[Path]:
    """Keep each paper-scale verdict in its plugin's ``claims_record.json``; return the files written.

    Each entry: ``{status, summary, estimate, low, high, n, method, date, version}`` (the first
    comparison's numbers; every comparison under ``comparisons``).
    """
    from quadriga.runs import atomic_write_json

    specs = {c.name: c for c in registry.claims()}
    written = []
    for rec in records:
        spec = specs.get(rec["name"])
        path = _record_path(spec.target) if spec else None
        if path is None:
            continue
        data = json.loads(path.read_text()) if path.is_file() else {}
        first = rec["comparisons"][0] if rec.get("comparisons") else {}
        data[rec["name"]] = {
            "status": rec["status"],
            "summary": rec["summary"],
            **{k: first.get(k) for k in ("estimate", "low", "high", "n", "method")},
            "comparisons": [
                {k: c.get(k) for k in ("group", "arm", "baseline", "estimate", "low", "high", "n", "verdict")}
                for c in rec.get("comparisons", [])
            ],
            "date": rec["date"],
            "version": rec["version"],
        }
        atomic_write_json(path, data)
        written.append(path)
    return written


def last_verdict(spec: Any) -> dict[str, Any] | None:
    """The last recorded paper-scale verdict of a claim, or ``None``.

    The record holds ``status``, ``date``, ``version``, ...; it is read from the plugin's
    ``claims_record.json`` without importing the plugin.
    """
    path = _record_path(spec.target)
    if path is None or not path.is_file():
        return None
    try:
        return json.loads(path.read_text()).get(spec.name)
    except (OSError, json.JSONDecodeError):
        return None


def verdict_text(spec: Any) -> str:
    """``"passed 2026-05-01 (v0.3.0)"`` for ``quadriga list``, or ``"not recorded"``."""
    last = last_verdict(spec)
    if not last:
        return "not recorded"
    return f"{last.get('status')} {last.get('date')} (v{last.get('version')})"
