"""The registry cache: a restored listing equals a fresh discovery, and every change invalidates it.

Install, uninstall, upgrade, an edited entry point and an edited plugin module are simulated with
throwaway dist-info directories and modules on a temporary ``sys.path`` entry; after each change the
cached registry must list exactly what a registry without the cache lists.
"""

from __future__ import annotations

import sys

import pytest
from qtest_helpers import BROKEN, make_dist, run_cli

from quadriga.registry import Registry
from quadriga.registry import cache as registry_cache

PLUGIN = """
import quadriga

@quadriga.hookimpl
def quadriga_register(registry):
    registry.add("sampler", "{name}", "{module}_impl:Thing", summary="{summary}")
"""


@pytest.fixture
def cache(tmp_path, monkeypatch, plugin_path):
    monkeypatch.setenv("QUADRIGA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("QUADRIGA_NO_CACHE", raising=False)
    return plugin_path


def _listing(reg: Registry) -> tuple:
    specs = tuple(sorted((s.kind, s.name, s.target, s.summary, s.distribution) for s in reg.specs()))
    plugins = tuple(sorted((p.plugin, p.distribution, p.version, p.status) for p in reg.plugins.values()))
    return specs, plugins


def _cached() -> Registry:
    return Registry(use_env=False, use_cache=True).load()


def _fresh() -> Registry:
    return Registry(use_env=False).load()


def _plugin(site, dist, module, name, summary="one", version="1.0"):
    for old in site.glob(f"{dist.replace('-', '_')}-*.dist-info"):
        for f in old.iterdir():
            f.unlink()
        old.rmdir()
    make_dist(
        site,
        dist,
        {module: module},
        {module: PLUGIN.format(name=name, module=module, summary=summary)},
        version=version,
    )
    sys.modules.pop(module, None)


def test_second_registry_is_restored_without_importing_plugins(cache):
    first = _cached()
    assert not first._restored and registry_cache.cache_path().is_file()
    sys.modules.pop("quadriga_toy.plugin", None)
    second = _cached()
    assert second._restored and "quadriga_toy.plugin" not in sys.modules
    assert _listing(second) == _listing(first) == _listing(_fresh())
    assert second.get("toy-iid", "sampler").distribution == "quadriga-toy"


def test_install_uninstall_upgrade_and_edits_invalidate(cache):
    site = cache
    _cached()
    # install
    _plugin(site, "quadriga-extra", "qextra_plugin", "extra-sampler")
    reg = _cached()
    assert not reg._restored and ("sampler", "extra-sampler") in reg._table
    assert _listing(reg) == _listing(_fresh())
    assert _cached()._restored
    # editable edit of the plugin module: a new summary and a renamed component
    (site / "qextra_plugin.py").write_text(
        PLUGIN.format(name="extra-sampler-two", module="qextra_plugin", summary="edited summary")
    )
    sys.modules.pop("qextra_plugin", None)
    reg = _cached()
    assert not reg._restored and ("sampler", "extra-sampler-two") in reg._table
    assert ("sampler", "extra-sampler") not in reg._table
    assert _listing(reg) == _listing(_fresh())
    # upgrade: the dist-info directory is renamed with the new version
    _plugin(
        site, "quadriga-extra", "qextra_plugin", "extra-sampler-two", summary="edited summary", version="2.0"
    )
    reg = _cached()
    assert not reg._restored and reg.plugins["qextra_plugin"].version == "2.0"
    # an entry point added to an existing dist-info (the module is new)
    (site / "qextra_more.py").write_text(
        PLUGIN.format(name="more-sampler", module="qextra_more", summary="m")
    )
    ep = next(site.glob("quadriga_extra-2.0.dist-info")) / "entry_points.txt"
    ep.write_text(ep.read_text() + "qextra_more = qextra_more\n")
    reg = _cached()
    assert not reg._restored and ("sampler", "more-sampler") in reg._table
    assert _listing(reg) == _listing(_fresh())
    # uninstall
    for f in ep.parent.iterdir():
        f.unlink()
    ep.parent.rmdir()
    reg = _cached()
    assert not reg._restored
    assert not {("sampler", "extra-sampler-two"), ("sampler", "more-sampler")} & set(reg._table)
    assert _listing(reg) == _listing(_fresh())


def test_broken_plugins_are_never_cached_and_disable_is_part_of_the_key(cache):
    make_dist(cache, "quadriga-broken", {"broken": "qbroken_mod"}, {"qbroken_mod": BROKEN})
    first = _cached()
    assert [b.plugin for b in first.broken] == ["broken"]
    assert not registry_cache.cache_path().exists()
    assert not _cached()._restored  # retried every time
    for f in next(cache.glob("quadriga_broken-*.dist-info")).iterdir():
        f.unlink()
    _cached()
    assert _cached()._restored
    off = Registry(use_env=False, use_cache=True, disable=["toy"]).load()
    assert not off._restored and off.plugins["toy"].status == "disabled"
    assert ("sampler", "toy-iid") not in off._table


def test_hooks_after_a_restore_import_the_plugins(cache):
    _cached()
    reg = _cached()
    assert reg._restored
    assert reg.pm.get_plugin("toy") is not None and not reg._restored
    assert _listing(reg) == _listing(_fresh())


def test_no_cache_flag_and_environment_bypass(cache, monkeypatch):
    _cached()
    monkeypatch.setenv("QUADRIGA_NO_CACHE", "1")
    assert not _cached()._restored
    monkeypatch.delenv("QUADRIGA_NO_CACHE")
    env = {"QUADRIGA_CACHE_DIR": str(registry_cache.cache_path().parent)}
    with_cache = run_cli(["list", "--json"], site=cache, env=env)
    without = run_cli(["--no-cache", "list", "--json"], site=cache, env=env)
    assert with_cache.returncode == without.returncode == 0, without.stderr
    assert with_cache.stdout == without.stdout and "toy-iid" in with_cache.stdout


def test_a_corrupt_cache_file_falls_back_to_discovery(cache):
    _cached()
    registry_cache.cache_path().write_text("{not json")
    reg = _cached()
    assert not reg._restored and _listing(reg) == _listing(_fresh())
    assert _cached()._restored


def test_a_pipeline_file_added_edited_or_removed_invalidates(cache):
    """add_pipelines reads the package's pipelines/*.toml: the cache notices each change to them."""
    site = cache
    package = site / "qpipes_plugin"
    (package / "pipelines").mkdir(parents=True)
    (package / "__init__.py").write_text(
        "import quadriga\n\n@quadriga.hookimpl\ndef quadriga_register(registry):\n"
        "    registry.add_pipelines(__package__)\n"
    )
    (package / "pipelines" / "q-one.toml").write_text('[pipeline]\ndescription = "first"\n')
    make_dist(site, "quadriga-qpipes", {"qpipes": "qpipes_plugin"})
    sys.modules.pop("qpipes_plugin", None)
    assert _cached().get("q-one", "pipeline").summary == "first"
    assert _cached()._restored
    (package / "pipelines" / "q-two.toml").write_text('[pipeline]\ndescription = "second"\n')
    reg = _cached()
    assert not reg._restored and reg.get("q-two", "pipeline").summary == "second"
    (package / "pipelines" / "q-one.toml").write_text('[pipeline]\ndescription = "first, edited"\n')
    reg = _cached()
    assert not reg._restored and reg.get("q-one", "pipeline").summary == "first, edited"
    (package / "pipelines" / "q-two.toml").unlink()
    reg = _cached()
    assert not reg._restored and ("pipeline", "q-two") not in reg._table
    assert _listing(reg) == _listing(_fresh())


def test_a_plugin_toml_edited_invalidates(cache):
    """add_package reads plugin.toml beside the plugin module: the cache notices an edit to it."""
    site = cache
    package = site / "qdecl_plugin"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "import quadriga\n\n@quadriga.hookimpl\ndef quadriga_register(registry):\n"
        "    registry.add_package(__package__)\n"
    )
    (package / "plugin.toml").write_text('[sampler.q-walk]\ntarget = "walk:Walk"\nsummary = "first"\n')
    make_dist(site, "quadriga-qdecl", {"qdecl": "qdecl_plugin"})
    sys.modules.pop("qdecl_plugin", None)
    assert _cached().get("q-walk", "sampler").summary == "first"
    assert _cached()._restored
    (package / "plugin.toml").write_text(
        '[sampler.q-walk]\ntarget = "walk:Walk"\nsummary = "first, edited"\n'
    )
    reg = _cached()
    assert not reg._restored and reg.get("q-walk", "sampler").summary == "first, edited"
