"""Fixtures for the core tests: throwaway plugin distributions on a temporary sys.path entry."""

from __future__ import annotations

import signal

import pytest
from qtest_helpers import TOY, make_dist

# A test run started with SIGINT ignored (a background job of a non-interactive shell, such as
# `make test &` in a script) hands SIG_IGN to every process it spawns, and Python then keeps it: the
# Ctrl-C tests' children would sleep through their SIGINT. Take SIGINT as a terminal does.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def plugin_path(tmp_path, monkeypatch):
    """A temporary site directory holding the toy plugin's dist-info (its code lives in tests/toy)."""
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "quadriga-toy", {"toy": "quadriga_toy.plugin"})
    monkeypatch.syspath_prepend(str(TOY))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delenv("QUADRIGA_DISABLE", raising=False)
    from quadriga.registry import reset_registry

    reset_registry()
    yield site
    reset_registry()


@pytest.fixture
def registry(plugin_path):
    """A fresh registry that sees the toy plugin (and whatever else is installed)."""
    from quadriga.registry import Registry

    return Registry(use_env=False)
