"""Helpers for the core tests: throwaway plugin distributions and a CLI runner."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
TOY = HERE / "toy"


def make_dist(
    root: Path,
    name: str,
    entry_points: dict[str, str],
    modules: dict[str, str] | None = None,
    version: str = "1.0",
) -> None:
    """Create ``<name>-<version>.dist-info`` with ``[quadriga]`` entry points (and modules) under ``root``."""
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = "".join(f"{k} = {v}\n" for k, v in entry_points.items())
    (info / "entry_points.txt").write_text(f"[quadriga]\n{lines}")
    for module, source in (modules or {}).items():
        (root / f"{module}.py").write_text(source)


BROKEN = "raise ImportError('this plugin needs a package that is not installed')\n"
COLLIDE = """
import quadriga

@quadriga.hookimpl
def quadriga_register(registry):
    registry.add("sampler", "toy-iid", "quadriga_toy.components:ToyIID", summary="a second toy-iid")
"""
FAILS_TO_REGISTER = """
import quadriga

@quadriga.hookimpl
def quadriga_register(registry):
    registry.add("sampler", "half-registered", "x.y:Z")
    raise RuntimeError("registration blew up")
"""


def run_cli(
    args: list[str],
    site: Path | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess:
    """Run ``python -m quadriga ARGS`` in a subprocess with the toy plugin on its path."""
    full_env = dict(os.environ)
    full_env.pop("QUADRIGA_DISABLE", None)
    paths = [str(TOY)] + ([str(site)] if site else [])
    full_env["PYTHONPATH"] = os.pathsep.join([*paths, full_env.get("PYTHONPATH", "")])
    full_env["COLUMNS"] = "200"
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "quadriga", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        timeout=timeout,
    )
