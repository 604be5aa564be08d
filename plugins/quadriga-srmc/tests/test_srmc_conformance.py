"""The conformance checks (quadriga.testing) on every component of quadriga-srmc.

One pytest item per (component, check); setup for the components whose defaults are expensive
or whose inputs the checks cannot make themselves.
"""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases

SETUP = {("sampler", "srmc"): {"params": {"num_steps": 60, "burn_in": 20, "alpha_warmup": 10}}}


@parametrize_with_checks(plugin_cases("quadriga-srmc", setup=SETUP))
def test_conformance(case, check):
    check(case)
