"""The files of a run: written atomically, with plain permissions; JSON as ``json.dumps(indent=2)``."""

from __future__ import annotations

import json
import math
import os
import random
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
import torch

from quadriga import fileio
from quadriga.errors import ConfigError
from quadriga.fileio import atomic_path, atomic_write_json, atomic_write_text
from quadriga.serialization import indented_json, jsonable

_SCALARS = [
    "",
    "plain",
    'quo"te\\back\nslash',
    "ünïcødé ✓ 𝔵",
    "\x00\x1f",
    0,
    -7,
    2**70,
    True,
    False,
    None,
    0.0,
    -0.0,
    1.5,
    1e-300,
    1e300,
    float("nan"),
    float("inf"),
    float("-inf"),
]


def _random_value(rng: random.Random, depth: int) -> object:
    roll = rng.random()
    if depth == 0 or roll < 0.4:
        return rng.choice(_SCALARS)
    size = rng.choice([0, 1, 2, 5])
    if roll < 0.65:
        return [_random_value(rng, depth - 1) for _ in range(size)]
    if roll < 0.75:
        return tuple(_random_value(rng, depth - 1) for _ in range(size))
    return {rng.choice(_SCALARS[:4]) + str(i): _random_value(rng, depth - 1) for i in range(size)}


@pytest.mark.parametrize("seed", range(40))
def test_indented_json_matches_json_dumps_on_nested_values(seed):
    value = _random_value(random.Random(seed), depth=5)
    assert indented_json(value) == json.dumps(value, indent=2)


@pytest.mark.parametrize(
    "value",
    [
        {},
        [],
        {"a": {}, "b": [], "c": [[]], "d": {"e": {}}},
        {"flat": {"x": 1, "y": "two", "z": None}, "list": [1, 2.5, "3"]},
        {2: "int key", 2.5: "float key", None: "none", True: "bool"},  # json turns keys into strings
        {"mixed": {"k": 1, 3: [1, {"deep": (1, 2)}]}},
        OrderedDict(a=1, b=[OrderedDict(c=2)]),
        [np.int64(3).item(), {"x": [1, [2, [3, [4]]]]}],
        {"a": {"x": "}", "y": "},\n    {"}, "b": {"z": "{[}]", "w": 1.5}, "c": {"v": None}},  # a table
        {"outer": {"a": {"x": 1}, "b": {"y": "}, {"}}},  # a table one level down
        {"a": {"x": 1}, "b": {}},  # an empty inner dict: item by item
        {"a": {"x": 1}, "b": {"y": [1]}},  # an inner dict not flat
        {"a": {"x": 1}, "b": {2: "int key"}},  # an inner key not a string
        {"p": {"version": "1.0", "editable": True, "path": "/x", "commit": None, "dirty": False}},
        "top-level string",
        3.25,
        None,
    ],
)
def test_indented_json_matches_json_dumps_on_edge_cases(value):
    assert indented_json(value) == json.dumps(value, indent=2)


def test_indented_json_raises_what_json_dumps_raises():
    with pytest.raises(TypeError):
        indented_json({"a": [object()]})
    with pytest.raises(TypeError):
        indented_json({"a": {"b": object()}})


def test_jsonable_plain_types_unchanged_and_special_values_converted():
    value = {"s": "x", "i": 3, "b": True, "n": None, "f": 0.5, "nan": math.nan, "inf": -math.inf}
    assert jsonable(value) == {"s": "x", "i": 3, "b": True, "n": None, "f": 0.5, "nan": "nan", "inf": "-inf"}
    converted = jsonable({1: [torch.tensor([1.0, 2.0]), np.float64(2.5), (1, 2)]})
    assert converted == {"1": [[1.0, 2.0], 2.5, [1, 2]]}


def test_atomic_write_json_writes_the_text_json_dumps_gives(tmp_path):
    data = {"pipeline": "p", "seeds": {"task.a": 1}, "env": {"torch": "2.3"}, "big": torch.arange(100.0)}
    atomic_write_json(tmp_path / "m.json", data)
    text = (tmp_path / "m.json").read_text(encoding="utf-8")
    assert text == json.dumps(jsonable(data), indent=2) + "\n"
    assert json.loads(text)["big"] == "<array shape (100,)>"
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"]  # no temporary file left


def test_indented_json_without_the_c_encoder_writes_the_same(monkeypatch):
    import quadriga.serialization as serialization

    value = {"env": {"a": "1", "b": "2"}, "list": [1, 2.5, None, "x"], "nested": [{"k": True}]}
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    monkeypatch.setattr(serialization, "_FLAT", {})
    assert indented_json(value) == json.dumps(value, indent=2)
    assert all(not type(e).__module__.startswith("_json") for e in serialization._FLAT.values())


