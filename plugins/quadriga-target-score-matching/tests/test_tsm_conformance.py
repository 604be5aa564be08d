"""The conformance checks (quadriga.testing) on every component of quadriga-target-score-matching."""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases


@parametrize_with_checks(plugin_cases("quadriga-target-score-matching"))
def test_conformance(case, check):
    check(case)
