"""``quadriga.testing.check_component`` passes good components and names every failure of bad ones."""

from __future__ import annotations

import pytest

from quadriga.registry import Registry
from quadriga.testing import CheckInputsUnavailable, ComponentCheckError, check_component, docstring_problems

BAD = '''
import attrs, torch
import quadriga
from quadriga import Estimate, Estimator, Evaluator, Fitted, Metrics, Sampler, Samples, Target, param
from quadriga.validators import positive_int

DOC = """A test component.

    Shapes: Tensor[n, d]. Units: units of x.

    Raises:
        ConfigError: never.

    Source: none.
    """


@attrs.define(kw_only=True)
class Good(Sampler):
    __doc__ = DOC
    num_samples: int = param(50, doc="draws (count)", validator=positive_int)

    def sample(self, target, *, generator):
        x = target.sample(self.num_samples, generator=generator)
        return Samples(x=x, chains=x.reshape(1, self.num_samples, -1))


@attrs.define(kw_only=True)
class Nondeterministic(Sampler):
    __doc__ = DOC
    def sample(self, target, *, generator):
        import random
        noise = random.SystemRandom().random()  # not from the generator: differs between runs
        return Samples(x=torch.full((10, target.dim), noise, dtype=torch.float64))


@attrs.define(kw_only=True)
class GlobalGenerator(Sampler):
    __doc__ = DOC
    def sample(self, target, *, generator):
        return Samples(x=torch.randn(10, target.dim, dtype=torch.float64))  # torch's global generator


@attrs.define(kw_only=True)
class BadShapes(Sampler):
    __doc__ = DOC
    def sample(self, target, *, generator):
        x = torch.zeros(12, target.dim + 1)
        return Samples(x=x, chains=x.reshape(2, 6, -1).flip(0), log_weights=torch.zeros(3))


@attrs.define(kw_only=True)
class RaisesOnBuild(Sampler):
    __doc__ = DOC
    step_size: float = param(0.1, doc="step (units of x)")

    def __attrs_post_init__(self):
        if self.step_size <= 0:
            raise RuntimeError("the step must be positive")  # does not say which parameter

    def sample(self, target, *, generator):
        return Samples(x=target.sample(4, generator=generator))


@attrs.define(kw_only=True)
class Undocumented(Sampler):
    """Draws."""
    size: int = param(4)

    def sample(self, target, *, generator):
        return Samples(x=target.sample(self.size, generator=generator))


@attrs.define(kw_only=True)
class NeedsFitted(Evaluator):
    __doc__ = DOC
    input_types = {"subject": (Fitted,)}

    def evaluate(self, subject, reference=None, *, generator):
        return Metrics(values={"x": 1.0})


@attrs.define(kw_only=True)
class WrongMetrics(Evaluator):
    __doc__ = DOC
    input_types = {"subject": (Samples,), "reference": (Target,)}

    def evaluate(self, subject, reference=None, *, generator):
        return Metrics(values={"ok": 1.0, "bad": "high"})


@attrs.define(kw_only=True)
class EveryOther(Sampler):
    __doc__ = DOC
    input_types = {"target": (Samples,)}

    def sample(self, target, *, generator):
        return Samples(x=target.x[::2])


@attrs.define(kw_only=True)
class KeepsGenerator(Sampler):
    __doc__ = DOC
    _generator: object = attrs.field(default=None, init=False, repr=False, eq=False)

    def sample(self, target, *, generator):
        self._generator = generator  # run state on the component
        return Samples(x=target.sample(8, generator=generator))


@attrs.define(kw_only=True)
class CountsCalls(Sampler):
    __doc__ = DOC
    num_samples: int = param(8, doc="draws (count)", validator=attrs.validators.ge(1))
    sizes: list = param(factory=list, doc="sizes drawn so far (count)")

    def sample(self, target, *, generator):
        self.calls = getattr(self, "calls", 0) + 1  # an attribute added by the call
        self.sizes.append(self.num_samples)  # a hyperparameter changed in place
        return Samples(x=target.sample(self.num_samples, generator=generator))


@attrs.define(kw_only=True)
class DeclaresXfail(Nondeterministic):
    __doc__ = DOC
    check_xfail = {"determinism": "draws from the system's entropy"}


@quadriga.hookimpl
def quadriga_register(registry):
    registry.add("sampler", "kit-xfail", "kit_bad_components:DeclaresXfail")
    for kind, name, cls in [("sampler", "kit-good", "Good"),
                            ("sampler", "kit-nondeterministic", "Nondeterministic"),
                            ("sampler", "kit-global-generator", "GlobalGenerator"),
                            ("sampler", "kit-bad-shapes", "BadShapes"),
                            ("sampler", "kit-raises", "RaisesOnBuild"),
                            ("sampler", "kit-undocumented", "Undocumented"),
                            ("sampler", "kit-every-other", "EveryOther"),
                            ("sampler", "kit-keeps-generator", "KeepsGenerator"),
                            ("sampler", "kit-counts-calls", "CountsCalls"),
                            ("evaluator", "kit-needs-fitted", "NeedsFitted"),
                            ("evaluator", "kit-wrong-metrics", "WrongMetrics")]:
        registry.add(kind, name, f"kit_bad_components:{cls}")
'''


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    """A registry with the installed plugins plus the components above."""
    import importlib
    import sys

    root = tmp_path_factory.mktemp("kitbad")
    (root / "kit_bad_components.py").write_text(BAD)
    sys.path.insert(0, str(root))
    try:
        module = importlib.import_module("kit_bad_components")
        yield Registry(use_env=False, plugins={"kit-bad": module})
    finally:
        sys.path.remove(str(root))
        sys.modules.pop("kit_bad_components", None)


