"""The catalogue of the repository's plugins: it matches plugins/ and what each registers, ``quadriga list
--all`` shows the uninstalled ones with their install command, and an unknown name they provide says so."""

from __future__ import annotations

import importlib.metadata as md
import json
from pathlib import Path

import pytest

from quadriga.catalogue import catalogue, not_installed, providers, unknown_name_note
from quadriga.registry import SPEC_KINDS, PluginStatus, Registry

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ROOT / "plugins"


def _installed() -> set[str]:
    return {e.dist.name for e in md.entry_points(group="quadriga") if e.dist is not None}


def test_the_catalogue_lists_exactly_the_distributions_under_plugins():
    on_disk = sorted(p.name for p in PLUGINS.iterdir() if (p / "pyproject.toml").is_file())
    assert sorted(catalogue()) == on_disk
    for dist, entry in catalogue().items():
        assert entry.install == f"pip install -c constraints.txt -e plugins/{dist}"
        assert 0 < len(entry.summary) <= 42, dist  # fits the --all table at 80 columns
        assert set(entry.names) <= set(SPEC_KINDS)


@pytest.mark.parametrize(
    "dist", sorted(p.name for p in PLUGINS.iterdir() if (p / "pyproject.toml").is_file())
)
def test_the_catalogue_lists_the_names_each_installed_distribution_registers(dist):
    if dist not in _installed():
        pytest.skip(f"{dist} is not installed here")
    reg = Registry(use_env=False)
    registered: dict[str, list[str]] = {}
    for spec in reg.specs():
        if spec.distribution == dist:
            registered.setdefault(spec.kind, []).append(spec.name)
    for (kind, name), specs in reg.conflicts.items():
        registered.setdefault(kind, []).extend(name for s in specs if s.distribution == dist)
    expected = {k: sorted(v) for k, v in catalogue()[dist].names.items()}
    assert {k: sorted(v) for k, v in registered.items()} == expected, (
        f"framework/quadriga/catalogue.toml is out of date for {dist}"
    )


def _status(dist: str, state: str = "ok") -> PluginStatus:
    return PluginStatus(dist.removeprefix("quadriga-"), dist, status=state)  # type: ignore[arg-type]


def test_the_note_names_the_provider_and_its_state():
    note = unknown_name_note("ddpm", ("sampler",), {})
    assert note == (
        " 'ddpm' is a sampler of quadriga-ddpm, which is not installed; install it from a clone of the "
        "repository: pip install -c constraints.txt -e plugins/quadriga-ddpm"
    )
    assert "an evaluator of quadriga-ddpm" in unknown_name_note("mixture-diagnostics", None, {})
    assert unknown_name_note("ddpm", ("target",), {}) == ""  # not among the kinds looked up
    assert unknown_name_note("no-such-thing", None, {}) == ""
    assert unknown_name_note("ddpm", None, {"ddpm": _status("quadriga-ddpm")}) == ""
    disabled = {"ddpm": _status("quadriga-ddpm", "disabled")}
    assert "which is disabled (--disable" in unknown_name_note("ddpm", None, disabled)
    broken = {"ddpm": _status("quadriga-ddpm", "broken")}
    assert "failed to load" in unknown_name_note("ddpm", None, broken)
    assert [e.distribution for e, kind in providers("gmm-mcmc-baselines")] == ["quadriga-std"]
    absent = not_installed({"std": _status("quadriga-std")})
    assert "quadriga-std" not in {e.distribution for e in absent} and len(absent) == len(catalogue()) - 1


@pytest.fixture
def without(monkeypatch, capsys):
    """``without(dists, *argv) -> (rc, out, err)``: the CLI as if ``dists`` were not installed."""
    from quadriga.cli import main
    from quadriga.registry import reset_registry

    real = md.entry_points
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("QUADRIGA_DISABLE", raising=False)
    monkeypatch.setenv("QUADRIGA_NO_CACHE", "1")

    def call(dists, *argv):
        monkeypatch.setattr(
            md,
            "entry_points",
            lambda **kw: [e for e in real(**kw) if e.dist is None or e.dist.name not in dists],
        )
        reset_registry()
        capsys.readouterr()
        rc = main(list(argv))
        out, err = capsys.readouterr()
        return rc, out, err

    yield call
    reset_registry()


def _fit(text, width=80):
    long = [line for line in text.splitlines() if len(line.rstrip()) > width]
    assert not long, long[:3]


