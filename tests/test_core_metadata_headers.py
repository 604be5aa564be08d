"""Reading a distribution's Name and Version from the top of its metadata file, and its fall-backs."""

from __future__ import annotations

import importlib.metadata as md
from pathlib import Path

import pytest

from quadriga.claims.fingerprint import _source_files
from quadriga.claims.record import _header_version
from quadriga.versions import header_fields


def _dist(tmp_path: Path, text: str) -> md.Distribution:
    info = tmp_path / "demo-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(text, encoding="utf-8")
    return md.PathDistribution(info)


def test_the_headers_are_what_the_full_parse_gives_for_every_installed_distribution():
    checked = 0
    for dist in md.distributions():
        headers = header_fields(dist, ("Name", "Version"))
        if headers is None:
            continue
        assert headers == {"Name": dist.metadata["Name"], "Version": dist.version}
        assert _header_version(dist) == dist.version
        checked += 1
    assert checked > 10  # pytest, pluggy, torch, ... at least


def test_a_header_block_read_alone_stops_at_the_blank_line(tmp_path):
    dist = _dist(
        tmp_path,
        "Metadata-Version: 2.1\nname: demo-pkg\nVersion:   1.2.3\r\n\nVersion: 9.9 (in the description)\n",
    )
    assert header_fields(dist, ("Name", "Version")) == {"Name": "demo-pkg", "Version": "1.2.3"}
    assert _header_version(dist) == "1.2.3"


@pytest.mark.parametrize(
    "text",
    [
        "Metadata-Version: 2.1\nName: demo\n\nVersion: 1.0\n",  # Version only after the headers
        "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n  .post1\n",  # a folded header
        "Metadata-Version: 2.1\nName: demo\nVersion:\n",  # empty
        # not a header line: the e-mail parser ends the header block there (Version: None)
        "Metadata-Version: 2.1\nName: demo\nnot a header\nVersion: 1.0\n",
        "Metadata-Version: 2.1\nName: demo\nSome Thing: x\nVersion: 1.0\n",
    ],
)
def test_headers_it_cannot_read_alone_are_left_to_the_full_parse(tmp_path, text):
    dist = _dist(tmp_path, text)
    assert header_fields(dist, ("Name", "Version")) is None
    assert _header_version(dist) is None


def test_source_files_are_listed_in_the_order_sorted_rglob_gives(tmp_path):
    for rel in ("a-b/x.py", "a/x.py", "a/__pycache__/x.py", "b.toml", "a/y.txt", "A/z.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    want = sorted(
        p for pattern in ("*.py", "*.toml") for p in tmp_path.rglob(pattern) if "__pycache__" not in p.parts
    )
    got = [rel for rel, _ in _source_files(str(tmp_path))]
    assert got == [p.relative_to(tmp_path).as_posix() for p in want]
    assert got == ["A/z.py", "a/x.py", "a-b/x.py", "b.toml"]


def test_continuation_lines_of_other_headers_are_skipped(tmp_path):
    dist = _dist(
        tmp_path,
        "Metadata-Version: 2.1\nLicense: MIT\n        and more\n  \nName: demo\nVersion: 2.0\n"
        "bogus line after the fields\n\nbody\n",
    )
    assert dist.metadata["Name"] == "demo" and dist.version == "2.0"
    assert header_fields(dist, ("Name", "Version")) == {"Name": "demo", "Version": "2.0"}
    assert _header_version(dist) == "2.0"
