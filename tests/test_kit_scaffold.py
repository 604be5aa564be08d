"""The third-party author's path: render the template, install it outside this repository, test, update.

The out-of-repository tests build a fresh virtual environment in a temporary folder (outside the
checkout), install quadriga and quadriga-std into it from this checkout's path (editable, as
``quadriga new plugin`` prints it: pip then builds in a temporary folder and leaves no ``build/``
in the checkout), then the rendered plugins (editable), and run each
plugin's own tests and ``quadriga list`` there with the temporary folder as working directory.
The new environment's third-party dependencies (torch, numpy, ...) are the running environment's,
seen through a folder of links that leaves out every quadriga distribution, so nothing of this
repository is importable there except what pip installed; pip runs offline (``--no-index``,
``--no-build-isolation``) and checks that every requirement, ``quadriga>=0.1`` included, is met.
The interpreter running the tests is never modified.
"""

from __future__ import annotations

import ast
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from quadriga.errors import ConfigError
from quadriga.scaffold import (
    PLUGIN_KINDS,
    install_commands,
    origin_of,
    render_plugin,
    template_dir,
    update_plugin,
    versioned_template,
)
from quadriga.testing import CHECKS

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
#: tests each rendered kind's test file holds besides its 9 conformance checks: known answers, pipeline, claim
OWN_TESTS = {
    "sampler": 3,
    "learner": 3,
    "estimator": 3,
    "evaluator": 3,
    "target": 4,
    "dataset": 4,
    "environment": 5,
}
#: conformance checks that do not apply to tasks: output and determinism (checked by "run") and
#: stateless (tasks prepare and cache their data)
TASK_SKIPS = 3


@pytest.fixture(autouse=True, scope="module")
def _template_home(tmp_path_factory):
    """Keep the versioned template copy out of the user's data folder (module fixtures included)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("QUADRIGA_TEMPLATE_HOME", str(tmp_path_factory.mktemp("template-home")))
        mp.setenv("QUADRIGA_NO_CACHE", "1")  # the name checks discover the plugins afresh (0.2 s)
        yield


def _run(
    args: list[str], cwd: Path, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    full = {**os.environ, "MPLBACKEND": "Agg", **(env or {})}
    full.pop("QUADRIGA_DISABLE", None)
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=full)


def _pip(*args: str) -> subprocess.CompletedProcess:
    return _run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args], cwd=ROOT, timeout=180)


# ------------------------------------------------------------------ rendering
@pytest.mark.parametrize("kind", PLUGIN_KINDS)
def test_template_renders_valid_python_and_toml(tmp_path, kind):
    """Every kind renders a complete distribution whose Python parses and passes this repository's
    ruff rules, whose TOML loads, and whose .copier-answers.yml names the versioned template and
    the answers."""
    import yaml

    path = render_plugin(
        f"kit-{kind}", kind=kind, dest=tmp_path, paper="Doe 2026, Algorithm 1", git_init=False
    )
    files = sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file())
    package = f"quadriga_kit_{kind}"
    assert files == sorted(
        [
            ".copier-answers.yml",
            ".gitignore",
            "README.md",
            "pyproject.toml",
            f"src/{package}/__init__.py",
            f"src/{package}/plugin.py",
            f"src/{package}/plugin.toml",
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
    assert "quadriga>=0.1" in meta["project"]["dependencies"]
    declared = tomllib.loads((path / f"src/{package}/plugin.toml").read_text())
    assert declared[kind][f"kit-{kind}"]["target"] == f"{kind}:Kit{kind.title()}"
    assert declared["plugin"]["paper"] == "Doe 2026, Algorithm 1"
    assert declared["claim"][f"kit-{kind}-demo-claim"]["target"] == "claims:DEMO_CLAIM"
    pipeline = tomllib.loads((path / f"src/{package}/pipelines/kit-{kind}-demo.toml").read_text())
    section = "task" if kind in ("target", "dataset", "environment") else "stage"
    assert [t["use"] for t in pipeline[section].values()].count(f"kit-{kind}") == 1
    source = (path / f"src/{package}/{kind}.py").read_text()
    for heading in ("Shapes:", "Units:", "Raises:", "Source:", "Doe 2026, Algorithm 1"):
        assert heading in source
    for rendered in path.rglob("*"):
        if rendered.is_file():
            text = rendered.read_text()
            assert "{{" not in text and "{%" not in text, rendered
    ruff = Path(sys.executable).with_name("ruff")
    if ruff.is_file():  # rendered into plugins/, it must pass `make lint` (this repository's ruff rules)
        config = str(ROOT / "pyproject.toml")
        for args in (["check", "--config", config], ["format", "--check", "--config", config]):
            linted = _run([str(ruff), *args, str(path)], cwd=tmp_path)
            assert linted.returncode == 0, linted.stdout + linted.stderr
    answers = yaml.safe_load((path / ".copier-answers.yml").read_text())
    repo, tag = versioned_template()
    assert answers["_src_path"] == str(repo)
    assert answers["_commit"] == tag
    assert {k: answers[k] for k in ("name", "kind", "paper")} == {
        "name": f"kit-{kind}",
        "kind": kind,
        "paper": "Doe 2026, Algorithm 1",
    }


HOSTILE = {
    "description": 'a "quoted" \\ back\\slash """ triple; import os; os.system("x") #',
    "author": 'O\'Brien "the" \\ Author',
    "paper": 'Doe 2026, "Title with quotes" \\ and \'apostrophes\' """',
}


