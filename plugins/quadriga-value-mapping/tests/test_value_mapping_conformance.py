"""The conformance checks (quadriga.testing) on every component of quadriga-value-mapping."""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases

SETUP = {
    ("learner", "tabular-value-mapping"): {
        "params": {"iterations": 20},
        "task": {"use": "vector-reward-chain"},
    },
}


@parametrize_with_checks(plugin_cases("quadriga-value-mapping", setup=SETUP))
def test_conformance(case, check):
    check(case)
