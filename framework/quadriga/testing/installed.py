"""Test helpers for a plugin's own suite: its registry, and its shipped pipelines checked against it.

::

    @pytest.fixture(scope="module")
    def registry():
        return plugin_registry("quadriga-my-method")

    def test_pipeline_uses_registered_components(registry):
        data = check_pipeline("my-pipeline", registry)  # the TOML, every ``use`` registered
"""

from __future__ import annotations

import sys
from typing import Any

from quadriga.registry import Registry

__all__ = ["check_pipeline", "plugin_registry"]


def plugin_registry(distribution: str) -> Registry:
    """A loaded registry; the calling test is skipped when ``distribution`` is not installed.

    Raises:
        pytest.skip.Exception: ``distribution`` registers nothing (not installed), with the install command.
    """
    import pytest

    reg = Registry()
    reg.load()
    if not any(s.distribution == distribution for s in reg.specs()):
        pytest.skip(f"{distribution} is not installed (pip install -e plugins/{distribution})")
    return reg


def check_pipeline(name: str, registry: Registry) -> dict[str, Any]:
    """The TOML of registered pipeline ``name``; every task and stage must use a registered name.

    Returns:
        The pipeline as parsed TOML (``{"pipeline": ..., "task": ..., "stage": ...}``).

    Raises:
        AssertionError: a ``[task.X]`` or ``[stage.X]`` whose ``use`` no installed plugin registers,
            naming the pipeline, the table and the name.
    """
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    spec = next((s for s in registry.pipelines() if s.name == name), None)
    assert spec is not None, f"no registered pipeline '{name}'"
    data = tomllib.loads(spec.read_text())
    have = {c.name for c in registry.components()}
    for table in ("task", "stage"):
        for stage, entry in data.get(table, {}).items():
            assert entry["use"] in have, f"{name}: {table}.{stage} uses unknown '{entry['use']}'"
    return data
