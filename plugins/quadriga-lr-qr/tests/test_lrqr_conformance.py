"""The conformance checks (quadriga.testing) on every component of quadriga-lr-qr.

One pytest item per (component, check); setup for the components whose defaults are expensive
or whose inputs the checks cannot make themselves.
"""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases

SHIFTED = {"use": "sklearn-dataset", "name": "diabetes", "shift": True}
SETUP = {
    ("estimator", "lr-qr"): {"params": {"steps": 20}, "task": SHIFTED},
    ("estimator", "conditional-conformal"): {"params": {"num_evaluation_points": 3}, "task": SHIFTED},
}


@parametrize_with_checks(plugin_cases("quadriga-lr-qr", setup=SETUP))
def test_conformance(case, check):
    check(case)
