"""Fixtures of the robustness corpus: the toy plugin and a misbehaving one, the CLI in-process."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE.parent), str(HERE)]  # qtest_helpers, robust_helpers
from qtest_helpers import TOY, make_dist  # noqa: E402
from robust_helpers import Outcome  # noqa: E402

PLUGIN = HERE / "plugin"


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """A site directory with the dist-info of quadriga-toy and quadriga-robust, on sys.path."""
    root = tmp_path_factory.mktemp("site")
    make_dist(root, "quadriga-toy", {"toy": "quadriga_toy.plugin"})
    make_dist(root, "quadriga-robust", {"robust": "quadriga_robust"})
    added = [str(TOY), str(PLUGIN), str(root)]
    sys.path[:0] = added
    from quadriga.registry import reset_registry

    reset_registry()
    yield root
    for p in added:
        sys.path.remove(p)
    reset_registry()


@pytest.fixture
def cli(site, tmp_path, monkeypatch, capsys):
    """``cli(*argv) -> Outcome``: ``quadriga ARGV`` in this process, in ``tmp_path``."""
    from quadriga.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "500")
    monkeypatch.delenv("QUADRIGA_DISABLE", raising=False)
    monkeypatch.setenv("MPLBACKEND", "Agg")

    def call(*argv: str) -> Outcome:
        capsys.readouterr()
        try:
            rc = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse
            rc = exc.code if isinstance(exc.code, int) else 2
        got = capsys.readouterr()
        return Outcome(rc, got.out, got.err)

    return call


@pytest.fixture
def subprocess_env(site):
    """The environment of a ``python -m quadriga`` subprocess that sees both test plugins."""
    env = dict(os.environ)
    env.pop("QUADRIGA_DISABLE", None)
    env["PYTHONPATH"] = os.pathsep.join([str(TOY), str(PLUGIN), str(site), env.get("PYTHONPATH", "")])
    env["COLUMNS"] = "500"
    env["MPLBACKEND"] = "Agg"
    return env
