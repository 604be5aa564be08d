"""What ``quadriga list`` reads for every claim: versions, source hashes and recorded verdicts.

Each is looked up once where the answer cannot change (one listing of each ``sys.path`` entry for
the versions, one walk of each package per listing), and the answers are those of the plain
lookups they replace.
"""

from __future__ import annotations

import importlib.metadata as md
import sys
from pathlib import Path
from types import SimpleNamespace

from quadriga.claims import fingerprint, record


def test_metadata_folders_are_the_ones_importlib_metadata_finds():
    names = {d.metadata["Name"] for d in md.distributions() if d.metadata["Name"]}
    assert len(names) > 20
    folders = record._metadata_dirs()
    for name in sorted(names):
        assert folders[record._normalize(name)] == Path(md.distribution(name)._path), name  # type: ignore[attr-defined]
    record._VERSIONS.clear()
    for name in ("quadriga", "pluggy", "torch"):
        assert record._version(name) == md.version(name)
    record._VERSIONS.clear()
    assert record._version("no-such-distribution-here") == "unknown"


def test_a_zip_archive_on_sys_path_leaves_every_lookup_to_importlib_metadata(tmp_path, monkeypatch):
    archive = tmp_path / "lib.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip archive
    monkeypatch.setattr(sys, "path", [str(archive), *sys.path])
    assert record._metadata_dirs() == {}
    record._VERSIONS.clear()
    assert record._version("pluggy") == md.version("pluggy")
    record._VERSIONS.clear()


def test_one_look_walks_each_package_once_and_later_calls_see_edits(tmp_path, monkeypatch):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("x = 1\n")
    walks = []
    real = fingerprint._source_files
    monkeypatch.setattr(fingerprint, "_source_files", lambda root: walks.append(root) or real(root))
    monkeypatch.setattr(fingerprint, "_hash_file", lambda: None)
    with fingerprint.one_look():
        first = fingerprint.source_hash(package)
        (package / "a.py").write_text("x = 22\n")  # not seen inside the block
        assert fingerprint.source_hash(package) == first
    assert len(walks) == 1
    after = fingerprint.source_hash(package)
    assert after != first and len(walks) == 2


def test_last_verdict_is_a_deep_copy_of_the_cached_entry(monkeypatch):
    import copy

    entry = {"status": "passed", "date": "2026-01-01", "rows": [{"a": 1, "b": [2.5, None, True]}]}
    monkeypatch.setattr(record, "_last", lambda spec: entry)
    spec = SimpleNamespace(name="c", target="m:c")
    copied = record.last_verdict(spec)
    assert copied == entry == copy.deepcopy(entry)
    assert copied is not entry and copied["rows"] is not entry["rows"]
    assert copied["rows"][0]["b"] is not entry["rows"][0]["b"]
    copied["rows"][0]["a"] = 5
    assert entry["rows"][0]["a"] == 1
    monkeypatch.setattr(record, "_last", lambda spec: None)
    assert record.last_verdict(spec) is None
