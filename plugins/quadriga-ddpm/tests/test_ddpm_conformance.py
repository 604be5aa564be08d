"""The conformance checks (quadriga.testing) on every component of quadriga-ddpm.

One pytest item per (component, check); setup for the components whose defaults are expensive
or whose inputs the checks cannot make themselves.
"""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases

DIFFUSION = {"params": {"num_samples": 100, "num_steps": 10}, "task": {"use": "sphere-mixture", "dim": 2}}
SETUP = {
    ("sampler", "ddpm"): DIFFUSION,
    ("sampler", "ddim"): DIFFUSION,
    ("evaluator", "mixture-diagnostics"): {"task": {"use": "sphere-mixture", "dim": 2}},
}


@parametrize_with_checks(plugin_cases("quadriga-ddpm", setup=SETUP))
def test_conformance(case, check):
    check(case)
