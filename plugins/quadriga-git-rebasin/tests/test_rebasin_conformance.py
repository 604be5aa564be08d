"""The conformance checks (quadriga.testing) on quadriga-git-rebasin's learners (cheap zoo: CHECK_ZOO)."""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases


@parametrize_with_checks(plugin_cases("quadriga-git-rebasin"))
def test_conformance(case, check):
    check(case)
