"""The conformance checks, one function each, and :func:`check_component` running them all."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from quadriga.artifacts import same_numbers
from quadriga.interfaces import TASK_KINDS, interface_of
from quadriga.registry import Registry
from quadriga.testing.case import ComponentCase, _fail
from quadriga.testing.problems import (
    _bad_params,
    _config_problems,
    _output_problems,
    _state_problems,
    _task_problems,
    docstring_problems,
    name_problems,
)
from quadriga.testing.report import CHECKS, CheckFailed, CheckReport, CheckSkipped, ComponentCheckError


# ------------------------------------------------------------------ the checks
def check_build(case: ComponentCase) -> None:
    """The component builds from its defaults plus ``check_params`` and the case's ``params``.

    Raises:
        CheckFailed: building raised; the message gives the parameters and the error.
    """
    try:
        case.build()
    except Exception as exc:
        _fail(
            case,
            "build",
            [
                f"cannot be built from its defaults with params {case.base}: {type(exc).__name__}: {exc} "
                "(give required or cheap values with params= or the class attribute check_params)"
            ],
        )


def check_config(case: ComponentCase) -> None:
    """Its resolved parameters are TOML values and rebuild the same component.

    Raises:
        CheckFailed: they are not TOML values, do not rebuild it, or change on the round trip.
        CheckSkipped: the component does not build.
    """
    _fail(case, "config", _config_problems(case.reg, case.name, case.kind, case.built()))


def check_bad_params(case: ComponentCase) -> None:
    """An unknown key, a wrongly typed value and -1, 0, NaN are refused with a ConfigError naming the key.

    Accepting -1, 0 or NaN is allowed; raising anything but a ConfigError, or a ConfigError that
    does not name the parameter, is not.

    Raises:
        CheckFailed: one message per offending value.
        CheckSkipped: the component does not build.
    """
    case.built()
    _fail(case, "bad-params", _bad_params(case.reg, case.cls, case.name, case.kind, case.base))


def check_param_names(case: ComponentCase) -> None:
    """Each parameter uses the standard word of its concept (``learning_rate``, not ``lr``).

    Raises:
        CheckFailed: one message per synonym, naming the standard word (see :func:`name_problems`).
    """
    _fail(case, "param-names", name_problems(case.cls))


def check_docstring(case: ComponentCase) -> None:
    """Class and method docstrings have sections for shapes, units, errors and source; parameters have docs.

    Raises:
        CheckFailed: what is missing (see :func:`docstring_problems`).
    """
    _fail(case, "docstring", docstring_problems(case.cls, case.kind))


def check_run(case: ComponentCase) -> None:
    """It runs on a small task inside a pipeline (tasks: their own methods are exercised).

    Raises:
        CheckFailed: it raised, or the pipeline rejected it with the check's inputs.
        CheckInputsUnavailable: the check cannot make its inputs.
        CheckSkipped: the component does not build.
    """
    case.built()
    if case.kind in TASK_KINDS:
        _fail(case, "run", _task_problems(case.reg, case.name, case.kind, case.base, case.seed))
        return
    try:
        case.run(0)
    except CheckFailed as exc:
        _fail(case, "run", exc.problems)


def check_output(case: ComponentCase) -> None:
    """The artifact has the declared type and consistent shapes (``Samples.x`` is ``Tensor[n, d]``, ...).

    Raises:
        CheckFailed: every problem found.
        CheckSkipped: a task (checked by ``run``), or the run failed.
    """
    if case.kind in TASK_KINDS:
        raise CheckSkipped("tasks are checked by 'run'")
    result, pipe = case.ran(0)
    artifact = result.artifacts["checked"]
    inputs = {}
    for arg, node in case.pipeline()["stage"]["checked"]["inputs"].items():
        if isinstance(node, str):
            inputs[arg] = result.artifacts[node] if node in result.artifacts else pipe.tasks[node].component
    _fail(case, "output", _output_problems(interface_of(case.cls), artifact, inputs))


def _same_run(first: Any, second: Any) -> bool:
    """Whether two runs' ``checked`` stages hold the same results and artifact numbers."""
    a, b = first.artifacts["checked"], second.artifacts["checked"]
    return same_numbers(first.results["stages"]["checked"], second.results["stages"]["checked"]) and (
        same_numbers(a.numbers(), b.numbers())
    )


def check_determinism(case: ComponentCase) -> None:
    """Two runs with the same seed give identical results and artifacts (timings left out).

    The second run seeds torch's, NumPy's and Python's global generators differently
    (:func:`quadriga.seeding.perturbed_globals`) while the component gets the same generator: a
    component drawing from a global generator is reproducible inside a quadriga run (which seeds
    them per stage) but not when called on its own, and fails here. When the two runs differ, a
    third, unperturbed run tells the two causes apart.

    Raises:
        CheckFailed: they differ, naming the cause.
        CheckSkipped: a task (checked by ``run``), or the run failed.
    """
    if case.kind in TASK_KINDS:
        raise CheckSkipped("tasks are checked by 'run'")
    first = case.ran(0)[0]
    if _same_run(first, case.ran(1)[0]):
        return
    if _same_run(first, case.ran(2)[0]):
        problem = (
            "results change with the seed of torch's, NumPy's or Python's global generator: draw from "
            "the generator passed to the method (quadriga.seeding.child_generator, numpy_rng, int_seed; "
            "torch.nn layers: initialise under torch.random.fork_rng with a seed from it)"
        )
    else:
        problem = "two runs with the same seed gave different results"
    _fail(case, "determinism", [problem])