def _plain_mode(path):
    with open(path, "w", encoding="utf-8"):
        pass
    return os.stat(path).st_mode & 0o777


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_atomic_writes_give_the_permissions_a_plain_open_gives(tmp_path, umask):
    old = os.umask(umask)
    try:
        expected = _plain_mode(tmp_path / "plain")
        atomic_write_text(tmp_path / "a.txt", "text ✓\n")
        with atomic_path(tmp_path / "b.bin") as tmp:
            assert os.path.getsize(tmp) == 0  # exists, empty, for the writer to open
            with open(tmp, "wb") as fh:
                fh.write(b"bytes")
    finally:
        os.umask(old)
    assert expected == 0o666 & ~umask
    assert os.stat(tmp_path / "a.txt").st_mode & 0o777 == expected
    assert os.stat(tmp_path / "b.bin").st_mode & 0o777 == expected
    assert (tmp_path / "a.txt").read_bytes() == "text ✓\n".encode()
    assert (tmp_path / "b.bin").read_bytes() == b"bytes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin", "plain"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "status.json"
    atomic_write_text(target, "old\n")

    def broken_replace(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(fileio.os, "replace", broken_replace)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(target, "new\n")
    with pytest.raises(KeyboardInterrupt), atomic_path(target) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("half")
        raise KeyboardInterrupt
    assert target.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["status.json"]


def test_atomic_writes_make_a_missing_directory_and_refuse_links(tmp_path):
    atomic_write_text(tmp_path / "new" / "deeper" / "record.json", "{}\n")
    assert (tmp_path / "new" / "deeper" / "record.json").read_text(encoding="utf-8") == "{}\n"
    (tmp_path / "elsewhere").write_text("keep", encoding="utf-8")
    (tmp_path / "link.json").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ConfigError, match="symbolic link"):
        atomic_write_text(tmp_path / "link.json", "x")
    with pytest.raises(ConfigError, match="symbolic link"), atomic_path(tmp_path / "link.json"):
        pass
    assert (tmp_path / "elsewhere").read_text(encoding="utf-8") == "keep"


def test_a_taken_temporary_name_is_skipped(tmp_path, monkeypatch):
    names = iter([b"\x00" * 4, b"\x00" * 4, b"\x01" * 4])
    monkeypatch.setattr(fileio.os, "urandom", lambda n: next(names))
    atomic_write_text(tmp_path / "a.json", "first")  # takes .a.json.00000000.tmp, then renames it
    (tmp_path / ".a.json.00000000.tmp").write_text("someone else's", encoding="utf-8")
    atomic_write_text(tmp_path / "a.json", "second")  # 00000000 is taken: 01010101
    assert (tmp_path / "a.json").read_text(encoding="utf-8") == "second"
    assert (tmp_path / ".a.json.00000000.tmp").read_text(encoding="utf-8") == "someone else's"


@pytest.mark.parametrize("as_path", [True, False])
def test_refuse_symlinks_checks_every_directory_from_the_root_down(tmp_path, monkeypatch, as_path):
    from quadriga.fileio import refuse_symlinks

    root = tmp_path / "run"
    (root / "stages" / "a").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (root / "stages" / "b").symlink_to(tmp_path / "elsewhere")
    conv = (lambda p: p) if as_path else str
    refuse_symlinks(conv(root / "stages" / "a" / "record.json"), conv(root))  # no link: fine
    refuse_symlinks(conv(root / "stages" / "new" / "record.json"), conv(root))  # missing: fine
    with pytest.raises(ConfigError, match=r"stages/b' is a symbolic link"):
        refuse_symlinks(conv(root / "stages" / "b" / "record.json"), conv(root))
    with pytest.raises(ConfigError, match=r"stages/b' is a symbolic link"):
        refuse_symlinks(conv(root / "stages" / "b"))
    refuse_symlinks(conv(root / "stages" / "b" / "x"))  # without a root only the path itself
    refuse_symlinks(conv(tmp_path / "outside"), conv(root))  # not under the root: itself only
    (tmp_path / "link-root").symlink_to(root)
    with pytest.raises(ConfigError, match=r"link-root' is a symbolic link"):
        refuse_symlinks(conv(tmp_path / "link-root" / "status.json"), conv(tmp_path / "link-root"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"'run/stages/b' is a symbolic link"):
        refuse_symlinks(conv(Path("run/stages/b/record.json")), conv(Path(".")))


@pytest.mark.parametrize("seed", range(20))
def test_indented_json_matches_json_dumps_on_tables_of_flat_dicts(seed):
    """A dict of flat dicts is written in one encoder call and split at '}<separator>{'."""
    rng = random.Random(seed)
    tricky = ["}", "},\n  {", '"}', "{}", "} {", "\\}", *_SCALARS]
    ends = ["", "}", "\n"]
    table = {
        "row" + str(i) + rng.choice(ends): {f"k{j}": rng.choice(tricky) for j in range(rng.choice([1, 2, 5]))}
        for i in range(rng.choice([1, 3, 8]))
    }
    assert indented_json(table) == json.dumps(table, indent=2)
    assert indented_json({"nested": table, "after": 1}) == json.dumps({"nested": table, "after": 1}, indent=2)


def test_a_run_directory_file_is_checked_for_links_once(tmp_path, monkeypatch):
    """RunDir refuses links from the run directory down to the file; the write does not look again."""
    import quadriga.fileio as fileio
    from quadriga.errors import ConfigError
    from quadriga.rundir import RunDir
    from quadriga.rundir.records import RunStatus

    rd = RunDir.create(tmp_path / "run", tmp_path, "p")
    looked: list[str] = []
    real = fileio.refuse_symlinks
    monkeypatch.setattr(
        fileio, "refuse_symlinks", lambda p, root=None: looked.append(str(p)) or real(p, root)
    )
    rd.write_status(RunStatus())
    assert looked == []  # rundir's own check (its module's refuse_symlinks) is the only one
    fileio.atomic_write_text(tmp_path / "run" / "other.txt", "x")
    assert looked == [str(tmp_path / "run"), str(tmp_path / "run" / "other.txt")]  # unchecked: both
    (tmp_path / "elsewhere.json").write_text("{}")
    (tmp_path / "run" / "status.json").unlink()
    (tmp_path / "run" / "status.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(ConfigError, match="symbolic link"):
        rd.write_status(RunStatus())
    assert (tmp_path / "elsewhere.json").read_text() == "{}"
