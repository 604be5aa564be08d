"""The conformance checks (quadriga.testing) on every component of quadriga-value-classification.

One pytest item per (component, check); cheap training settings for the two learners.
"""

from __future__ import annotations

from quadriga.testing import cheap_dqn, parametrize_with_checks, plugin_cases

#: cheap settings (the defaults train for minutes)
CHEAP = cheap_dqn(num_bins=11)
SETUP = {
    ("learner", "dqn-hlgauss"): {"params": CHEAP},
    ("learner", "dqn-twohot"): {"params": CHEAP},
}


@parametrize_with_checks(plugin_cases("quadriga-value-classification", setup=SETUP))
def test_conformance(case, check):
    check(case)
