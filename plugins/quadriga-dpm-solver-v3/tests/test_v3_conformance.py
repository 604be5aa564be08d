"""The conformance checks (quadriga.testing) on the dpm-solver-v3 sampler."""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases

SETUP = {
    ("sampler", "dpm-solver-v3"): {
        "params": {"num_samples": 50, "nfe": 5, "ems_samples": 16, "ems_points": 20},
        "task": {"use": "gaussian-mixture", "preset": "4-mode-2d"},
    },
}


@parametrize_with_checks(plugin_cases("quadriga-dpm-solver-v3", setup=SETUP))
def test_conformance(case, check):
    check(case)