def check_stateless(case: ComponentCase) -> None:
    """Its fields are its hyperparameters, and running it changes none of them and adds no attribute.

    Every attrs field must be a constructor argument (``init=False`` fields hold run state), and
    the component's fields and other attributes after its run in the pipeline equal those before
    (containers and tensors compared by value, other objects by identity), as BlackJAX's kernels
    return ``(state, info)`` and keep nothing. Tasks are exempt: they prepare and cache their data.

    Raises:
        CheckFailed: each run-state field, and each attribute the run changed, added or removed.
        CheckSkipped: a task, or the run failed.
    """
    if case.kind in TASK_KINDS:
        raise CheckSkipped("tasks prepare and cache their data")
    before, after = case.state_change(0)
    method = interface_of(case.cls).method
    _fail(case, "stateless", _state_problems(case.cls, before, after, method))


#: check name -> check function, in the order they run
CHECK_FUNCTIONS: dict[str, Callable[[ComponentCase], None]] = {
    "build": check_build,
    "config": check_config,
    "bad-params": check_bad_params,
    "param-names": check_param_names,
    "docstring": check_docstring,
    "run": check_run,
    "output": check_output,
    "determinism": check_determinism,
    "stateless": check_stateless,
}


def check_component(
    kind: str,
    name: str,
    *,
    registry: Registry | None = None,
    params: Mapping[str, Any] | None = None,
    task: Mapping[str, Any] | None = None,
    inputs: Mapping[str, Any] | None = None,
    seed: int = 0,
    skip: Iterable[str] = (),
) -> CheckReport:
    """Run every conformance check on one registered component.

    Args:
        kind: ``sampler``, ``learner``, ``estimator``, ``evaluator``, ``target``, ``dataset``
            or ``environment``.
        name: the registered name.
        registry: defaults to a private registry of the installed plugins; the built-in
            providers ``check-gaussian`` and ``check-draws`` are added to it.
        params: parameters for the check on top of the class attribute ``check_params``
            (make expensive defaults cheap: ``{"total_frames": 200}``).
        task: a task table replacing the default task of its type, e.g.
            ``{"use": "gaussian-mixture", "preset": "4-mode-2d"}``.
        inputs: a pipeline fragment ``{"task": {...}, "stage": {...}, "inputs": {arg: node}}``
            replacing the class attribute ``check_inputs`` and the default inputs.
        seed: the root seed of both runs.
        skip: names from :data:`CHECKS` not to run.

    Returns:
        A :class:`CheckReport` when every check passed (or was skipped).

    Raises:
        ComponentCheckError: one or more checks failed; the message lists every failure.
        CheckInputsUnavailable: the check cannot make the component's inputs.
        UnknownComponentError: no such component.
        ValueError: an unknown kind or check name.
    """
    skip = set(skip)
    unknown = skip - set(CHECKS)
    if unknown:
        raise ValueError(f"unknown check(s) {sorted(unknown)}; checks are {', '.join(CHECKS)}")
    case = ComponentCase(
        kind, name, params=dict(params or {}), task=task, inputs=inputs, seed=seed, registry=registry
    )
    case.cls  # noqa: B018 - an unknown name raises here, before any check
    report = CheckReport(kind, name, skipped={c: "skipped by the caller" for c in CHECKS if c in skip})
    failures = _run_checks(case, skip, report)
    if kind not in TASK_KINDS and case._runs:
        report.artifact = case._runs[0][0].artifacts["checked"]
    if kind not in TASK_KINDS and not {"run", "output", "determinism"} <= skip:
        report.pipeline = case.pipeline()
    if failures:
        raise ComponentCheckError(kind, name, failures)
    return report


def _run_checks(case: ComponentCase, skip: set[str], report: CheckReport) -> dict[str, str]:
    """Run each check of :data:`CHECK_FUNCTIONS` not in ``skip`` on ``case``; check name -> its failures.

    Passed and skipped checks are noted in ``report``.

    Raises:
        ComponentCheckError: the ``build`` check failed (nothing else can be checked).
    """
    failures: dict[str, str] = {}
    for check, function in CHECK_FUNCTIONS.items():
        if check in skip:
            continue
        try:
            function(case)
        except CheckFailed as exc:
            failures[check] = "; ".join(exc.problems)
            if check == "build":  # nothing else can be checked
                raise ComponentCheckError(case.kind, case.name, failures) from exc.__cause__
        except CheckSkipped as exc:
            report.skipped[check] = str(exc)
        else:
            report.passed.append(check)
    return failures