def test_user_text_is_escaped_for_every_file_it_lands_in(tmp_path):
    """Quotes, backslashes and triple quotes in the description, author and paper render as the
    same text in Python string literals and docstrings and in TOML, never as code."""
    path = render_plugin("hostile", kind="sampler", dest=tmp_path, git_init=False, **HOSTILE)
    package = path / "src" / "quadriga_hostile"
    meta = tomllib.loads((path / "pyproject.toml").read_text())
    assert meta["project"]["description"] == HOSTILE["description"]
    assert meta["project"]["authors"] == [{"name": HOSTILE["author"]}]
    declared = tomllib.loads((package / "plugin.toml").read_text())
    assert declared["plugin"]["paper"] == HOSTILE["paper"]
    assert declared["sampler"]["hostile"]["summary"] == HOSTILE["description"]
    init = ast.parse((package / "__init__.py").read_text())
    assert ast.get_docstring(init) == f"quadriga-hostile: {HOSTILE['description']}"
    module = ast.parse((package / "sampler.py").read_text())
    assert ast.get_docstring(module).startswith(f"Hostile: {HOSTILE['description']}")
    assert not [n for n in ast.walk(module) if isinstance(n, ast.Import) and n.names[0].name == "os"]


@pytest.mark.parametrize("flag", ["description", "author", "paper"])
def test_a_line_break_or_control_character_in_user_text_is_refused(tmp_path, flag):
    for bad in ("two\nlines", "bell\x07", "esc\x1b[2J"):
        with pytest.raises(ConfigError) as info:
            render_plugin("refused", dest=tmp_path, git_init=False, **{flag: bad})
        assert info.value.key == f"--{flag}"
    assert not (tmp_path / "quadriga-refused").exists()


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


@pytest.fixture
def cli(capsys, monkeypatch):
    """``cli(*argv) -> (rc, output)``: the command line in this process, its stdout and stderr joined
    with the line breaks of the terminal width undone."""
    from quadriga.cli import main
    from quadriga.registry import reset_registry

    monkeypatch.setenv("COLUMNS", "200")

    def call(*argv: str) -> tuple[int, str]:
        reset_registry()
        capsys.readouterr()
        rc = main(list(argv))
        out, err = capsys.readouterr()
        return rc, " ".join((out + err).split())

    yield call
    reset_registry()


