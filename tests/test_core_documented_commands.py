"""Every `quadriga run NAME ...` and `quadriga sweep NAME ...` example in the README and docs is valid."""

from __future__ import annotations

import itertools
import re
import shlex
from pathlib import Path

import pytest

from quadriga.api import check
from quadriga.registry import Registry
from quadriga.sweep import parse_grid

ROOT = Path(__file__).resolve().parent.parent
FILES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted((ROOT / "framework" / "quadriga" / "cli").glob("*.py")),
]
REGISTRY = Registry(use_env=False)
PIPELINES = {p.name for p in REGISTRY.pipelines()}


def _examples() -> list[tuple[str, str]]:
    found = []
    for path in FILES:
        for line in path.read_text(encoding="utf-8").splitlines():
            m = re.search(r"quadriga (run|sweep) ([A-Za-z0-9_.-]+)((?: [^#`]*)?)", line)
            if m and m.group(2) in PIPELINES and ("--set" in m.group(3) or "--grid" in m.group(3)):
                found.append((path.name, m.group(0).strip()))
    return found


EXAMPLES = _examples()


def test_examples_were_found():
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize(("where", "command"), EXAMPLES, ids=[f"{w}:{c}" for w, c in EXAMPLES])
def test_documented_command_checks(where, command):
    args = shlex.split(command)[1:]
    name, overrides, seed = args[1], [], None
    grids = []
    for flag, value in itertools.pairwise(args):
        if flag == "--set":
            overrides.append(value)
        elif flag == "--grid":
            grids.append(parse_grid(value))
        elif flag == "--seed":
            seed = int(value)
    for key, values in grids or [("", [None])]:
        extra = [f"{key}={v}" for v in values] if key else []
        for item in extra or [None]:
            check(name, overrides=overrides + ([item] if item else []), seed=seed, registry=REGISTRY)
