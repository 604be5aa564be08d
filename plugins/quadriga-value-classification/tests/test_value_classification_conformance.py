"""The conformance checks (quadriga.testing) on every component of quadriga-value-classification.

One pytest item per (component, check); cheap training settings for the two learners.
"""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases

#: cheap settings (the defaults train for minutes)
CHEAP = {
    "total_frames": 48,
    "frames_per_batch": 8,
    "learning_starts": 16,
    "batch_size": 8,
    "buffer_size": 64,
    "eps_anneal_frames": 32,
    "num_updates_per_batch": 1,
    "log_every": 1,
    "hidden_sizes": [8],
    "num_bins": 11,
}
SETUP = {
    ("learner", "dqn-hlgauss"): {"params": CHEAP},
    ("learner", "dqn-twohot"): {"params": CHEAP},
}


@parametrize_with_checks(plugin_cases("quadriga-value-classification", setup=SETUP))
def test_conformance(case, check):
    check(case)
