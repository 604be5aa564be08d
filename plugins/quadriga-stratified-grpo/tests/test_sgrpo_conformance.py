"""The conformance checks (quadriga.testing) on every component of quadriga-stratified-grpo.

One pytest item per (component, check); setup for the components whose defaults are expensive
or whose inputs the checks cannot make themselves.
"""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases

GRPO = {"num_updates": 2, "num_prompts": 2, "group_size": 2, "hidden_sizes": [8]}
SETUP = {
    ("learner", "grpo"): {"params": GRPO, "task": {"use": "search-agent"}},
    ("learner", "stratified-grpo"): {"params": GRPO, "task": {"use": "search-agent"}},
    ("evaluator", "training-curves"): {
        "params": {"num_resamples": 100, "baseline": ""},
        "inputs": {
            "task": {"env": {"use": "search-agent"}},
            "stage": {"policy": {"use": "grpo", "inputs": {"task": "env"}, **GRPO}},
            "inputs": {"subject": "policy", "reference": "env"},
        },
    },
}


@parametrize_with_checks(plugin_cases("quadriga-stratified-grpo", setup=SETUP))
def test_conformance(case, check):
    check(case)
