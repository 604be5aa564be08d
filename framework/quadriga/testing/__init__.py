"""Conformance checks for components, shaped like scikit-learn's ``check_estimator``.

Each check is a public function taking a :class:`ComponentCase` (a registered component and the
setup the check needs) and raising :class:`CheckFailed` (an ``AssertionError``) with a message
naming the component and what is wrong, or :class:`CheckSkipped` when it does not apply.
A plugin's test suite runs every check on each of its components as its own pytest item::

    from quadriga.testing import parametrize_with_checks, plugin_cases

    @parametrize_with_checks(plugin_cases("quadriga-my-method"))
    def test_conformance(case, check):
        check(case)

and pytest's summary ends with one line ``quadriga conformance: N run / M skipped / K failed``.
:func:`check_component` runs them all at once and raises one :class:`ComponentCheckError`
listing every failure::

    check_component("sampler", "my-sampler", params={"num_samples": 100})

Checks, in order (:data:`CHECKS`):

- ``build``: the component builds from its defaults (plus the cheap ``params``);
- ``config``: its resolved parameters round-trip through configuration and are TOML values;
- ``bad-params``: an unknown key, a wrongly typed value and hostile numbers (-1, 0, NaN)
  are refused with a :class:`~quadriga.errors.ConfigError` naming the key, never another exception;
- ``param-names``: every parameter uses the standard word of its concept (``learning_rate``,
  ``num_epochs``, ``hidden_sizes``, ``num_samples``; :data:`quadriga.params.STANDARD_NAMES`), not a
  synonym such as ``lr``, ``epochs``, ``hidden`` or ``n_samples``;
- ``docstring``: the class (and method) docstrings have the sections for shapes, units,
  errors and source, and every parameter has a ``doc``;
- ``run``: it runs on a small task inside a pipeline (the core checks inputs and types);
- ``output``: the artifact has the declared type and consistent shapes;
- ``determinism``: two runs with the same seed give identical numbers;
- ``stateless``: its fields are its hyperparameters only (no ``init=False`` run state), and
  running it changes none of them and adds no attribute (the generator and any diagnostics are
  passed down and returned, not kept on ``self``).

Setup comes from the component class (or from the case, which takes precedence):

- ``check_params``: cheap parameters, e.g. ``{"total_frames": 200}``;
- ``check_task``: a task table replacing the default task of its type;
- ``check_inputs``: a pipeline fragment ``{"task": {...}, "stage": {...}, "inputs": {arg: node}}``
  making inputs the check cannot make itself (a ``Fitted`` subject, say);
- ``check_xfail``: ``{check name: reason}``, checks expected to fail (pytest marks them xfail);

Default tasks come from the plugins through the ``quadriga_check_tasks`` hook (quadriga-std
supplies a 2-D ``gaussian``, ``sklearn-dataset`` diabetes and ``gym-env`` CartPole-v1); without
one the built-in ``check-gaussian`` is the target. ``Samples`` inputs are exact draws from the
target as 4 chains (``check-draws``)::

    class MyEvaluator(Evaluator):
        check_params: ClassVar[dict] = {"num_episodes": 2}
        check_inputs: ClassVar[dict] = {
            "task": {"env": {"use": "gym-env", "env_id": "CartPole-v1"}},
            "stage": {"policy": {"use": "dqn", "inputs": {"task": "env"}, "total_frames": 200}},
            "inputs": {"subject": "policy", "reference": "env"},
        }

Nothing here is imported by ``import quadriga``; the checks import torch.

The package: :mod:`~quadriga.testing.checks` (the checks and :func:`check_component`),
:mod:`~quadriga.testing.case` (:class:`ComponentCase`), :mod:`~quadriga.testing.parametrize`
(pytest), :mod:`~quadriga.testing.problems` (what each check looks at),
:mod:`~quadriga.testing.settings` (cheap settings shared by plugins' checks: :func:`cheap_dqn`),
:mod:`~quadriga.testing.installed` (a plugin suite's registry and pipeline checks),
:mod:`~quadriga.testing.tasks` (the built-in providers) and :mod:`~quadriga.testing.report`.
"""

from __future__ import annotations

from quadriga.testing.case import ComponentCase, default_tasks
from quadriga.testing.checks import (
    CHECK_FUNCTIONS,
    check_bad_params,
    check_build,
    check_component,
    check_config,
    check_determinism,
    check_docstring,
    check_output,
    check_param_names,
    check_run,
    check_stateless,
)
from quadriga.testing.installed import check_pipeline, plugin_registry
from quadriga.testing.parametrize import parametrize_with_checks, plugin_cases
from quadriga.testing.problems import DOC_SECTIONS, docstring_problems, name_problems
from quadriga.testing.report import (
    CHECKS,
    CheckFailed,
    CheckInputsUnavailable,
    CheckReport,
    CheckSkipped,
    ComponentCheckError,
)
from quadriga.testing.settings import cheap_dqn
from quadriga.testing.tasks import CheckDraws, CheckGaussian

__all__ = [
    "CHECKS",
    "CHECK_FUNCTIONS",
    "DOC_SECTIONS",
    "CheckDraws",
    "CheckFailed",
    "CheckGaussian",
    "CheckInputsUnavailable",
    "CheckReport",
    "CheckSkipped",
    "ComponentCase",
    "ComponentCheckError",
    "cheap_dqn",
    "check_bad_params",
    "check_build",
    "check_component",
    "check_config",
    "check_determinism",
    "check_docstring",
    "check_output",
    "check_param_names",
    "check_pipeline",
    "check_run",
    "check_stateless",
    "default_tasks",
    "docstring_problems",
    "name_problems",
    "parametrize_with_checks",
    "plugin_cases",
    "plugin_registry",
]
