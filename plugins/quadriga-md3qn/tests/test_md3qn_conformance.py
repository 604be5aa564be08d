"""The conformance checks (quadriga.testing) on every component of quadriga-md3qn.

One pytest item per (component, check); cheap training settings on the vector-reward chain.
"""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases

#: cheap settings (the pipeline's budget trains for minutes)
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
    "num_particles": 4,
}
CHAIN = {"use": "vector-reward-chain"}
SETUP = {
    ("learner", "md3qn"): {"params": CHEAP, "task": CHAIN},
    ("learner", "mmdqn-per-source"): {"params": CHEAP, "task": CHAIN},
}


@parametrize_with_checks(plugin_cases("quadriga-md3qn", setup=SETUP))
def test_conformance(case, check):
    check(case)
