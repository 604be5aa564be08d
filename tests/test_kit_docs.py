"""The documentation site builds strictly, has a page per plugin, and documents every CLI command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mkdocs_build_strict_with_a_page_per_plugin(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    from quadriga.registry import Registry

    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    registry = Registry(use_env=False)
    dists = {c.distribution for c in registry.components()}
    assert dists, "no plugin installed"
    for dist in dists:
        page = (site / "plugins" / dist / "index.html").read_text()
        for comp in (c for c in registry.components() if c.distribution == dist):
            assert f"<code>{comp.name}</code>" in page, (dist, comp.name)
    for claim in registry.claims():
        assert claim.name in (site / "plugins" / claim.distribution / "index.html").read_text()
    # the API pages (mkdocstrings): the public functions documented, Sphinx roles turned into links
    api = {p: (site / "api" / p / "index.html").read_text() for p in ("quadriga", "progress", "errors")}
    for anchor in ("quadriga.notebook.build", "quadriga.notebook.load_run", "quadriga.api.run"):
        assert f'id="{anchor}"' in api["quadriga"], anchor
    assert 'id="quadriga.progress.StageProgress"' in api["progress"]
    assert 'id="quadriga.errors.ConfigError"' in api["errors"]
    assert not any(":class:<code>" in page or ":func:<code>" in page for page in api.values())
    assert 'href="../errors/#quadriga.errors.NonFiniteError"' in api["progress"]


def test_cli_page_lists_every_command_and_option():
    """Every subcommand of the parser is in docs/cli.md, and every --option written there exists."""
    from quadriga.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    text = (ROOT / "docs" / "cli.md").read_text()
    options: set[str] = set()
    for name, p in sub.choices.items():
        assert f"`quadriga {name}" in text, name
        stack = [p]
        while stack:
            q = stack.pop()
            for action in q._actions:
                options.update(o for o in action.option_strings if o.startswith("--"))
                if action.__class__.__name__ == "_SubParsersAction":
                    stack.extend(action.choices.values())
    written = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text))
    assert written - options == set()
