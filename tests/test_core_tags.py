"""Capability tags: declared at registration, checked against quadriga.tags, kept by the registry cache,
filtered by ``quadriga list --where``, shown by ``quadriga info`` and ``list --json``."""

from __future__ import annotations

import importlib.metadata as md
import json
import re
import sys

import pytest
from qtest_helpers import make_dist, run_cli

from quadriga.registry import Registry
from quadriga.tags import TAGS, check_tags

TAGGED = """
import quadriga

@quadriga.hookimpl
def quadriga_register(registry):
    registry.add("sampler", "tagged-one", "quadriga_toy.components:ToyIID", summary="one", tags={tags_one})
    registry.add("sampler", "tagged-two", "quadriga_toy.components:ToyWrap", summary="two", tags=("mcmc",))
    registry.add("evaluator", "untagged", "quadriga_toy.components:ToyMeanError", summary="three")
"""


def _tagged(site, module="qtagged_plugin", tags_one='("needs-score", "mcmc", "mcmc")'):
    make_dist(
        site, "quadriga-tagged", {module: module}, {module: TAGGED.format(module=module, tags_one=tags_one)}
    )
    sys.modules.pop(module, None)


def test_tags_are_checked_sorted_and_deduplicated():
    assert check_tags(["needs-score", "mcmc", "mcmc"], "here") == ("mcmc", "needs-score")
    assert check_tags((), "here") == ()
    with pytest.raises(Exception, match=r"here: unknown tag 'needs-scor'\. Did you mean 'needs-score'"):
        check_tags(["needs-scor"], "here")
    with pytest.raises(Exception, match="not a string"):
        check_tags("mcmc", "here")  # a bare string would register its letters


def test_every_tag_has_a_one_line_meaning():
    for tag, meaning in TAGS.items():
        assert tag == tag.lower() and " " not in tag, tag
        assert meaning and "\n" not in meaning and len(meaning) <= 52, tag  # one line of --tags at 80


def test_registered_tags_reach_the_spec(plugin_path):
    _tagged(plugin_path)
    reg = Registry(use_env=False)
    assert reg.get("tagged-one").tags == ("mcmc", "needs-score")
    assert reg.get("tagged-two").tags == ("mcmc",)
    assert reg.get("untagged").tags == ()


def test_an_unknown_tag_breaks_only_its_plugin_with_the_tag_and_a_suggestion(plugin_path):
    _tagged(plugin_path, tags_one='("produce-weights",)')
    reg = Registry(use_env=False)
    (broken,) = reg.broken
    assert broken.plugin == "qtagged_plugin" and broken.stage == "register"
    assert "plugin 'qtagged_plugin' (quadriga-tagged), sampler 'tagged-one'" in broken.error
    assert "unknown tag 'produce-weights'" in broken.error and "'produces-weights'" in broken.error
    assert "tagged-two" not in {s.name for s in reg.specs()}  # nothing of that plugin is half-registered
    assert reg.get("toy-iid").distribution == "quadriga-toy"  # the others keep working


