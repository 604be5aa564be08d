"""The conformance checks (quadriga.testing) on the characteristic-guidance samplers."""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases

COND = {"use": "conditional-gaussian-mixture", "preset": "3-class-2d", "grid_size": 100}
SETUP = {
    ("sampler", "chg-ddim"): {"params": {"num_samples": 50, "num_steps": 8}, "task": COND},
    ("sampler", "chg-ddpm"): {"params": {"num_samples": 50, "num_steps": 8}, "task": COND},
}


@parametrize_with_checks(plugin_cases("quadriga-characteristic-guidance", setup=SETUP))
def test_conformance(case, check):
    check(case)
