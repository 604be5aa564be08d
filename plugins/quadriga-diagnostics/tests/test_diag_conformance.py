"""The conformance checks (quadriga.testing) on every component of quadriga-diagnostics."""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases


@parametrize_with_checks(plugin_cases("quadriga-diagnostics"))
def test_conformance(case, check):
    check(case)
