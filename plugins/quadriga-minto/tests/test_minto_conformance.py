"""The conformance checks (quadriga.testing) on every component of quadriga-minto.

One pytest item per (component, check); setup for the components whose defaults are expensive
or whose inputs the checks cannot make themselves.
"""

from __future__ import annotations

from quadriga.testing import cheap_dqn, parametrize_with_checks, plugin_cases

SETUP = {("learner", "minto"): {"params": cheap_dqn()}}


@parametrize_with_checks(plugin_cases("quadriga-minto", setup=SETUP))
def test_conformance(case, check):
    check(case)
