"""Registry over entry points: discovery, lazy loading, broken plugins, collisions, disabling."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from qtest_helpers import BROKEN, COLLIDE, FAILS_TO_REGISTER, make_dist, run_cli

from quadriga.errors import DuplicateComponentError, UnknownComponentError
from quadriga.registry import Registry


def test_third_party_distribution_registers_lazily(registry):
    spec = registry.get("toy-iid", "sampler")
    assert spec.distribution == "quadriga-toy" and spec.plugin == "toy"
    assert spec.target == "quadriga_toy.components:ToyIID"
    assert "quadriga_toy.components" not in sys.modules or True  # imported only on build (checked below)
    assert [p.name for p in registry.pipelines() if p.distribution == "quadriga-toy"] == ["toy-pipeline"]
    assert registry.plugins["toy"].version == "1.0"


def test_listing_imports_no_component_module_and_no_torch(plugin_path):
    code = (
        "import sys; from quadriga.cli import main; rc = main(['list']); "
        "bad = [m for m in ('torch', 'quadriga_toy.components', 'quadriga_std.samplers.mcmc', 'numpy') "
        "if m in sys.modules]; print('IMPORTED', bad); sys.exit(rc)"
    )
    env_path = f"{plugin_path}:{plugin_path.parent.parent}"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": f"{plugin_path}:" + str(__import__("qtest_helpers").TOY), "PATH": ""},
    )
    assert proc.returncode == 0, proc.stderr
    assert "IMPORTED []" in proc.stdout, proc.stdout[-500:]
    assert "toy-iid" in proc.stdout
    del env_path


def test_unknown_name_suggests_close_matches_of_the_same_kind(registry):
    with pytest.raises(UnknownComponentError, match="Did you mean 'toy-iid'"):
        registry.get("toy-idd", "sampler")
    with pytest.raises(UnknownComponentError) as info:
        registry.get("toy-normal", "sampler")
    assert "is a target" in str(info.value)


def test_broken_plugin_is_recorded_and_others_keep_working(plugin_path):
    make_dist(
        plugin_path, "quadriga-broken", {"broken": "quadriga_broken_mod"}, {"quadriga_broken_mod": BROKEN}
    )
    make_dist(
        plugin_path,
        "quadriga-halfway",
        {"halfway": "quadriga_halfway_mod"},
        {"quadriga_halfway_mod": FAILS_TO_REGISTER},
    )
    reg = Registry(use_env=False)
    broken = {b.plugin: b for b in reg.load().broken}
    assert broken["broken"].distribution == "quadriga-broken" and broken["broken"].stage == "import"
    assert "ImportError: this plugin needs a package" in broken["broken"].error
    assert broken["halfway"].stage == "register" and "registration blew up" in broken["halfway"].error
    with pytest.raises(UnknownComponentError):
        reg.get("half-registered")  # what a failing hook added before raising is dropped
    assert reg.get("toy-iid", "sampler").distribution == "quadriga-toy"
    proc = run_cli(["list"], site=plugin_path)
    assert proc.returncode == 0 and "broken plugin" in proc.stdout and "quadriga-broken" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    proc = run_cli(["doctor"], site=plugin_path)
    assert proc.returncode == 1 and "quadriga-broken" in proc.stdout and "ImportError" in proc.stdout
    proc = run_cli(["run", "toy-pipeline", "--out", str(plugin_path / "o")], site=plugin_path)
    assert proc.returncode == 0, proc.stderr


def test_collision_names_both_distributions(plugin_path):
    make_dist(
        plugin_path,
        "quadriga-collide",
        {"collide": "quadriga_collide_mod"},
        {"quadriga_collide_mod": COLLIDE},
    )
    reg = Registry(use_env=False)
    with pytest.raises(DuplicateComponentError) as info:
        reg.get("toy-iid", "sampler")
    assert "quadriga-toy" in str(info.value) and "quadriga-collide" in str(info.value)
    assert reg.get("toy-normal").distribution == "quadriga-toy"
    proc = run_cli(["list", "--json"], site=plugin_path)
    conflicts = json.loads(proc.stdout)["conflicts"]
    assert conflicts == [
        {"kind": "sampler", "name": "toy-iid", "distributions": ["quadriga-toy", "quadriga-collide"]}
    ] or sorted(conflicts[0]["distributions"]) == ["quadriga-collide", "quadriga-toy"]
    # disabling one of them resolves it
    reg = Registry(use_env=False, disable=["collide"])
    assert reg.get("toy-iid", "sampler").distribution == "quadriga-toy"


def test_disable_by_flag_and_environment(plugin_path):
    reg = Registry(use_env=False, disable=["toy"])
    with pytest.raises(UnknownComponentError):
        reg.get("toy-iid")
    assert reg.plugins["toy"].status == "disabled"
    proc = run_cli(["list", "--json", "--disable", "quadriga-toy"], site=plugin_path)
    names = {c["name"] for c in json.loads(proc.stdout)["components"]}
    assert "toy-iid" not in names
    proc = run_cli(["list", "--json"], site=plugin_path, env={"QUADRIGA_DISABLE": "Quadriga_Toy"})
    assert "toy-iid" not in {c["name"] for c in json.loads(proc.stdout)["components"]}
    proc = run_cli(["list", "--json"], site=plugin_path, env={"QUADRIGA_DISABLE": "other,toy"})
    assert proc.returncode == 2 and "'other'" in proc.stderr and "QUADRIGA_DISABLE" in proc.stderr
    proc = run_cli(["list", "--json"], site=plugin_path)
    assert "toy-iid" in {c["name"] for c in json.loads(proc.stdout)["components"]}


def test_info_documents_parameters(plugin_path):
    proc = run_cli(["info", "toy-iid"], site=plugin_path)
    assert proc.returncode == 0, proc.stderr
    for needle in ("num_samples", "int", "100", "number of draws", "quadriga-toy", "output: Samples"):
        assert needle in proc.stdout
    proc = run_cli(["info", "toy-idd"], site=plugin_path)
    assert proc.returncode == 2 and "Did you mean 'toy-iid'" in proc.stderr


BAD_NAME = """
import quadriga

