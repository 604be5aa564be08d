"""Plugins and names: duplicate entry points and component names shown (never one dropped silently),
--disable in any spelling and refused when unknown, doctor's version checks, the manifest's versions,
claim names fit for directories; and the sampler checks that refuse meaningless output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from robust_helpers import GOOD, assert_clean

COLLIDE = """
import quadriga

@quadriga.hookimpl
def quadriga_register(registry):
    registry.add("sampler", "toy-iid", "quadriga_toy.components:ToyIID", summary="a second toy-iid")
"""
EMPTY = """
import quadriga

@quadriga.hookimpl
def quadriga_register(registry):
    registry.add("sampler", "{name}", "quadriga_toy.components:ToyIID", summary="from {dist}")
"""
BAD_CLAIM = """
import quadriga

@quadriga.hookimpl
def quadriga_register(registry):
    registry.add_claim("{name}", "quadriga_toy.components:toy_claim")
"""


@pytest.fixture
def extra_site(site, tmp_path, monkeypatch):
    """``add(name, entry_points, modules, requires=())``: another distribution on sys.path for this test."""
    from quadriga.registry import reset_registry

    root = tmp_path / "extra-site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))

    def add(name, entry_points, modules=None, requires=()):
        info = root / f"{name.replace('-', '_')}-1.0.dist-info"
        info.mkdir()
        meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n" + "".join(
            f"Requires-Dist: {r}\n" for r in requires
        )
        (info / "METADATA").write_text(meta)
        (info / "entry_points.txt").write_text(
            "[quadriga]\n" + "".join(f"{k} = {v}\n" for k, v in entry_points.items())
        )
        for module, source in (modules or {}).items():
            (root / f"{module}.py").write_text(source)
        reset_registry()

    yield add
    reset_registry()


def test_duplicate_entry_point_names_are_both_reported_and_neither_loaded(cli, extra_site):
    extra_site("quadriga-one", {"dup": "dup_one"}, {"dup_one": EMPTY.format(name="from-one", dist="one")})
    extra_site("quadriga-two", {"dup": "dup_two"}, {"dup_two": EMPTY.format(name="from-two", dist="two")})
    o = cli("doctor")
    assert o.rc == 1
    for needle in ("quadriga-one", "quadriga-two", "dup_one", "dup_two", "neither is loaded"):
        assert needle in o.out, (needle, o.out)
    o = cli("list", "--json")
    names = {c["name"] for c in json.loads(o.out)["components"]}
    assert not {"from-one", "from-two"} & names
    broken = {b["distribution"] for b in json.loads(o.out)["broken"]}
    assert {"quadriga-one", "quadriga-two"} <= broken


def test_the_same_distribution_found_twice_is_one_plugin(site):
    from quadriga.registry import Registry

    reg = Registry(use_env=False).load()
    assert reg.plugins["toy"].status == "ok"


def test_duplicate_component_names_shown_by_info_and_list(cli, extra_site):
    extra_site("quadriga-collide", {"collide": "collide_mod"}, {"collide_mod": COLLIDE})
    o = cli("info", "toy-iid")
    assert o.rc == 0, o.text
    assert o.out.count("sampler toy-iid") == 2 and "name collision" in o.out
    assert "quadriga-toy" in o.out and "quadriga-collide" in o.out
    o = cli("list", "--kind", "sampler")
    rows = [line for line in o.out.splitlines() if " toy-iid " in line]
    assert len(rows) == 2 and all("NAME COLLISION" in r for r in rows), o.out
    o = cli("run", "toy-pipeline", "--check")
    assert_clean(o, 2, "registered by both", "quadriga-collide", "quadriga-toy")


@pytest.mark.parametrize("spelling", ["quadriga_toy", "Quadriga-Toy", "QUADRIGA.TOY", "toy"])
def test_disable_accepts_any_spelling(cli, tmp_path, spelling):
    o = cli("--disable", spelling, "run", "toy-pipeline", "--check")
    assert_clean(o, 2, "toy-pipeline", "Disabled")


@pytest.mark.parametrize("value", ["quadriga-nonexist", "toy,nonexist", " , quadriga-tyo"])
def test_unknown_names_in_quadriga_disable_are_refused(cli, monkeypatch, value):
    monkeypatch.setenv("QUADRIGA_DISABLE", value)
    assert_clean(cli("list"), 2, "QUADRIGA_DISABLE", "cannot be disabled")


def test_disabled_component_is_not_reported_as_merely_unknown(cli, tmp_path):
    (tmp_path / "p.toml").write_text(GOOD)
    o = cli("--disable", "quadriga-toy", "run", "p.toml", "--check")
    assert_clean(o, 2, "toy-normal", "Disabled", "quadriga-toy")


def test_doctor_reports_version_requirements_not_met(cli, extra_site):
    extra_site(
        "quadriga-needy",
        {"needy": "needy_mod"},
        {"needy_mod": EMPTY.format(name="needy-iid", dist="needy")},
        requires=["gymnasium<1.0", "torch>=99", "goodpoints>=0.1", "POT<0.1; extra == 'x'"],
    )
    o = cli("doctor")
    assert o.rc == 1
    assert "'quadriga-needy' requires gymnasium<1.0 but gymnasium 1.4" in o.out, o.out
    assert "torch>=99" in o.out and "goodpoints" not in o.out.split("version mismatch")[-1].split("\n")[0]
    assert "POT<0.1" not in o.out


def test_doctor_names_stale_metadata_that_shadows_an_installed_plugin(cli, extra_site, tmp_path):
    """A leftover quadriga_std-1.0.dist-info early on sys.path is read before the installed one."""
    extra_site("quadriga-std", {"std": "quadriga_std.plugin"})
    o = cli("doctor")
    assert o.rc == 1
    text = " ".join(o.out.split())
    assert "stale metadata: quadriga-std: the metadata in" in text, o.out
    assert "quadriga_std-1.0.dist-info (version 1.0) is read before the installed" in text
    assert "remove" in text and "all plugins load" not in text


def test_doctor_checks_the_shipped_requirements():
    from quadriga.cli.doctor import requirement_problems

    assert requirement_problems(["quadriga-std", "quadriga-minto", "quadriga-kernel-thinning"]) == []


def test_manifest_records_rl_and_array_library_versions(cli, tmp_path):
    (tmp_path / "p.toml").write_text(GOOD)
    assert cli("run", "p.toml", "--out", "r", "--quiet").rc == 0
    versions = json.loads((tmp_path / "r" / "manifest.json").read_text())["versions"]
    from quadriga.versions import version_of

    for lib in ("torch", "gymnasium", "torchrl", "numpy", "POT", "goodpoints"):
        assert versions[lib] == version_of(lib) and versions[lib], (lib, versions)


@pytest.mark.parametrize("name", ["../escape", "a/b", "Upper", "dots.in.name", ""])
def test_claim_names_that_are_not_directory_safe_are_refused(cli, extra_site, name):
    extra_site("quadriga-claimy", {"claimy": "claimy_mod"}, {"claimy_mod": BAD_CLAIM.format(name=name)})
    o = cli("doctor")
    assert o.rc == 1 and "claimy" in o.out and "is not valid" in o.out, o.out


# ---------------------------------------------------------------- samplers refuse meaningless output
STD = """
[pipeline]
name = "mcmc"
[task.t]
use = "{target}"
{target_params}
[stage.mcmc]
use = "{sampler}"
inputs = {{ target = "t" }}
num_samples = 200
burn_in = 50
step_size = {step}
"""


def test_diverged_ula_fails_its_own_stage(cli, tmp_path):
    text = STD.format(target="gaussian", target_params="dim = 2", sampler="ula", step=5.0)
    text += '[stage.ed]\nuse = "energy-distance"\ninputs = { subject = ["mcmc"], reference = "t" }\n'
    (tmp_path / "p.toml").write_text(text)
    o = cli("run", "p.toml", "--out", "r", "--quiet")
    assert_clean(o, 1, "stage 'mcmc' failed", "ULA diverged", "Lower step_size")
    st = json.loads((tmp_path / "r" / "status.json").read_text())
    assert st["stages"]["mcmc"]["status"] == "failed" and "ed" not in st["stages"]
    assert "RuntimeWarning" not in o.text


def test_stable_ula_is_not_flagged(cli, tmp_path):
    (tmp_path / "p.toml").write_text(
        STD.format(target="gaussian", target_params="dim = 2", sampler="ula", step=0.1)
    )
    assert_clean(cli("run", "p.toml", "--out", "r", "--quiet"), 0)


@pytest.mark.parametrize(("sampler", "step"), [("rwm", 0.3), ("mala", 0.3), ("hmc", 0.05)])
def test_initial_points_outside_the_support_are_drawn_again(cli, tmp_path, sampler, step):
    """half-normal is -inf for x_0 <= 1 (84% of N(0, I) starting points): every chain must start inside.

    (HMC's 10 leapfrog steps of 0.3 leave the support from every start: no proposal is accepted
    and the stage fails as stuck, so it takes steps of 0.05 here.)
    """
    import torch

    (tmp_path / "p.toml").write_text(
        STD.format(target="half-normal", target_params="", sampler=sampler, step=step)
    )
    o = cli("run", "p.toml", "--out", "r", "--quiet")
    assert_clean(o, 0)
    summary = json.loads((tmp_path / "r" / "results.json").read_text())["stages"]["mcmc"]
    assert summary["info"]["init_redraws"] > 0, summary
    from quadriga.artifacts import Samples

    x = Samples.load(Path(tmp_path / "r" / "stages" / "mcmc")).x
    assert bool(torch.all(x[:, 0] > 1.0)), "a chain stayed outside the support"


def test_initial_points_that_never_reach_the_support_are_refused(site, tmp_path):
    import torch
    from quadriga_robust import HalfNormal
    from quadriga_std.samplers.mcmc import RWM

    from quadriga.errors import ConfigError

    with pytest.raises(ConfigError, match=r"log_prob is not finite.*init = 'target'"):
        RWM(num_samples=5, burn_in=0, init_scale=1e-6).sample(
            HalfNormal(), generator=torch.Generator().manual_seed(0)
        )


@pytest.mark.parametrize("body", ["import sys\nsys.exit(3)\n", "raise SystemExit('bye')\n"])
def test_a_plugin_that_exits_at_import_is_broken_and_everything_else_works(cli, extra_site, body):
    extra_site("quadriga-exits", {"exits": "exits_mod"}, {"exits_mod": body})
    o = cli("list", "--json")
    assert o.rc == 0, o.text
    data = json.loads(o.out)
    assert "toy-iid" in {c["name"] for c in data["components"]}  # the other plugins still work
    (broken,) = [b for b in data["broken"] if b["distribution"] == "quadriga-exits"]
    assert "SystemExit" in json.dumps(broken)
    o = cli("doctor")
    assert o.rc == 1 and "quadriga-exits" in o.out and "SystemExit" in o.out, o.text


def test_a_plugin_that_hangs_at_import_is_broken_after_the_deadline(cli, extra_site, monkeypatch):
    """QUADRIGA_IMPORT_TIMEOUT bounds a plugin's import; the others load and the hanger is named."""
    monkeypatch.setenv("QUADRIGA_IMPORT_TIMEOUT", "0.5")
    extra_site("quadriga-sleeps", {"sleeps": "sleeps_mod"}, {"sleeps_mod": "import time\ntime.sleep(600)\n"})
    o = cli("--no-cache", "list", "--json")
    assert o.rc == 0, o.text
    data = json.loads(o.out)
    assert "toy-iid" in {c["name"] for c in data["components"]}
    (broken,) = [b for b in data["broken"] if b["distribution"] == "quadriga-sleeps"]
    assert "did not finish within 0.5 s" in json.dumps(broken)
    from quadriga.registry import reset_registry

    reset_registry()
    monkeypatch.setenv("QUADRIGA_IMPORT_TIMEOUT", "soon")
    o = cli("--no-cache", "list")
    assert o.rc == 2 and "QUADRIGA_IMPORT_TIMEOUT must be a positive number" in o.text, o.text


