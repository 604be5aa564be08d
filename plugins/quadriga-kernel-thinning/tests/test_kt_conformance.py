"""The conformance checks (quadriga.testing) on every component of quadriga-kernel-thinning.

One pytest item per (component, check); every component runs from its defaults on the default tasks.
"""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases


@parametrize_with_checks(plugin_cases("quadriga-kernel-thinning"))
def test_conformance(case, check):
    check(case)
