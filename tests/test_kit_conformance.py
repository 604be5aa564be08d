"""The core's own check components pass the conformance checks, and every plugin checks its components.

Each plugin runs the checks on its own components in its own test suite
(``plugins/<dist>/tests/test_*_conformance.py``, with the setup its components need), so that
this file holds no knowledge of other distributions.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from quadriga.testing import parametrize_with_checks, plugin_cases

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = sorted(p.parent for p in ROOT.glob("plugins/*/pyproject.toml"))


@parametrize_with_checks(plugin_cases("quadriga"))
def test_conformance(case, check):
    check(case)


@pytest.mark.parametrize("plugin", PLUGINS, ids=[p.name for p in PLUGINS])
def test_every_plugin_runs_the_checks_in_its_own_tests(plugin):
    from quadriga.registry import get_registry

    registered = [s for s in get_registry().specs() if s.distribution == plugin.name]
    if not registered:  # a plugin of hooks only (a tracker) has no component to check
        assert "hookimpl" in "\n".join(p.read_text(encoding="utf-8") for p in plugin.glob("src/*/*.py"))
        return
    tests = "\n".join(p.read_text(encoding="utf-8") for p in sorted((plugin / "tests").glob("test_*.py")))
    assert "parametrize_with_checks" in tests or "check_component" in tests, (
        f"{plugin.name}: no test runs quadriga.testing's conformance checks; add tests/test_*_conformance.py "
        "with @parametrize_with_checks(plugin_cases(...))"
    )
