"""The conformance checks (quadriga.testing) on every component of quadriga-md3qn.

One pytest item per (component, check); cheap training settings on the vector-reward chain.
"""

from __future__ import annotations

from quadriga.testing import cheap_dqn, parametrize_with_checks, plugin_cases

#: cheap settings (the pipeline's budget trains for minutes)
CHEAP = cheap_dqn(num_particles=4)
CHAIN = {"use": "vector-reward-chain"}
SETUP = {
    ("learner", "md3qn"): {"params": CHEAP, "task": CHAIN},
    ("learner", "mmdqn-per-source"): {"params": CHEAP, "task": CHAIN},
}


@parametrize_with_checks(plugin_cases("quadriga-md3qn", setup=SETUP))
def test_conformance(case, check):
    check(case)