@pytest.mark.parametrize("value", ["inf", "1e15"])
def test_an_infinite_import_timeout_means_no_deadline(monkeypatch, value):
    """QUADRIGA_IMPORT_TIMEOUT=inf or 1e15: the deadline's timer overflowed, breaking every plugin."""
    from quadriga.registry import MAX_IMPORT_TIMEOUT, _import_deadline, import_timeout

    monkeypatch.setenv("QUADRIGA_IMPORT_TIMEOUT", value)
    assert import_timeout() == MAX_IMPORT_TIMEOUT
    with _import_deadline("p", import_timeout()):  # the timer accepts it
        pass


def test_ctrl_c_during_a_hanging_plugin_import_names_the_plugin(cli, extra_site, monkeypatch):
    """A plugin stuck at import (here: interrupted at once) is named, with the way to disable it.

    The Ctrl-C comes during the in-process import of a plugin the probe child found clean (one in
    the import record, whose import now hangs); a KeyboardInterrupt the module raises in the probe
    child is its own failure (``test_isolation``).
    """
    import quadriga.registry.probe

    monkeypatch.setattr(quadriga.registry.probe, "probe", lambda todo, seconds: {})
    extra_site("quadriga-hangs", {"hangs": "hangs_mod"}, {"hangs_mod": "raise KeyboardInterrupt\n"})
    o = cli("list")
    assert o.rc == 130 and "Traceback" not in o.text, o.text
    assert "while importing plugin 'hangs'" in o.err and "--disable hangs" in o.err, o.err
