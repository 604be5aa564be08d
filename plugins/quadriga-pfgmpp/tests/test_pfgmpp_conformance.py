"""The conformance checks (quadriga.testing) on the pfgmpp sampler and learner."""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases

SETUP = {
    ("sampler", "pfgmpp"): {
        "params": {"num_samples": 50, "num_steps": 4, "aug_dim": 8.0, "quadrature_nodes": 64},
        "task": {"use": "gaussian-mixture", "preset": "4-mode-2d"},
    },
    ("learner", "pfgmpp-denoiser"): {
        "params": {"num_steps": 20, "batch_size": 32, "hidden_sizes": [16], "num_train": 64},
        "task": {"use": "gaussian-mixture", "preset": "4-mode-2d"},
    },
}


@parametrize_with_checks(plugin_cases("quadriga-pfgmpp", setup=SETUP))
def test_conformance(case, check):
    check(case)
