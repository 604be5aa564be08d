"""Conformance checks (quadriga.testing) on every component of quadriga-flowrl (inputs from check_inputs)."""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases


@parametrize_with_checks(plugin_cases("quadriga-flowrl"))
def test_conformance(case, check):
    check(case)
