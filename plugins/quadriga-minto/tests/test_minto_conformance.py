"""The conformance checks (quadriga.testing) on every component of quadriga-minto.

One pytest item per (component, check); setup for the components whose defaults are expensive
or whose inputs the checks cannot make themselves.
"""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases

SETUP = {
    ("learner", "minto"): {
        "params": {
            "total_frames": 48,
            "frames_per_batch": 8,
            "learning_starts": 16,
            "batch_size": 8,
            "buffer_size": 64,
            "eps_anneal_frames": 32,
            "num_updates_per_batch": 1,
            "log_every": 1,
            "hidden_sizes": [8],
        }
    }
}


@parametrize_with_checks(plugin_cases("quadriga-minto", setup=SETUP))
def test_conformance(case, check):
    check(case)