def test_a_cached_listing_keeps_the_tags(plugin_path, tmp_path, monkeypatch):
    monkeypatch.setenv("QUADRIGA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("QUADRIGA_NO_CACHE", raising=False)
    _tagged(plugin_path)
    fresh = Registry(use_env=False).load()
    first = Registry(use_env=False, use_cache=True).load()
    second = Registry(use_env=False, use_cache=True).load()
    assert not first._restored and second._restored

    def tags(reg):
        return sorted((s.kind, s.name, s.tags) for s in reg.specs())

    assert tags(second) == tags(first) == tags(fresh)
    assert ("sampler", "tagged-one", ("mcmc", "needs-score")) in tags(second)
    env = {"QUADRIGA_CACHE_DIR": str(tmp_path / "cache")}
    cached = run_cli(["list", "--json", "--where", "mcmc"], site=plugin_path, env=env)
    uncached = run_cli(["--no-cache", "list", "--json", "--where", "mcmc"], site=plugin_path, env=env)
    assert cached.returncode == uncached.returncode == 0, uncached.stderr
    assert cached.stdout == uncached.stdout
    got = {c["name"]: c["tags"] for c in json.loads(cached.stdout)["components"]}
    assert got["tagged-one"] == ["mcmc", "needs-score"] and got["tagged-two"] == ["mcmc"]
    assert "untagged" not in got


@pytest.fixture
def cli(plugin_path, capsys, monkeypatch):
    """``cli(*argv) -> (rc, out, err)`` in this process, at the default width of 80 columns."""
    from quadriga.cli import main

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setenv("QUADRIGA_NO_CACHE", "1")
    _tagged(plugin_path)

    def call(*argv):
        capsys.readouterr()
        rc = main(list(argv))
        out, err = capsys.readouterr()
        return rc, out, err

    return call


def _fit(text, width=80):
    long = [line for line in text.splitlines() if len(line.rstrip()) > width]
    assert not long, long[:3]


def test_where_keeps_components_with_every_tag(cli):
    rc, out, err = cli("list", "--json", "--where", "mcmc")
    assert rc == 0, err
    data = json.loads(out)
    names = {c["name"] for c in data["components"]}
    assert {"tagged-one", "tagged-two"} <= names and "untagged" not in names
    assert all("mcmc" in c["tags"] for c in data["components"])
    assert data["pipelines"] == data["claims"] == []  # they have no tags
    for argv in (("--where", "mcmc", "--where", "needs-score"), ("--where", "mcmc,needs-score")):
        rc, out, _ = cli("list", "--json", *argv)
        comps = json.loads(out)["components"]
        assert "tagged-one" in {c["name"] for c in comps} and "tagged-two" not in {c["name"] for c in comps}
        assert all({"mcmc", "needs-score"} <= set(c["tags"]) for c in comps)


def test_where_table_fits_80_columns_and_names_the_filter(cli):
    rc, out, err = cli("list", "--where", "mcmc,needs-score")
    assert rc == 0, err
    assert "tagged-one" in out and "tagged-two" not in out and "untagged" not in out
    assert "every tag of mcmc, needs-score" in " ".join(out.split())
    _fit(out)
    rc, out, _ = cli("list", "--where", "mcmc", "--kind", "environment")
    assert rc == 0 and "no installed component of kind 'environment' has all of the tags mcmc" in " ".join(
        out.split()
    )


def test_an_unknown_where_tag_is_a_config_error_naming_the_option(cli):
    rc, out, err = cli("list", "--where", "mcmc,needs-scor")
    text = " ".join(err.split())
    assert rc == 2 and out == ""
    assert "option --where" in text and "unknown tag 'needs-scor'" in text
    assert "Did you mean 'needs-score'" in text and "docs/cli.md" in text and "quadriga list --tags" in text


def test_tags_lists_the_vocabulary_with_counts(cli):
    rc, out, err = cli("list", "--tags", "--json")
    assert rc == 0, err
    rows = {r["tag"]: r for r in json.loads(out)}
    assert set(rows) == set(TAGS) and rows["needs-score"]["meaning"] == TAGS["needs-score"]
    assert rows["mcmc"]["components"] >= 2  # the two toy ones, at least
    rc, out, _ = cli("list", "--tags")
    assert rc == 0 and "needs-score" in out
    _fit(out)


def test_info_shows_the_tags(cli):
    rc, out, err = cli("info", "tagged-one", "--json")
    assert rc == 0, err
    assert json.loads(out)[0]["tags"] == ["mcmc", "needs-score"]


def _installed(dist):
    return any(e.dist is not None and e.dist.name == dist for e in md.entry_points(group="quadriga"))


@pytest.mark.skipif(not _installed("quadriga-std"), reason="quadriga-std is not installed")
def test_shipped_components_declare_known_tags(cli):
    rc, out, _ = cli("list", "--json")
    comps = json.loads(out)["components"]
    from quadriga.catalogue import catalogue

    shipped = [c for c in comps if c["distribution"] in catalogue()]
    untagged = [c["name"] for c in shipped if not c["tags"]]
    assert not untagged, untagged
    rc, out, _ = cli("list", "--json", "--where", "needs-score")
    assert {"mala", "hmc", "ula"} <= {c["name"] for c in json.loads(out)["components"]}
    rc, out, _ = cli("info", "rwm")
    assert rc == 0 and "tags: gradient-free, mcmc, needs-log-prob" in out


def test_the_cli_page_documents_every_tag_with_its_meaning():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    documented = dict(
        re.findall(r"^\| `([a-z-]+)` \| (.+) \|$", text[text.index("### Capability tags") :], re.M)
    )
    assert documented == TAGS


def test_where_naming_no_tag_is_refused_and_tags_match_case_insensitively(cli):
    for empty in ("", ",,,"):
        rc, out, err = cli("list", "--where", empty)
        assert rc == 2 and out == ""
        assert "option --where" in err and "names no tag" in " ".join(err.split())
    rc, out, err = cli("list", "--json", "--where", "MCMC")
    assert rc == 0, err
    _, lower, _ = cli("list", "--json", "--where", "mcmc")
    assert json.loads(out) == json.loads(lower) and json.loads(out)["components"]


def test_tags_counts_the_given_kind_and_refuses_where(cli):
    rc, out, err = cli("list", "--tags", "--where", "mcmc")
    assert rc == 2 and out == "" and "option --where" in err and "--tags" in err
    _, everything, _ = cli("list", "--tags", "--json")
    rc, out, err = cli("list", "--tags", "--json", "--kind", "environment")
    assert rc == 0, err
    envs = {r["tag"]: r["components"] for r in json.loads(out)}
    assert envs["mcmc"] == 0 < {r["tag"]: r["components"] for r in json.loads(everything)}["mcmc"]
    _, samplers, _ = cli("list", "--tags", "--json", "--kind", "sampler")
    assert {r["tag"]: r["components"] for r in json.loads(samplers)}["mcmc"] >= 2  # the toy ones


def test_list_at_40_columns_wraps_the_tag_meanings_and_footers_without_trailing_spaces(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    rc, out, err = cli("list", "--tags")
    assert rc == 0, err
    lines = out.splitlines()
    assert not [ln for ln in lines if len(ln) > 40 or ln != ln.rstrip()], out
    first = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("needs-score"))
    column = lines[first].index(lines[first].split()[2])  # where the meaning starts
    meaning = []
    for ln in lines[first:]:
        if meaning and ln[:column].strip():
            break
        meaning.append(ln[column:])
    assert " ".join(" ".join(meaning).split()) == " ".join(TAGS["needs-score"].split())  # nothing cut
    for argv in (("list",), ("list", "--where", "mcmc")):
        rc, out, err = cli(*argv)
        assert rc == 0, err
        tail = out[out.rindex("\n\n") :].splitlines()  # the footer under the last table
        assert tail and not [ln for ln in tail if len(ln) > 40 or ln != ln.rstrip()], tail
