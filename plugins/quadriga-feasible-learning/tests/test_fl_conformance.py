"""The conformance checks (quadriga.testing) on every component of quadriga-feasible-learning.

One pytest item per (component, check). The learners and the evaluator declare cheap settings
(``check_params``: 3 epochs, one hidden layer of 8) and the evaluator its inputs (``check_inputs``:
a feasible-learning fit on diabetes), so no extra setup is needed here.
"""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases


@parametrize_with_checks(plugin_cases("quadriga-feasible-learning"))
def test_conformance(case, check):
    check(case)
