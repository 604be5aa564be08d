"""The conformance checks (quadriga.testing) on every component of quadriga-inference-gym.

One pytest item per (component, check); every component runs from its defaults (plus its
``check_params``/``check_inputs``) on small tasks.
"""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases


@parametrize_with_checks(plugin_cases("quadriga-inference-gym"))
def test_conformance(case, check):
    check(case)
