"""The plugin toolkit: validators raising ConfigError(key=), component-typed parameters, the default
Dataset.split and PluginRegistrar.add_pipelines."""

from __future__ import annotations

import math
import types

import attrs
import numpy as np
import pytest

from quadriga import param
from quadriga.components import as_component, build
from quadriga.errors import ConfigError, QuadrigaError
from quadriga.hookspecs import hookimpl
from quadriga.interfaces import Dataset, Sampler
from quadriga.registry import Registry
from quadriga.registry.specs import PluginRegistrar
from quadriga.validators import (
    finite,
    in_range,
    instance_of,
    int_at_least,
    non_negative,
    non_negative_int,
    one_of,
    optional,
    positive,
    positive_int,
    probability,
)


@attrs.define(kw_only=True)
class Knobs:
    step: float = param(0.1, doc="", validator=positive)
    floor: float = param(0.0, doc="", validator=non_negative)
    mix: float = param(0.5, doc="", validator=probability)
    level: float = param(0.9, doc="", validator=in_range(0, 1, low_open=True, high_open=True))
    order: float = param(2.0, doc="", validator=in_range(1))
    count: int = param(3, doc="", validator=positive_int)
    burn: int = param(0, doc="", validator=non_negative_int)
    batches: int = param(10, doc="", validator=int_at_least(2, hint="(one batch has no spread)"))
    kernel: str = param("gaussian", doc="", validator=one_of(("gaussian", "laplace")))
    bandwidth: float | None = param(None, doc="", validator=optional(positive))
    flag: bool = param(False, doc="", validator=instance_of(bool))
    shift: float = param(0.0, doc="", validator=finite)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("step", 0.0, "step must be a finite number > 0, got 0.0."),
        ("step", math.inf, "step must be a finite number > 0, got inf."),
        ("step", True, "step must be a finite number > 0, got True."),
        ("floor", -1e-9, "floor must be a finite number >= 0, got -1e-09."),
        ("mix", 1.5, "mix must be a number in [0, 1], got 1.5."),
        ("level", 1.0, "level must be a finite number in (0, 1), got 1.0."),
        ("order", 0.5, "order must be a finite number in [1, inf), got 0.5."),
        ("count", 0, "count must be an integer >= 1, got 0."),
        ("count", 2.0, "count must be an integer >= 1, got 2.0."),
        ("burn", -1, "burn must be an integer >= 0, got -1."),
        ("batches", 1, "batches must be an integer >= 2, got 1. (one batch has no spread)"),
        (
            "kernel",
            "gausian",
            "kernel must be one of 'gaussian', 'laplace', got 'gausian'. Did you mean 'gaussian'?",
        ),
        ("bandwidth", -2.0, "bandwidth must be a finite number > 0, got -2.0."),
        ("flag", 1, "flag must be of type bool, got 1."),
        ("shift", math.nan, "shift must be a finite number, got nan."),
    ],
)
def test_each_validator_raises_a_config_error_naming_its_key(key, value, message):
    with pytest.raises(ConfigError) as bad:
        Knobs(**{key: value})
    assert bad.value.key == key
    assert bad.value.reason == message


def test_validators_accept_their_edges():
    knobs = Knobs(
        step=1e-300, floor=0, mix=1, level=0.5, order=1, count=1, burn=0, batches=2, bandwidth=None, flag=True
    )
    assert (knobs.mix, knobs.order, knobs.bandwidth) == (1, 1, None)
    assert Knobs(bandwidth=0.3, kernel="laplace").bandwidth == 0.3


@attrs.define(kw_only=True)
class _Walk(Sampler):
    """A sampler for the tests (never run)."""

    step_size: float = param(0.1, doc="step", validator=positive)
    num_chains: int = param(2, doc="chains", validator=positive_int)

    def sample(self, target, *, generator):  # pragma: no cover - never run
        raise NotImplementedError


@attrs.define(kw_only=True)
class _Wrapper(Sampler):
    """A sampler with a component-typed parameter."""

    inner: Sampler = param(factory=_Walk, doc="the wrapped sampler", converter=as_component(Sampler))
    scale: float = param(1.0, doc="scale", validator=positive)

    def sample(self, target, *, generator):  # pragma: no cover - never run
        raise NotImplementedError