def test_new_plugin_refuses_the_names_of_catalogued_or_installed_distributions(tmp_path, cli, monkeypatch):
    """`new plugin std` would write a second quadriga-std (depending on itself) that replaces the real
    one: refused, as is a name whose distribution is installed though not catalogued, or whose
    entry point and package an installed plugin already has; nothing is written."""
    import importlib.metadata as metadata

    import quadriga.catalogue

    rc, out = cli("new", "plugin", "std", "--dest", str(tmp_path))
    assert rc == 2
    assert "key 'NAME'" in out and "distribution quadriga-std, which is one of quadriga's own plugins" in out
    assert "Choose another name, e.g. 'my-std'" in out

    monkeypatch.setattr(quadriga.catalogue, "catalogue", dict)  # an installed plugin the catalogue lacks
    version = metadata.version("quadriga-std")
    rc, out = cli("new", "plugin", "std", "--dest", str(tmp_path))
    assert rc == 2
    assert f"distribution quadriga-std, which is installed (quadriga-std {version})" in out
    assert "key 'NAME'" in out and "Choose another name" in out

    found = metadata.distribution

    def without_std(name: str):
        if name == "quadriga-std":
            raise metadata.PackageNotFoundError(name)
        return found(name)

    monkeypatch.setattr(metadata, "distribution", without_std)  # its entry point and package remain
    rc, out = cli("new", "plugin", "std", "--dest", str(tmp_path))
    assert rc == 2
    assert "package quadriga_std and the entry point std" in out
    assert "installed plugin 'std' of quadriga-std (module quadriga_std.plugin)" in out
    assert list(tmp_path.iterdir()) == []


def test_new_plugin_refuses_a_component_name_registered_for_its_kind(tmp_path, cli):
    """A sampler called mala would clash with quadriga-std's: refused, naming quadriga-std; the same
    name for another kind (no evaluator is called mala) is free."""
    from quadriga.registry import get_registry

    assert get_registry().get("mala", "sampler").distribution == "quadriga-std"
    rc, out = cli("new", "plugin", "mala", "--dest", str(tmp_path))
    assert rc == 2
    assert "key 'NAME'" in out
    assert "a sampler named 'mala' is already registered by quadriga-std (installed)" in out
    assert "Choose another name, e.g. 'my-mala'" in out
    assert list(tmp_path.iterdir()) == []
    path = render_plugin("mala", kind="evaluator", dest=tmp_path, git_init=False)
    assert (path / "src" / "quadriga_mala" / "evaluator.py").is_file()


def test_update_of_a_missing_folder_or_damaged_answers_is_a_config_error(tmp_path, cli):
    """`new update` of a folder that does not exist says so; an answers file that is not YAML, or is
    YAML but not a mapping, gives exit code 2 naming the file and saying to restore it from git."""
    missing = tmp_path / "nonexistent"
    rc, out = cli("new", "update", str(missing))
    assert rc == 2
    assert f"'{missing}' does not exist" in out and "copier-answers" not in out

    path = tmp_path / "quadriga-damaged"
    path.mkdir()
    answers = path / ".copier-answers.yml"
    for text, problem in (("- [\n", "is not valid YAML"), ("- a\n", "holds a YAML list"), ("", "is empty")):
        answers.write_text(text)
        rc, out = cli("new", "update", str(path))
        assert rc == 2, out
        assert f"{answers}: {problem}" in out
        assert "restore it from git" in out and "internal error" not in out


