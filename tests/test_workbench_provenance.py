"""manifest.json says which distribution supplied each component and the git state of editable plugins."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from qtest_helpers import make_dist

from quadriga.provenance import distribution_source, environment

GIT = shutil.which("git")


def test_the_manifest_names_the_distribution_of_every_component(registry, tmp_path):
    from quadriga.api import run

    pipeline = {
        "pipeline": {"name": "prov", "seed": 0},
        "task": {"normal": {"use": "toy-normal"}},
        "stage": {
            "wrapped": {
                "use": "toy-wrap",
                "inputs": {"target": "normal"},
                "inner": {"use": "toy-iid", "num_samples": 10},
            },
        },
    }
    result = run(pipeline, out=tmp_path / "r", registry=registry)
    manifest = json.loads((result.dir / "manifest.json").read_text())
    comps = manifest["components"]
    assert comps["task.normal"] == {
        "use": "toy-normal",
        "kind": "target",
        "distribution": "quadriga-toy",
        "version": "1.0",
        "target": "quadriga_toy.components:ToyNormal",
    }
    assert comps["stage.wrapped"]["target"] == "quadriga_toy.components:ToyWrap"
    assert comps["stage.wrapped.inner"]["use"] == "toy-iid"  # a component nested in a parameter
    assert manifest["plugin_sources"]["quadriga-toy"]["editable"] is False  # no direct_url.json
    import importlib.metadata as md

    assert manifest["environment"]["pluggy"] == md.version("pluggy") == environment()["pluggy"]


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_an_editable_plugin_records_its_commit_and_whether_it_is_dirty(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    plugin = repo / "plugins" / "quadriga-gitty"
    plugin.mkdir(parents=True)
    (plugin / "code.py").write_text("x = 1\n")
    (repo / "other.txt").write_text("elsewhere\n")

    def git(*args):
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
        ).stdout

    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    head = git("rev-parse", "HEAD").strip()
    site = tmp_path / "site"
    make_dist(site, "quadriga-gitty", {})
    info = next(site.glob("quadriga_gitty-*.dist-info"))
    (info / "direct_url.json").write_text(
        json.dumps({"url": plugin.as_uri(), "dir_info": {"editable": True}})
    )
    monkeypatch.syspath_prepend(str(site))
    clean = distribution_source("quadriga-gitty")
    assert clean == {"editable": True, "path": str(plugin), "commit": head, "dirty": False}
    (repo / "other.txt").write_text("changed outside the plugin\n")
    assert distribution_source("quadriga-gitty")["dirty"] is False
    (plugin / "code.py").write_text("x = 2\n")
    assert distribution_source("quadriga-gitty")["dirty"] is True
    assert distribution_source("no-such-distribution") == {
        "editable": False,
        "path": None,
        "commit": None,
        "dirty": None,
    }


def test_environment_follows_installs(tmp_path, monkeypatch):
    """Kept while nothing is installed or removed; a new or upgraded distribution shows at once."""
    from qtest_helpers import make_dist

    first = environment()
    assert first == environment() and first is not environment()  # a copy each time
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    make_dist(site, "qtest-env-probe", {}, version="1.0")
    assert environment()["qtest-env-probe"] == "1.0"
    import shutil

    shutil.rmtree(site / "qtest_env_probe-1.0.dist-info")
    make_dist(site, "qtest-env-probe", {}, version="2.0")
    assert environment()["qtest-env-probe"] == "2.0"
    shutil.rmtree(site / "qtest_env_probe-2.0.dist-info")
    assert "qtest-env-probe" not in environment()


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_one_git_status_gives_the_commit_and_every_kind_of_change(tmp_path):
    """Modified, staged, renamed, untracked and space-holding paths all count; no commit is None."""
    from quadriga.provenance import _git, _toplevel

    def git(*args):
        subprocess.run([GIT, "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "a.py").write_text("a\n")
    (tmp_path / "sub dir").mkdir()
    (tmp_path / "sub dir" / "b c.py").write_text("b\n")
    assert _git(str(tmp_path)) == (str(tmp_path), None, frozenset({"a.py", "sub dir/"}))
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    head = subprocess.run(
        [GIT, "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert _git(str(tmp_path)) == (str(tmp_path), head, frozenset())
    (tmp_path / "a.py").write_text("changed\n")
    git("mv", "sub dir/b c.py", "sub dir/d e.py")
    (tmp_path / "new.py").write_text("n\n")
    assert _git(str(tmp_path)) == (str(tmp_path), head, frozenset({"a.py", "sub dir/d e.py", "new.py"}))
    assert _toplevel(str(tmp_path / "sub dir")) == str(tmp_path.resolve())
    assert _toplevel("/") is None


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_git_status_runs_with_the_environment_as_it_is_now(tmp_path, monkeypatch):
    """git gets os.environ as changed since start-up (it is passed as os.environ's own mapping)."""
    from quadriga.provenance import _git

    subprocess.run([GIT, "-C", str(tmp_path), "init", "-q"], check=True, capture_output=True)
    (tmp_path / "a.py").write_text("a\n")
    assert _git(str(tmp_path)) == (str(tmp_path), None, frozenset({"a.py"}))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "no-such-repository"))
    assert _git(str(tmp_path)) == (None, None, frozenset())  # git fails there: no work tree known
    monkeypatch.delenv("GIT_DIR")
    assert _git(str(tmp_path))[2] == frozenset({"a.py"})


