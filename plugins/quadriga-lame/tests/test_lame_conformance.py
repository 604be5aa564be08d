"""The conformance checks (quadriga.testing) on every component of quadriga-lame."""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases

DIGITS = {"use": "shifted-digits", "scenarios": ["iid"]}
#: a two-epoch source classifier as the 'model' input of every adaptation learner
SOURCE = {
    "task": {"task": DIGITS},
    "stage": {"source": {"use": "mlp-classifier", "inputs": {"task": "task"}, "num_epochs": 2}},
    "inputs": {"task": "task", "model": "source"},
}
SETUP = {
    ("learner", "lame"): {"inputs": SOURCE},
    ("learner", "tent"): {"inputs": SOURCE},
    ("learner", "pseudo-label"): {"inputs": SOURCE},
}


@parametrize_with_checks(plugin_cases("quadriga-lame", setup=SETUP))
def test_conformance(case, check):
    check(case)