def _build_wheel(tmp_path: Path) -> Path:
    """Build quadriga's wheel from a copy of the files its build reads (the checkout stays clean)."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for name in ("framework", "templates"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    built = _pip("wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path / "wheel"), str(src))
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "wheel").glob("quadriga-*.whl")
    return wheel


@pytest.mark.slow  # about a minute: a wheel build and three interpreters that discover every plugin
def test_new_plugin_and_new_update_work_from_an_installed_wheel(tmp_path):
    """The wheel carries the top-level templates/plugin as quadriga/templates/plugin and every package
    of framework/; unpacked on its own, `python -m quadriga new plugin` renders from it and
    `python -m quadriga new update` merges against it."""
    wheel = _build_wheel(tmp_path)
    source = ROOT / "templates" / "plugin"
    expected = {
        f"quadriga/templates/plugin/{p.relative_to(source).as_posix()}"
        for p in source.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    packages = {
        p.relative_to(ROOT / "framework").as_posix()
        for p in (ROOT / "framework" / "quadriga").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        assert expected <= names and len(expected) >= 10
        assert packages <= names, sorted(packages - names)  # a new subpackage missing from pyproject
        assert not any(n.startswith("templates/") for n in names)  # no stray top-level folder
        zf.extractall(tmp_path / "site")
    env = {"PYTHONPATH": str(tmp_path / "site")}
    where = _run(
        [sys.executable, "-c", "import quadriga.scaffold as s; print(s.__file__)"], tmp_path, env=env
    )
    assert where.stdout.startswith(str(tmp_path / "site")), where.stdout + where.stderr
    new = _run(
        [sys.executable, "-m", "quadriga", "new", "plugin", "from-wheel", "--dest", "out"], tmp_path, env=env
    )
    assert new.returncode == 0, new.stdout + new.stderr
    plugin = tmp_path / "out" / "quadriga-from-wheel"
    assert (plugin / "src" / "quadriga_from_wheel" / "sampler.py").is_file()
    assert (plugin / "src" / "quadriga_from_wheel" / "pipelines" / "from-wheel-demo.toml").is_file()
    update = _run([sys.executable, "-m", "quadriga", "new", "update", str(plugin)], tmp_path, env=env)
    assert update.returncode == 0, update.stdout + update.stderr
    assert "updated" in update.stdout


# ------------------------------------------------------------------ copier update
def _commit_all(path: Path, message: str) -> None:
    for args in (["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message]):
        done = subprocess.run(["git", *args], cwd=path, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def test_copier_update_merges_a_template_change_and_keeps_the_authors_edits(tmp_path):
    """Render, edit the component and commit; change the template (a new version of it); then
    update_plugin, plain `copier update --defaults` and the `quadriga new update` command each bring
    the template's change in, keep the edit, and move `_commit` forward."""
    import yaml

    template = tmp_path / "template"
    with template_dir() as src:
        shutil.copytree(src, template, ignore=shutil.ignore_patterns("__pycache__"))
    path = render_plugin("kit-update", dest=tmp_path / "work", template=template)
    assert (path / ".git").is_dir()
    first = yaml.safe_load((path / ".copier-answers.yml").read_text())["_commit"]
    sampler = path / "src" / "quadriga_kit_update" / "sampler.py"
    sampler.write_text(sampler.read_text() + "\n# the author's own line\n")
    _commit_all(path, "my method")

    readme = template / "README.md.jinja"
    readme.write_text(readme.read_text() + "\n## Citing\n\nCite {{ paper }}.\n")
    version = update_plugin(path, template=template)
    assert version != first
    assert "## Citing" in (path / "README.md").read_text()
    assert sampler.read_text().endswith("# the author's own line\n")
    assert yaml.safe_load((path / ".copier-answers.yml").read_text())["_commit"] == version
    _commit_all(path, "template update")

    readme.write_text(readme.read_text() + "\n## Licence\n\nMIT.\n")
    _, newer = versioned_template(template)
    copier = Path(sys.executable).with_name("copier")
    done = _run([str(copier), "update", "--defaults"], cwd=path)
    assert done.returncode == 0, done.stderr
    assert "## Licence" in (path / "README.md").read_text()
    assert yaml.safe_load((path / ".copier-answers.yml").read_text())["_commit"] == newer
    assert sampler.read_text().endswith("# the author's own line\n")

    # `quadriga new update` goes to the packaged template (a newer tag), whose README has neither section
    _commit_all(path, "second template update")
    cli = _run([sys.executable, "-m", "quadriga", "new", "update", str(path)], cwd=tmp_path)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert "updated" in cli.stdout
    assert "## Licence" not in (path / "README.md").read_text()
    assert sampler.read_text().endswith("# the author's own line\n")