@pytest.fixture
def registry(monkeypatch):
    """A registry holding only _Walk and _Wrapper, also as the process-wide one."""

    def quadriga_register(registry):
        registry.add("sampler", "kit-walk", f"{__name__}:_Walk")
        registry.add("sampler", "kit-wrapper", f"{__name__}:_Wrapper")

    plugin = types.SimpleNamespace(quadriga_register=hookimpl(quadriga_register))
    reg = Registry(use_env=False, plugins={"kit-validators": plugin}).load()
    monkeypatch.setattr("quadriga.registry.get_registry", lambda: reg)
    return reg


def test_a_pipeline_table_reports_file_table_and_key_without_parsing_messages(registry):
    with pytest.raises(ConfigError) as bad:
        build(registry, "kit-walk", {"step_size": -1.0}, kinds=("sampler",), file="p.toml", table="stage.w")
    assert (bad.value.file, bad.value.table, bad.value.key) == ("p.toml", "stage.w", "step_size")
    with pytest.raises(ConfigError) as nested:
        build(registry, "kit-wrapper", {"inner": {"use": "kit-walk", "num_chains": 0}}, kinds=("sampler",))
    assert nested.value.key == "inner.num_chains"
    assert "num_chains must be an integer >= 1, got 0" in nested.value.reason


def test_a_component_parameter_takes_a_name_a_table_or_a_built_component(registry):
    by_name = _Wrapper(inner="kit-walk")
    by_table = _Wrapper(inner={"use": "kit-walk", "step_size": 0.25})
    built = _Walk(step_size=0.5)
    assert isinstance(by_name.inner, _Walk) and by_name.inner.step_size == 0.1
    assert isinstance(by_table.inner, _Walk) and by_table.inner.step_size == 0.25
    assert _Wrapper(inner=built).inner is built
    config = build(
        registry, "kit-wrapper", {"inner": {"use": "kit-walk", "num_chains": 3}}, kinds=("sampler",)
    )
    assert config.config["inner"] == {"use": "kit-walk", "step_size": 0.1, "num_chains": 3}


@pytest.mark.parametrize(
    ("value", "key", "part"),
    [
        ("kit-wlak", "inner.use", "kit-walk"),
        ({"use": "kit-walk", "step_size": 0.0}, "inner.step_size", "step_size must be a finite number > 0"),
        ({"use": "kit-walk", "stepsize": 0.1}, "inner.stepsize", "unknown parameter 'stepsize'"),
        (3.0, "inner", "inner must be a registered Sampler name, a table with 'use'"),
    ],
)
def test_a_bad_component_parameter_names_the_nested_key(registry, value, key, part):
    with pytest.raises(ConfigError) as bad:
        _Wrapper(inner=value)
    assert bad.value.key == key
    assert part in str(bad.value)


@attrs.define(kw_only=True)
class _Pairs(Dataset):
    """Splits ``{name: (X, y)}`` and one unlabelled split."""

    _splits: dict = attrs.field(factory=dict, init=False)

    def prepare(self, *, generator=None):
        x = np.arange(6.0).reshape(3, 2)
        self._splits = {"train": (x, x[:, 0]), "test": (x + 10, x[:, 0] + 10), "pool": x * 2}


def test_the_default_split_copies_checks_the_name_and_needs_prepare():
    data = _Pairs()
    with pytest.raises(ConfigError, match="call prepare"):
        data.split("train")
    data.prepare()
    X, y = data.split("train")
    np.testing.assert_array_equal(X, np.arange(6.0).reshape(3, 2))
    np.testing.assert_array_equal(y, [0.0, 2.0, 4.0])
    X[0, 0] = 99.0  # a copy: the dataset is unchanged
    assert data.split("train")[0][0, 0] == 0.0
    pool, none = data.split("pool")
    assert none is None and pool[2, 1] == 10.0
    with pytest.raises(
        KeyError, match=r"unknown split 'tset'; valid: train, test, pool\. Did you mean 'test'"
    ):
        data.split("tset")