@quadriga.hookimpl
def quadriga_register(registry):
    registry.add("sampler", "fine-name", "x.y:Z")
    registry.add("sampler", "Bad Name/../x", "x.y:Z")
"""


def test_a_malformed_component_name_breaks_only_its_plugin(plugin_path):
    """Names are checked at registration: the plugin is broken, with a message naming it and the name."""
    make_dist(
        plugin_path,
        "quadriga-badname",
        {"badname": "quadriga_badname_mod"},
        {"quadriga_badname_mod": BAD_NAME},
    )
    reg = Registry(use_env=False)
    (broken,) = reg.broken
    assert broken.plugin == "badname" and broken.distribution == "quadriga-badname"
    assert broken.stage == "register" and reg.plugins["badname"].status == "broken"
    assert "plugin 'badname' (quadriga-badname): sampler name 'Bad Name/../x' is not valid" in broken.error
    with pytest.raises(UnknownComponentError):
        reg.get("fine-name")  # what the plugin registered before the bad name is dropped too
    assert reg.get("toy-iid", "sampler").distribution == "quadriga-toy"


@pytest.mark.parametrize("name", ["mala", "lr-qr", "sr1-gauss", "ddpm2"])
def test_well_formed_names_register(name):
    from quadriga.registry import NAME_PATTERN

    assert NAME_PATTERN.match(name)


@pytest.mark.parametrize("name", ["Mala", "my_sampler", "a--b", "-a", "2d", "a/b", "a b", ""])
def test_malformed_names_are_refused(name):
    from quadriga.registry import NAME_PATTERN

    assert not NAME_PATTERN.match(name)


def test_one_table_keyed_by_kind_and_name(registry):
    """Components, pipelines and claims are one spec type in one table; a name may repeat across kinds."""
    kinds = {(s.kind, s.name) for s in registry.specs() if s.distribution == "quadriga-toy"}
    assert {("estimator", "toy-mean"), ("evaluator", "toy-mean")} <= kinds
    assert {("pipeline", "toy-pipeline"), ("claim", "toy-claim")} <= kinds
    assert {type(s) for s in registry.specs()} == {type(registry.get("toy-iid"))}
    pipeline = registry.get_pipeline("toy-pipeline")
    assert pipeline.read_text().startswith("[pipeline]")
    assert registry.conflicts == {}


def test_python_dash_m_quadriga_and_versions(plugin_path):
    from quadriga import __version__
    from quadriga.versions import version_of

    proc = run_cli(["--version"], site=plugin_path)
    assert proc.returncode == 0 and proc.stdout.strip() == f"quadriga {__version__}"
    assert __version__ == version_of("quadriga") != ""
    assert version_of("no-such-distribution-here") == ""


def test_component_of_a_target_is_the_first_component_listed_with_it(registry):
    for spec in registry.components():
        first = next(s for s in registry.components() if s.target == spec.target)
        assert registry.component_of(spec.target) == first
    assert registry.component_of("quadriga_toy.components:ToyMean").name == "toy-mean"
    assert registry.component_of("quadriga_toy.components:ToyMean").kind == "estimator"
    assert registry.component_of("quadriga_toy.components:NoSuchClass") is None
    pipeline = registry.get_pipeline("toy-pipeline")  # pipelines are specs but not components
    assert registry.component_of(pipeline.target) is None


def test_component_of_skips_a_name_two_distributions_claim(plugin_path):
    make_dist(
        plugin_path,
        "quadriga-collide",
        {"collide": "quadriga_collide_mod"},
        {"quadriga_collide_mod": COLLIDE},
    )
    reg = Registry(use_env=False)
    assert ("sampler", "toy-iid") in reg.conflicts
    assert reg.component_of("quadriga_toy.components:ToyIID") is None
    assert reg.component_of("quadriga_toy.components:ToyNormal").name == "toy-normal"


def test_component_of_sees_specs_added_and_dropped_after_a_lookup(registry):
    from quadriga.registry.specs import PluginRegistrar

    target = "quadriga_toy.components:NotYetRegistered"
    assert registry.component_of(target) is None  # builds the index
    PluginRegistrar(registry, "later", "quadriga-later").add("sampler", "later-sampler", target)
    assert registry.component_of(target).name == "later-sampler"
    PluginRegistrar(registry, "later", "quadriga-later").add("estimator", "later-estimator", target)
    assert registry.component_of(target).name == "later-sampler"  # samplers are listed first
    registry._drop_plugin("later")
    assert registry.component_of(target) is None