def test_update_refuses_uncommitted_changes_and_folders_without_answers(tmp_path):
    """copier needs a clean git work tree: uncommitted edits give a ConfigError saying to commit; a
    folder without answers, or a template copy other than the one it was rendered from, are refused."""
    path = render_plugin("kit-dirty", dest=tmp_path)
    (path / "README.md").write_text("edited\n")
    with pytest.raises(ConfigError, match="commit"):
        update_plugin(path)
    with pytest.raises(ConfigError, match=r"no \.copier-answers\.yml"):
        update_plugin(tmp_path)
    _commit_all(path, "edited")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("QUADRIGA_TEMPLATE_HOME", str(tmp_path / "elsewhere"))
        with pytest.raises(ConfigError, match="QUADRIGA_TEMPLATE_HOME="):
            update_plugin(path)


def test_without_git_the_render_is_plain_and_says_so(tmp_path, monkeypatch, capsys):
    """No git: the template is rendered as a plain folder (answers without _commit), no repository is
    made, and a note says why."""
    import yaml

    import quadriga.scaffold as scaffold

    monkeypatch.setattr(scaffold.shutil, "which", lambda name: None)
    path = render_plugin("kit-nogit", dest=tmp_path)
    answers = yaml.safe_load((path / ".copier-answers.yml").read_text())
    assert "_commit" not in answers and answers["name"] == "kit-nogit"
    with template_dir() as src:
        assert answers["_src_path"] == str(src)
    assert not (path / ".git").exists()
    assert "git is not installed" in capsys.readouterr().err


# ------------------------------------------------------------------ install commands
def test_install_commands_follow_where_quadriga_was_installed_from(tmp_path, monkeypatch):
    """From a checkout, the commands install the core and quadriga-std editable from its path (a
    plain install of a folder builds inside it), with its constraints, and the plugin with its test
    extra; from wheels, the wheel files themselves."""
    import quadriga.scaffold as scaffold
    from quadriga.scaffold import Origin

    checkout = tmp_path / "quadriga"
    (checkout / "plugins" / "quadriga-std").mkdir(parents=True)
    (checkout / "plugins" / "quadriga-std" / "pyproject.toml").write_text("")
    (checkout / "constraints.txt").write_text("")
    origins = {"quadriga": Origin("quadriga", True, checkout), "quadriga-std": Origin("quadriga-std", False)}
    monkeypatch.setattr(scaffold, "origin_of", lambda name: origins.get(name, Origin(name, False)))
    commands = install_commands(tmp_path / "quadriga-x")
    plugin = shlex.quote(f"{tmp_path / 'quadriga-x'}[test]")
    std = checkout / "plugins" / "quadriga-std"
    assert commands["here"] == [f"pip install -e {std}", f"pip install -e {plugin}"]
    assert commands["new environment"] == [
        "python -m venv .venv",
        ". .venv/bin/activate",
        f"pip install -c {checkout / 'constraints.txt'} -e {checkout} -e {std}",
        f"pip install -e {plugin}",
    ]
    core_wheel, std_wheel = tmp_path / "quadriga-0.1-py3-none-any.whl", tmp_path / "quadriga_std.whl"
    core_wheel.write_text("")
    std_wheel.write_text("")
    origins["quadriga"] = Origin("quadriga", True, core_wheel)
    origins["quadriga-std"] = Origin("quadriga-std", True, std_wheel)
    commands = install_commands(tmp_path / "quadriga-x")
    assert commands["here"] == [f"pip install -e {plugin}"]
    assert commands["new environment"][2] == f"pip install {core_wheel} {std_wheel}"
    assert origin_of("no-such-distribution").installed is False


