"""The conformance checks (quadriga.testing) on every component of quadriga-stream-sw.

One pytest item per (component, check); setup for the components whose defaults are expensive
or whose inputs the checks cannot make themselves.
"""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases

STREAM = {"use": "two-sample-stream", "num_samples": 400, "batch_size": 100}
SETUP = {
    ("estimator", "subsample-sw"): {"params": {"num_retained": 50}},
    ("evaluator", "sw-relative-error"): {
        "inputs": {
            "task": {"streams": STREAM},
            "stage": {
                "sketch": {
                    "use": "stream-sw",
                    "kind": "estimator",
                    "inputs": {"data": "streams"},
                    "k": 20,
                    "num_projections": 10,
                },
                "exact": {
                    "use": "exact-sw",
                    "inputs": {"data": "streams"},
                    "num_projections": 10,
                },
            },
            "inputs": {"subject": "sketch", "reference": "exact"},
        }
    },
    ("dataset", "two-sample-stream"): {"params": {"num_samples": 400, "batch_size": 100}},
}


@parametrize_with_checks(plugin_cases("quadriga-stream-sw", setup=SETUP))
def test_conformance(case, check):
    check(case)
