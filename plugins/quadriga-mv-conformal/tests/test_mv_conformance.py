"""The conformance checks (quadriga.testing) on every component of quadriga-mv-conformal."""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases

SETUP = {
    ("estimator", "st-dqr"): {
        "params": {"num_epochs": 2},
        "task": {"use": "mv-synthetic", "n_train": 100, "n_calibration": 50, "n_test": 50},
    },
}


@parametrize_with_checks(plugin_cases("quadriga-mv-conformal", setup=SETUP))
def test_conformance(case, check):
    check(case)