def _failures(registry, kind, name, **kwargs):
    with pytest.raises(ComponentCheckError) as info:
        check_component(kind, name, registry=registry, **kwargs)
    return info.value.failures


def test_good_component_passes_every_check(registry):
    report = check_component("sampler", "kit-good", registry=registry)
    assert set(report.passed) == {
        "build",
        "config",
        "bad-params",
        "param-names",
        "docstring",
        "run",
        "output",
        "determinism",
        "stateless",
    }
    assert report.artifact.x.shape == (50, 2)
    assert report.pipeline["stage"]["checked"]["inputs"] == {"target": "target"}


def test_thinning_style_input_gets_samples(registry):
    """A component that accepts Samples gets exact draws as 4 chains of 64 from the 2-D target."""
    report = check_component("sampler", "kit-every-other", registry=registry)
    assert report.pipeline["stage"]["draws"]["use"] == "check-draws"
    assert report.artifact.x.shape == (128, 2)


def test_nondeterminism_is_reported(registry):
    failures = _failures(registry, "sampler", "kit-nondeterministic")
    assert set(failures) == {"determinism"}
    assert failures["determinism"] == "two runs with the same seed gave different results"


def test_drawing_from_a_global_generator_is_reported_as_such(registry):
    """Reproducible inside a run (the runner seeds the globals) but not on its own: named."""
    failures = _failures(registry, "sampler", "kit-global-generator")
    assert set(failures) == {"determinism"}
    assert "global generator" in failures["determinism"]


def test_perturbed_globals_shift_only_the_global_seeds():
    import numpy as np
    import torch

    from quadriga.seeding import make_generator, perturbed_globals, seed_everything

    seed_everything(3)
    plain = (torch.rand(2), np.random.rand(2))
    with perturbed_globals():
        seed_everything(3)
        shifted = (torch.rand(2), np.random.rand(2))
        given = torch.rand(2, generator=make_generator(3))
    seed_everything(3)
    assert torch.equal(torch.rand(2), plain[0]) and not torch.equal(shifted[0], plain[0])
    assert not np.array_equal(shifted[1], plain[1])
    assert torch.equal(given, torch.rand(2, generator=make_generator(3)))


def test_run_state_on_the_component_is_reported(registry):
    failures = _failures(registry, "sampler", "kit-keeps-generator")
    assert set(failures) == {"stateless"}
    assert "field '_generator' is not a hyperparameter (init=False)" in failures["stateless"]
    assert "'_generator' changed by sample()" in failures["stateless"]


def test_attributes_added_or_changed_by_the_call_are_reported(registry):
    failures = _failures(registry, "sampler", "kit-counts-calls")
    assert set(failures) == {"stateless"}
    assert "'calls' was added by sample()" in failures["stateless"]
    assert "'sizes' changed by sample()" in failures["stateless"]
    assert "init=False" not in failures["stateless"]


