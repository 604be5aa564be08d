"""The conformance checks (quadriga.testing) on every component of quadriga-fle.

One pytest item per (component, check); cheap settings (few transitions, few iterations).
"""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases

DATA = {"use": "offline-rl-dataset", "environment": {"use": "noisy-frozen-lake"}, "num_transitions": 200}
CHEAP = {"num_transitions": 200, "iterations": 5, "num_quantiles": 50}
SETUP = {
    ("estimator", "fle"): {"params": {**CHEAP, "samples_per_transition": 2}, "task": DATA},
    ("estimator", "fqe"): {"params": CHEAP, "task": DATA},
    ("estimator", "categorical-fqe"): {"params": CHEAP, "task": DATA},
    ("evaluator", "return-law-w1"): {
        "params": {"num_reference_episodes": 500},
        "inputs": {
            "task": {"data": DATA},
            "stage": {"fqe": {"use": "fqe", "inputs": {"data": "data"}, **CHEAP}},
            "inputs": {"subject": ["fqe"], "reference": "data"},
        },
    },
}


@parametrize_with_checks(plugin_cases("quadriga-fle", setup=SETUP))
def test_conformance(case, check):
    check(case)