def test_list_all_shows_what_is_not_installed_with_the_install_command(without):
    gone = {"quadriga-ddpm", "quadriga-stochastic-interpolants"}
    rc, out, err = without(gone, "list", "--all")
    assert rc == 0, err
    _fit(out)
    section = out[out.index("not installed") :]
    for dist in gone:
        assert dist in section and f"  pip install -c constraints.txt -e plugins/{dist}\n" in section
    assert "quadriga-std " not in section  # installed ones are not repeated
    assert "from a clone of the repository" in section
    rc, out, _ = without(gone, "list", "--all", "--json")
    absent = {e["distribution"]: e for e in json.loads(out)["not_installed"]}
    assert gone <= set(absent) and "quadriga-std" not in absent
    ddpm_samplers = ["ddim", "ddpm", "dpm-solver-pp", "edm-heun", "reference-ode"]
    assert absent["quadriga-ddpm"]["provides"]["sampler"] == ddpm_samplers
    assert absent["quadriga-ddpm"]["install"] == "pip install -c constraints.txt -e plugins/quadriga-ddpm"
    rc, out, _ = without(gone, "list", "--all", "--kind", "learner", "--full")
    _fit(out)
    section = " ".join(out[out.index("not installed") :].split())
    assert "quadriga-stochastic-interpolants" in section and "quadriga-ddpm" in section  # both have learners
    assert "learner flow-matching, stochastic-interpolant" in section and "learner score-network" in section


def test_list_all_says_when_everything_is_installed(without):
    rc, out, err = without(set(), "list", "--all", "--kind", "claim")
    assert rc == 0, err
    if set(catalogue()) <= _installed():
        assert "Every plugin of the repository's catalogue is installed." in out


def test_a_pipeline_naming_an_uninstalled_component_gets_the_install_command(without, tmp_path):
    pipeline = tmp_path / "p.toml"
    pipeline.write_text(
        '[pipeline]\nname = "p"\nseed = 1\n\n[task.t]\nuse = "sphere-mixture"\n\n'
        '[stage.s]\nuse = "ddim"\ninputs = { target = "t" }\n'
    )
    rc, _, err = without({"quadriga-ddpm"}, "run", str(pipeline), "--check")
    text = " ".join(err.split())
    assert rc == 2
    assert "unknown target/dataset/environment 'sphere-mixture'" in text
    assert "'sphere-mixture' is a target of quadriga-ddpm, which is not installed" in text
    assert "pip install -c constraints.txt -e plugins/quadriga-ddpm" in text
    rc, _, err = without({"quadriga-ddpm"}, "run", "ddpm-gmm-dimension-free", "--check")
    assert rc == 2 and "'ddpm-gmm-dimension-free' is a pipeline of quadriga-ddpm" in " ".join(err.split())
    rc, _, err = without({"quadriga-ddpm"}, "info", "ddim")
    text = " ".join(err.split())
    assert rc == 2 and "'ddim' is a sampler of quadriga-ddpm, which is not installed" in text


def test_a_disabled_provider_is_named(without):
    if "quadriga-ddpm" not in _installed():
        pytest.skip("quadriga-ddpm is not installed here")
    rc, _, err = without(set(), "--disable", "quadriga-ddpm", "info", "ddim")
    assert rc == 2 and "'ddim' is a sampler of quadriga-ddpm, which is disabled" in " ".join(err.split())


def test_verify_of_an_uninstalled_claim_or_distribution_gets_the_install_command(without):
    claim = catalogue()["quadriga-ddpm"].names["claim"][0]
    rc, _, err = without({"quadriga-ddpm"}, "verify", claim)
    text = " ".join(err.split())
    assert rc == 2, text
    assert f"'{claim}' is a claim of quadriga-ddpm, which is not installed" in text
    assert "pip install -c constraints.txt -e plugins/quadriga-ddpm" in text
    rc, _, err = without({"quadriga-ddpm"}, "verify", "quadriga-ddpm")
    text = " ".join(err.split())
    assert rc == 2, text
    assert "quadriga-ddpm is not installed; install it from a clone of the repository" in text


def test_list_all_names_a_disabled_distribution(without):
    if "quadriga-ddpm" not in _installed():
        pytest.skip("quadriga-ddpm is not installed here")
    rc, out, err = without(set(), "--disable", "quadriga-ddpm", "list", "--all")
    assert rc == 0, err
    _fit(out)
    assert "installed, disabled (--disable or QUADRIGA_DISABLE): quadriga-ddpm" in out
    assert "Every plugin" not in out
    rc, out, _ = without(set(), "--disable", "quadriga-ddpm", "list", "--all", "--json")
    assert json.loads(out)["disabled"] == ["quadriga-ddpm"]