def test_stateless_check_snapshots_compare_by_value():
    import torch

    from quadriga.testing.problems import _changes, snapshot

    x, items = torch.zeros(3), [1, 2]
    holder = {"x": x, "items": items, "obj": object}
    before = snapshot(holder)
    x.add_(1.0)
    items.append(3)
    assert _changes(before, snapshot(holder)) == ["'x' changed", "'items' changed"]
    assert _changes(snapshot(holder), snapshot(holder)) == []


def test_shape_errors_are_all_reported(registry):
    failures = _failures(registry, "sampler", "kit-bad-shapes")
    assert set(failures) == {"output"}
    message = failures["output"]
    assert "d = 3, its input has dim 2" in message
    assert "log_weights has shape (3,), expected (12,)" in message


def test_bad_parameter_error_must_name_the_parameter(registry):
    failures = _failures(registry, "sampler", "kit-raises")
    assert set(failures) == {"bad-params"}
    assert "step_size=-1.0 raised a ConfigError that does not name 'step_size'" in failures["bad-params"]
    assert "step_size='not-a-number'" not in failures["bad-params"]  # the type check names it


def test_missing_documentation(registry):
    failures = _failures(registry, "sampler", "kit-undocumented")
    assert set(failures) == {"docstring"}
    for part in ("shapes", "units", "errors", "source", "parameter 'size' has no doc"):
        assert part in failures["docstring"]


def test_metrics_values_must_be_floats(registry):
    failures = _failures(registry, "evaluator", "kit-wrong-metrics")
    assert failures == {"output": "values['bad'] is str, expected a float"}


def test_unconstructible_inputs_are_said_clearly(registry):
    with pytest.raises(CheckInputsUnavailable, match=r"cannot make input 'subject' .*Fitted.*check_inputs"):
        check_component("evaluator", "kit-needs-fitted", registry=registry)


def test_inputs_fragment_and_skip(registry):
    """A pipeline fragment gives the inputs; skipped checks are reported as skipped."""
    fragment = {
        "task": {"normal": {"use": "check-gaussian", "dimension": 3}},
        "stage": {"draws": {"use": "kit-good", "inputs": {"target": "normal"}}},
        "inputs": {"subject": "draws", "reference": "normal"},
    }
    report = check_component(
        "evaluator", "kit-wrong-metrics", registry=registry, inputs=fragment, skip=("output",)
    )
    assert "output" in report.skipped and "determinism" in report.passed


def test_docstring_problems_accepts_sections():
    from quadriga.testing import CheckDraws, CheckGaussian

    assert docstring_problems(CheckDraws, "sampler") == []
    assert docstring_problems(CheckGaussian, "target") == []


def test_unknown_component_and_bad_arguments(registry):
    from quadriga.errors import UnknownComponentError

    with pytest.raises(UnknownComponentError, match="kit-good"):
        check_component("sampler", "kit-goood", registry=registry)
    with pytest.raises(ValueError, match="unknown check"):
        check_component("sampler", "kit-good", registry=registry, skip=("speed",))


INNER = """
import kit_bad_components
from quadriga.registry import Registry
from quadriga.testing import ComponentCase, parametrize_with_checks

REG = Registry(use_env=False, plugins={"kit-bad": kit_bad_components})
CASES = [ComponentCase(kind, name, registry=REG) for kind, name in
         [("sampler", "kit-good"), ("sampler", "kit-nondeterministic"), ("sampler", "kit-xfail"),
          ("target", "check-gaussian")]]


@parametrize_with_checks(CASES)
def test_conformance(case, check):
    check(case)
"""


def test_parametrize_with_checks_gives_one_item_per_component_and_check(tmp_path):
    """One pytest item per (component, check) named kind-name-check; failures, skips and declared
    expected failures are counted in the summary line."""
    import os
    import subprocess
    import sys

    (tmp_path / "kit_bad_components.py").write_text(BAD)
    (tmp_path / "test_inner.py").write_text(INNER)
    path = [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]  # the same quadriga as here
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "test_inner.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:] + proc.stderr[-2000:]
    assert "FAILED test_inner.py::test_conformance[sampler-kit-nondeterministic-determinism]" in out
    assert "PASSED test_inner.py::test_conformance[sampler-kit-good-determinism]" in out
    assert "XFAIL test_inner.py::test_conformance[sampler-kit-xfail-determinism]" in out
    assert "SKIPPED" in out and "tasks are checked by 'run'" in out
    # nine checks: the three samplers pass all but their determinism failure / expected failure;
    # the target skips output and determinism (checked by 'run') and stateless (tasks cache data)
    assert out.count("PASSED test_inner.py::test_conformance[") == 9 + 8 + 8 + 6
    assert "quadriga conformance: 33 run / 3 skipped / 1 failed (1 expected failures)" in out