def test_the_manifest_records_the_thread_counts(registry, tmp_path):
    """Reductions can differ in their last digits between thread counts: the manifest says which."""
    import torch

    from quadriga.api import run
    from quadriga.threads import num_threads

    pipeline = {
        "pipeline": {"name": "threads", "seed": 0},
        "task": {"normal": {"use": "toy-normal"}},
        "stage": {"draw": {"use": "toy-iid", "inputs": {"target": "normal"}, "num_samples": 10}},
    }
    with num_threads(1):
        result = run(pipeline, out=tmp_path / "r", registry=registry)
    threads = json.loads((result.dir / "manifest.json").read_text())["threads"]
    assert threads["torch_intra_op"] == 1
    assert threads["torch_inter_op"] == torch.get_num_interop_threads()


def _fake_git(folder, body):
    folder.mkdir()
    script = folder / "git"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(0o755)
    return str(script)


def test_a_git_that_fails_hangs_or_is_missing_gives_no_commit(tmp_path, monkeypatch):
    """A git that exits 1, outlives GIT_SECONDS (killed) or is missing gives (None, None, {})."""
    import quadriga.provenance as provenance

    none = (None, None, frozenset())
    ok = "echo '# branch.oid 0123abcd'; echo '? new.py'"
    gits = {
        "ok": _fake_git(tmp_path / "ok", ok),
        "fails": _fake_git(tmp_path / "fails", f"{ok}; exit 1"),
        "hangs": _fake_git(tmp_path / "hangs", f"{ok}; exec sleep 30"),
        "hangs after its output": _fake_git(tmp_path / "closes", f"{ok}; exec >&-; exec sleep 30"),
        "missing": str(tmp_path / "no-such-git"),
    }
    monkeypatch.setattr(provenance, "GIT_SECONDS", 0.5)
    found = {}
    for name, git in gits.items():
        monkeypatch.setattr(provenance, "_git_executable", lambda git=git: git)
        found[name] = provenance._git("/somewhere")
    assert found == {
        "ok": ("/somewhere", "0123abcd", frozenset({"new.py"})),
        "fails": none,
        "hangs": none,
        "hangs after its output": none,
        "missing": none,
    }
    monkeypatch.setattr(provenance, "_git_executable", lambda: None)
    assert provenance._git("/somewhere") == none