# ------------------------------------------------------------------ outside the repository
@dataclass
class Outside:
    """A virtual environment in a temporary folder, with quadriga and quadriga-std installed from ROOT."""

    root: Path
    venv: Path
    env: dict[str, str] = field(default_factory=dict)
    debris: list[Path] = field(default_factory=list)

    def run(self, *args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run(
            list(args), cwd=cwd or self.root, capture_output=True, text=True, timeout=timeout, env=self.env
        )

    def pip_install(self, *args: str) -> subprocess.CompletedProcess:
        """pip (of the running interpreter) installing into the new environment, offline."""
        return self.run(
            sys.executable,
            "-m",
            "pip",
            "--disable-pip-version-check",
            "--python",
            str(self.venv / "bin" / "python"),
            "install",
            "-q",
            "--no-index",
            "--no-build-isolation",
            *args,
        )


@pytest.fixture(scope="module")
def outside(tmp_path_factory) -> Outside:
    """The new environment; its third-party packages are the running one's, without any quadriga*."""
    base = tmp_path_factory.mktemp("outside")
    assert ROOT not in base.parents
    venv = base / "venv"
    python = getattr(sys, "_base_executable", sys.executable)
    made = subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    purelib = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = base / "deps"
    deps.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        name = entry.name.lower()
        if name.startswith(("quadriga", "__editable__", "__pycache__")) or name.endswith(".pth"):
            continue
        (deps / entry.name).symlink_to(entry)
    (Path(purelib) / "_third_party.pth").write_text(f"{deps}\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "QUADRIGA_DISABLE")}
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        MPLBACKEND="Agg",
        QUADRIGA_TEMPLATE_HOME=str(base / "template-home"),
    )
    box = Outside(base, venv, env)
    # the documented command, offline; constraints.txt is left out because the running environment
    # (the source of the third-party packages) is what it is
    before = _build_debris()
    done = box.pip_install("-e", str(ROOT), "-e", str(ROOT / "plugins" / "quadriga-std"))
    assert done.returncode == 0, done.stdout + done.stderr
    box.debris = sorted(_build_debris() - before)
    return box


def _build_debris() -> set[Path]:
    """The ``build/`` folders in the checkout's root and its plugins (what a plain ``pip install``
    of a source folder leaves there)."""
    return {p for p in (ROOT / "build", *(ROOT / "plugins").glob("*/build")) if p.exists()}


@pytest.mark.slow
def test_the_new_environment_route_leaves_the_checkout_clean(outside):
    """Installing quadriga and quadriga-std into a new environment from the checkout, as `quadriga
    new plugin` prints it, writes no build/ folder into the checkout, and the new environment
    imports them from the checkout (editable)."""
    assert outside.debris == []
    code = "import json, quadriga as q, quadriga_std as s; print(json.dumps([q.__file__, s.__file__]))"
    where = outside.run(str(outside.venv / "bin" / "python"), "-c", code)
    assert where.returncode == 0, where.stderr
    core, std = (Path(p) for p in json.loads(where.stdout))
    assert core == ROOT / "framework" / "quadriga" / "__init__.py"
    assert ROOT / "plugins" / "quadriga-std" in std.parents


@dataclass
class Rendered:
    """The plugins rendered and installed in the new environment, and their pytest results."""

    paths: dict[str, Path]
    printed: str
    results: dict[str, dict[str, list[str]]]
    pytest_output: str


@pytest.fixture(scope="module")
def rendered(outside) -> Rendered:
    """One plugin of each kind: the sampler by `quadriga new plugin` run from the new environment
    and installed with the command it printed, the others by render_plugin; all installed editable
    in one pip call, then every plugin's own tests in one pytest run (JUnit XML read per kind)."""
    dest = outside.root / "plugins"
    made = outside.run(
        str(outside.venv / "bin" / "quadriga"), "new", "plugin", "out-sampler", "--dest", str(dest),
        "--description", "an out-of-tree sampler",
    )  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr
    paths = {"sampler": dest / "quadriga-out-sampler"}
    for kind in PLUGIN_KINDS[1:]:
        paths[kind] = render_plugin(f"out-{kind}", kind=kind, dest=dest, git_init=False)
    here = made.stdout.split("Install it in this environment", 1)[1].splitlines()[1].strip()
    printed = shlex.split(here)
    assert printed[:3] == ["pip", "install", "-e"], here
    editable = [a for kind in PLUGIN_KINDS[1:] for a in ("-e", f"{paths[kind]}[test]")]
    done = outside.pip_install(*printed[2:], *editable)
    assert done.returncode == 0, done.stdout + done.stderr
    junit = outside.root / "junit.xml"
    tested = outside.run(
        str(outside.venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
        f"--junitxml={junit}", *(str(p / "tests") for p in paths.values()),
        timeout=600,
    )  # fmt: skip
    results: dict[str, dict[str, list[str]]] = {k: {"passed": [], "failed": [], "skipped": []} for k in paths}
    for case in ET.parse(junit).getroot().iter("testcase"):
        kind = next(k for k in paths if f"test_out_{k}_{k}" in case.get("classname", ""))
        status = "passed"
        if case.find("failure") is not None or case.find("error") is not None:
            status = "failed"
        elif case.find("skipped") is not None:
            status = "skipped"
        results[kind][status].append(case.get("name", ""))
    return Rendered(paths, made.stdout, results, tested.stdout[-5000:] + tested.stderr[-2000:])


@pytest.mark.slow
def test_new_plugin_prints_the_install_commands_for_the_core_it_runs_from(rendered):
    """The new environment's quadriga came from this checkout (editable): the printed commands
    say so and install the core and quadriga-std editable from its path, with its constraints."""
    out = rendered.printed
    assert f"quadriga from {ROOT} (editable))" in out
    std = ROOT / "plugins" / "quadriga-std"
    assert f"pip install -c {ROOT / 'constraints.txt'} -e {ROOT} -e {std}" in out
    assert f"pip install -e '{rendered.paths['sampler']}[test]'" in out
    assert "quadriga list --kind sampler" in out


@pytest.mark.slow
def test_rendered_plugins_use_nothing_of_the_repository(outside, rendered):
    """quadriga and quadriga-std are imported from the checkout (installed editable into the new
    environment), each plugin from its own folder; no rendered file names the repository;
    `quadriga list` there shows all seven components, and `--where rl` finds the environment by
    the tags the template gives it."""
    code = (
        "import json, quadriga, quadriga_std, quadriga_out_dataset as d; "
        "print(json.dumps([quadriga.__file__, quadriga_std.__file__, d.__file__]))"
    )
    where = outside.run(str(outside.venv / "bin" / "python"), "-c", code)
    assert where.returncode == 0, where.stderr
    core, std, plugin = (Path(p) for p in json.loads(where.stdout))
    assert ROOT / "framework" in core.parents and ROOT / "plugins" / "quadriga-std" in std.parents
    assert rendered.paths["dataset"] in plugin.parents
    for path in rendered.paths.values():
        for f in path.rglob("*"):
            if f.is_file() and ".git" not in f.parts and "__pycache__" not in f.parts:
                assert str(ROOT) not in f.read_text(errors="replace"), f
    listed = outside.run(str(outside.venv / "bin" / "quadriga"), "list", "--json")
    assert listed.returncode == 0, listed.stderr
    found = {(c["kind"], c["name"]): c["distribution"] for c in json.loads(listed.stdout)["components"]}
    for kind in PLUGIN_KINDS:
        assert found[(kind, f"out-{kind}")] == f"quadriga-out-{kind}"
    tagged = outside.run(str(outside.venv / "bin" / "quadriga"), "list", "--where", "rl", "--json")
    assert tagged.returncode == 0, tagged.stderr
    names = {c["name"] for c in json.loads(tagged.stdout)["components"]}
    assert "out-environment" in names and "out-sampler" not in names


@pytest.mark.slow
@pytest.mark.parametrize("kind", PLUGIN_KINDS)
def test_each_kind_installs_and_passes_its_own_tests(rendered, kind):
    """Each rendered plugin's tests pass in the new environment: the 9 conformance checks
    (quadriga.testing.check_component; 3 skipped for tasks), its known answers, its ready pipeline
    and its claim at smoke scale."""
    got = rendered.results[kind]
    assert got["failed"] == [], rendered.pytest_output
    skips = TASK_SKIPS if kind in ("target", "dataset", "environment") else 0
    assert len(got["passed"]) == len(CHECKS) - skips + OWN_TESTS[kind], got
    assert len(got["skipped"]) == skips, got
    assert f"test_out_{kind.replace('-', '_')}_demo_pipeline_runs" in got["passed"]
    assert f"test_out_{kind}_claim_smoke" in got["passed"]