def test_default_tasks_come_from_plugins():
    """quadriga-std gives the default tasks through its quadriga_check_tasks hook; without it the
    built-in check-gaussian is the target and there is no default dataset or environment."""
    from quadriga.testing import default_tasks
    from quadriga.testing.case import _registry

    with_std = default_tasks(_registry(Registry(use_env=False)))
    assert with_std == {
        "Target": {"use": "gaussian", "dim": 2},
        "Dataset": {"use": "sklearn-dataset", "name": "diabetes"},
        "Environment": {"use": "gym-env", "env_id": "CartPole-v1"},
    }
    without = default_tasks(_registry(Registry(use_env=False, disable=["std"])))
    assert without == {"Target": {"use": "check-gaussian"}}


def test_plugin_cases_and_bad_arguments(registry):
    from quadriga.testing import parametrize_with_checks, plugin_cases

    cases = plugin_cases(
        "kit-bad", registry=registry, setup={("sampler", "kit-good"): {"params": {"num_samples": 8}}}
    )
    good = next(c for c in cases if c.name == "kit-good")
    assert good.base == {"num_samples": 8} and str(good) == "sampler-kit-good"
    with pytest.raises(ValueError, match="registers no component"):
        plugin_cases("quadriga-not-installed", registry=registry)
    with pytest.raises(ValueError, match="does not register"):
        plugin_cases("kit-bad", registry=registry, setup={("sampler", "nope"): {}})
    with pytest.raises(ValueError, match="unknown check"):
        parametrize_with_checks(cases, checks=("speed",))


def test_param_names_flags_each_known_synonym_with_the_standard_word():
    """`lr`, `epochs`, `hidden`, `n_samples` and `lr` inside a compound are flagged, each message
    naming the standard word; standard names and unrelated names pass."""
    import attrs

    from quadriga import param
    from quadriga.params import STANDARD_NAMES, standard_name
    from quadriga.testing import name_problems

    @attrs.define(kw_only=True)
    class Synonyms:
        lr: float = param(0.1, doc="step")
        epochs: int = param(3, doc="passes")
        hidden: list = param(factory=lambda: [8], doc="widths")
        n_samples: int = param(10, doc="count")
        dual_lr: float = param(0.1, doc="dual step")
        hidden_sizes: list = param(factory=lambda: [8], doc="widths")
        step_size: float = param(0.1, doc="MCMC step")

    problems = name_problems(Synonyms)
    assert len(problems) == 5
    for old, new in [
        ("lr", "learning_rate"),
        ("epochs", "num_epochs"),
        ("hidden", "hidden_sizes"),
        ("n_samples", "num_samples"),
        ("dual_lr", "dual_learning_rate"),
    ]:
        assert any(f"parameter '{old}' " in p and f"rename it to '{new}'" in p for p in problems), old
    assert all(standard_name(word) is None for word in STANDARD_NAMES)  # no standard word is a synonym
    assert standard_name("passes") == "num_epochs" and standard_name("lr_grid") == "learning_rate_grid"


def test_seeding_a_cpu_stage_seeds_torch_s_generator_as_manual_seed_does_and_queues_no_device_call(
    monkeypatch,
):
    """On a CPU stage the CPU generator gets torch.manual_seed's state; no lazy accelerator call
    is queued while no accelerator is initialised; another device gets torch.manual_seed."""
    import torch

    from quadriga.seeding import seed_everything

    torch.manual_seed(2**40 + 7)
    expected = torch.rand(3)
    calls = []
    monkeypatch.setattr(torch.cuda, "manual_seed_all", lambda seed: calls.append(("cuda", seed)))
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    seed_everything(2**40 + 7)
    assert torch.equal(torch.rand(3), expected)
    assert calls == []
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)  # an initialised accelerator
    seed_everything(5)
    assert calls == [("cuda", 5)]
    seen = []
    monkeypatch.setattr(torch, "manual_seed", lambda seed: seen.append(seed))
    seed_everything(9, "cuda:0")
    assert seen == [9]
