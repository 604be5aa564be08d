"""The conformance checks (quadriga.testing) on quadriga-iso-merging's components (cheap zoo)."""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases


@parametrize_with_checks(plugin_cases("quadriga-iso-merging"))
def test_conformance(case, check):
    check(case)
