"""The third-party author's path: render the template, pip-install it, list, run, check, test.

The end-to-end test installs the rendered distribution (editable, no dependencies) into the
interpreter running the tests and always uninstalls it again, even when a step fails.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from quadriga.errors import ConfigError
from quadriga.scaffold import PLUGIN_KINDS, render_plugin, template_dir

ROOT = Path(__file__).resolve().parents[1]


def _run(
    args: list[str],
    cwd: Path,
    timeout: float = 120,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    full = {**os.environ, "COLUMNS": "200", "MPLBACKEND": "Agg", **(env or {})}
    full.pop("QUADRIGA_DISABLE", None)
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=full)


def _pip(*args: str) -> subprocess.CompletedProcess:
    return _run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args], cwd=ROOT, timeout=180)


@pytest.mark.parametrize("kind", PLUGIN_KINDS)
def test_template_renders_valid_python_and_toml(tmp_path, kind):
    """Every kind renders a complete distribution whose Python parses and whose TOML loads."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    path = render_plugin(f"kit-{kind}", kind=kind, dest=tmp_path, paper="Doe 2026, Algorithm 1")
    files = sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file())
    package = f"quadriga_kit_{kind}"
    assert files == sorted(
        [
            "README.md",
            "pyproject.toml",
            f"src/{package}/__init__.py",
            f"src/{package}/plugin.py",
            f"src/{package}/{kind}.py",
            f"src/{package}/claims.py",
            f"src/{package}/pipelines/kit-{kind}-demo.toml",
            f"tests/test_kit_{kind}_{kind}.py",
        ]
    )
    for py in path.rglob("*.py"):
        ast.parse(py.read_text(), filename=str(py))
    meta = tomllib.loads((path / "pyproject.toml").read_text())
    assert meta["project"]["name"] == f"quadriga-kit-{kind}"
    assert meta["project"]["entry-points"]["quadriga"] == {f"kit_{kind}": f"{package}.plugin"}
    pipeline = tomllib.loads((path / f"src/{package}/pipelines/kit-{kind}-demo.toml").read_text())
    assert pipeline["stage"][f"kit-{kind}"]["use"] == f"kit-{kind}"
    source = (path / f"src/{package}/{kind}.py").read_text()
    for section in ("Shapes:", "Units:", "Raises:", "Source:", "Doe 2026, Algorithm 1"):
        assert section in source
    assert "{{" not in source and "{%" not in source


def test_bad_names_and_existing_destination_are_config_errors(tmp_path):
    """Malformed names, unknown kinds and a non-empty destination are refused before anything is written."""
    for name in ("My_Sampler", "1abc", "a--b", "quadriga-x"):
        with pytest.raises(ConfigError):
            render_plugin(name, dest=tmp_path)
    with pytest.raises(ConfigError, match="unknown kind"):
        render_plugin("fine", kind="optimizer", dest=tmp_path)
    (tmp_path / "quadriga-taken").mkdir()
    (tmp_path / "quadriga-taken" / "file").write_text("x")
    with pytest.raises(ConfigError, match="not empty"):
        render_plugin("taken", dest=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["quadriga-taken"]


def test_template_ships_in_the_wheel(tmp_path):
    """A (non-editable) wheel of quadriga contains every template file, and renders from an install of it."""
    built = _pip("wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path / "wheel"), str(ROOT))
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "wheel").glob("quadriga-*.whl")
    with template_dir() as src:
        expected = {
            f"quadriga/templates/plugin/{p.relative_to(src).as_posix()}"
            for p in src.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }
    with zipfile.ZipFile(wheel) as zf:
        assert expected <= set(zf.namelist())
        zf.extractall(tmp_path / "site")
    code = (
        "import quadriga, quadriga.scaffold as s; print(quadriga.__file__); "
        f"print(s.render_plugin('from-wheel', dest={str(tmp_path / 'out')!r}))"
    )
    out = _run([sys.executable, "-c", code], cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "site")})
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith(str(tmp_path / "site"))
    assert (tmp_path / "out" / "quadriga-from-wheel" / "src" / "quadriga_from_wheel" / "sampler.py").is_file()


def test_new_plugin_end_to_end(tmp_path):
    """`quadriga new plugin`, pip install, `quadriga list`, `quadriga run`, and the generated tests
    (which call check_component) all work; the distribution is uninstalled afterwards."""
    name = f"kit-e2e-{os.getpid()}"
    dist, package = f"quadriga-{name}", f"quadriga_{name.replace('-', '_')}"
    cli = [sys.executable, "-m", "quadriga"]
    made = _run(
        [
            *cli,
            "new",
            "plugin",
            name,
            "--kind",
            "sampler",
            "--dest",
            str(tmp_path),
            "--description",
            "an end-to-end test sampler",
        ],
        cwd=tmp_path,
    )
    assert made.returncode == 0, made.stderr
    path = tmp_path / dist
    try:
        installed = _pip("install", "--no-deps", "--no-build-isolation", "-q", "-e", str(path))
        assert installed.returncode == 0, installed.stderr
        listed = _run([*cli, "list", "--kind", "sampler"], cwd=tmp_path)
        assert listed.returncode == 0, listed.stderr
        assert name in listed.stdout and "an end-to-end test sampler" in listed.stdout
        ran = _run(
            [
                *cli,
                "run",
                f"{name}-demo",
                "--out",
                str(tmp_path / "run"),
                "--set",
                f"stage.{name}.num_samples=200",
            ],
            cwd=tmp_path,
        )
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert (tmp_path / "run" / "results.json").is_file()
        tested = _run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--import-mode=importlib",
                str(path / "tests"),
            ],
            cwd=path,
            timeout=180,
        )
        assert tested.returncode == 0, tested.stdout[-3000:] + tested.stderr[-2000:]
        assert "10 passed" in tested.stdout  # 7 conformance checks, the known answer, pipeline, claim
        assert "quadriga conformance: 7 run / 0 skipped / 0 failed" in tested.stdout
    finally:
        _pip("uninstall", "-y", "-q", dist)
    gone = _run(
        [sys.executable, "-c", f"import importlib.util as u; print(u.find_spec({package!r}))"], cwd=tmp_path
    )
    assert gone.stdout.strip() == "None"