def _registrar() -> tuple[Registry, PluginRegistrar]:
    reg = Registry(use_env=False).load()
    return reg, PluginRegistrar(reg, "kit", "quadriga-kit")


def test_add_pipelines_registers_each_file_summarised_by_its_description(tmp_path, monkeypatch):
    package = tmp_path / "kit_pipes"
    (package / "pipelines").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "pipelines" / "b-run.toml").write_text(
        '[pipeline]\nname = "b-run"\ndescription = """\nFirst line\nwrapped.\n\nDetails."""\n'
    )
    (package / "pipelines" / "a-run.toml").write_text('[pipeline]\ndescription = "One line."\n')
    (package / "pipelines" / "notes.txt").write_text("not a pipeline")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg, registrar = _registrar()
    assert registrar.add_pipelines("kit_pipes") == ["a-run", "b-run"]
    specs = {s.name: s for s in reg.pipelines()}
    assert specs["b-run"].summary == "First line wrapped."
    assert specs["a-run"].summary == "One line."
    assert specs["b-run"].target == "kit_pipes:pipelines/b-run.toml"
    assert specs["b-run"].read_text().startswith("[pipeline]")

    (package / "pipelines" / "c-run.toml").write_text('[pipeline]\nname = "other"\n')
    with pytest.raises(QuadrigaError, match=r"c-run\.toml declares \[pipeline\] name = 'other'"):
        _registrar()[1].add_pipelines("kit_pipes")
    with pytest.raises(QuadrigaError, match="no pipeline folder 'missing'"):
        _registrar()[1].add_pipelines("kit_pipes", folder="missing")


def test_add_package_registers_the_declared_components_claims_and_pipelines(tmp_path, monkeypatch):
    package = tmp_path / "kit_decl"
    (package / "pipelines").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "pipelines" / "d-run.toml").write_text('[pipeline]\ndescription = "A run."\n')
    (package / "plugin.toml").write_text(
        '[plugin]\npaper = "Doe 2025"\n\n'
        '[sampler.kit-walk]\ntarget = "walk:Walk"\nsummary = "a walk"\npaper = "{paper}, Alg. 1"\n'
        'tags = ["mcmc"]\n\n'
        '[claim.kit-claim]\ntarget = "claims:CLAIM"\nsummary = "it walks"\npaper = "{paper}, Fig. 2"\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    reg, registrar = _registrar()
    assert registrar.add_package("kit_decl") == ["kit-walk", "kit-claim", "d-run"]
    walk, claim = reg.get("kit-walk", "sampler"), reg.get("kit-claim", "claim")
    assert (walk.target, walk.summary, walk.paper, walk.tags) == (
        "kit_decl.walk:Walk",
        "a walk",
        "Doe 2025, Alg. 1",
        ("mcmc",),
    )
    assert (claim.target, claim.paper, claim.distribution) == (
        "kit_decl.claims:CLAIM",
        "Doe 2025, Fig. 2",
        "quadriga-kit",
    )
    assert reg.get("d-run", "pipeline").summary == "A run."
    for text, message in (
        ('[samplr.x]\ntarget = "a:B"\n', r"\[samplr\] is not a kind.*Did you mean 'sampler'"),
        ('[sampler.x]\nsummary = "s"\n', r"\[sampler\.x\] has no target"),
        ('[claim.x]\ntarget = "a:B"\ntags = ["mcmc"]\n', r"\[claim\.x\] has unknown key\(s\) tags"),
        ('[sampler.x]\ntarget = "a:B"\ntags = ["nope"]\n', "nope"),
        ("[sampler\n", "not valid TOML"),
    ):
        (package / "plugin.toml").write_text(text)
        with pytest.raises(QuadrigaError, match=message):
            _registrar()[1].add_package("kit_decl")
    with pytest.raises(QuadrigaError, match=r"other\.toml: no such file"):
        _registrar()[1].add_package("kit_decl", file="other.toml")


def test_every_plugin_pipeline_is_found_with_a_one_line_summary():
    reg = Registry().load()
    pipelines = reg.pipelines()
    assert len(pipelines) >= 39
    for spec in pipelines:
        assert spec.summary and "\n" not in spec.summary, spec.name
        assert spec.target.endswith(f"pipelines/{spec.name}.toml")
