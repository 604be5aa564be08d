"""Render the plugin template (copier) into a new distribution, as ``quadriga new plugin NAME`` does.

The template lives at the repository's top level, ``templates/plugin``, and ships inside the
wheel as package data (``quadriga/templates/plugin``),
so the command works from an installed wheel as well as from a checkout. It renders::

    quadriga-NAME/
      pyproject.toml              entry point [project.entry-points.quadriga]
      README.md
      .copier-answers.yml         the template's version and the answers, for ``copier update``
      .gitignore
      src/quadriga_NAME/plugin.py registration: registry.add_package(__package__)
      src/quadriga_NAME/plugin.toml what it registers (lazy "module:Class" paths, summaries, tags)
      src/quadriga_NAME/KIND.py   a working component skeleton with documented shapes, units, errors, source
      src/quadriga_NAME/claims.py a claim stub run by ``quadriga verify``
      src/quadriga_NAME/pipelines/NAME-demo.toml
      tests/test_NAME_KIND.py     conformance checks, a known answer, the pipeline, the claim (smoke)

``copier update`` needs a *versioned* template: a git repository whose tags are PEP 440 versions
(copier 9 reads ``_commit`` and ``_src_path`` from the answers file, clones ``_src_path`` at the
old and the new tag, and merges the difference into the project). The packaged template is a plain
folder, so :func:`versioned_template` keeps a git copy of it under :func:`template_home`, with one
commit and one tag (``0.1.0``, ``0.1.0.post1``, ...) per distinct content; every render syncs it,
and :func:`update_plugin` syncs it and runs ``copier update`` on a rendered plugin.
"""

from __future__ import annotations

import contextlib
import dataclasses
import filecmp
import importlib.resources as resources
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlparse

from quadriga.errors import ConfigError
from quadriga.registry import NAME_PATTERN

if TYPE_CHECKING:
    from quadriga.registry import Registry

__all__ = [
    "MAX_PLUGIN_NAME",
    "PLUGIN_KINDS",
    "Origin",
    "check_name_free",
    "install_commands",
    "origin_of",
    "render_plugin",
    "template_dir",
    "template_home",
    "update_plugin",
    "versioned_template",
]

#: the kinds of component the template can scaffold (every kind of :data:`quadriga.registry.KINDS`)
PLUGIN_KINDS = ("sampler", "learner", "estimator", "evaluator", "target", "dataset", "environment")

#: the most characters a plugin name may have (``quadriga new plugin NAME``): it names the directory
#: ``quadriga-NAME``, the package ``quadriga_NAME`` and files in it, which must stay within file-name limits
MAX_PLUGIN_NAME = 64

#: git identity for the template repository's commits (and a plugin's first commit when git has none)
_GIT_IDENTITY = ("-c", "user.name=quadriga", "-c", "user.email=quadriga@localhost")


@contextlib.contextmanager
def template_dir() -> Iterator[Path]:
    """The plugin template's directory (a real path, also from a zipped install).

    An installed wheel carries it as package data, ``quadriga/templates/plugin`` (the build
    configuration maps the repository's top-level ``templates/plugin`` there); a source checkout
    run without installing (``PYTHONPATH=framework``) reads ``templates/plugin`` at the top level.

    Raises:
        FileNotFoundError: neither place holds the template (a broken install).
    """
    packaged = resources.files("quadriga") / "templates" / "plugin"
    if packaged.is_dir():
        with resources.as_file(packaged) as path:
            yield Path(path)
        return
    checkout = Path(__file__).resolve().parents[2] / "templates" / "plugin"
    if not checkout.is_dir():
        raise FileNotFoundError(
            f"the plugin template is missing: neither the installed package ({packaged}) nor the "
            f"source checkout ({checkout}) holds it; reinstall quadriga."
        )
    yield checkout


def template_home() -> Path:
    """Where the versioned (git) copy of the plugin template lives.

    ``$QUADRIGA_TEMPLATE_HOME`` when set, else ``$XDG_DATA_HOME/quadriga/templates/plugin``
    (``~/.local/share/quadriga/templates/plugin``). Keep it: ``copier update`` of a plugin clones the
    tag it was rendered from out of this repository.
    """
    override = os.environ.get("QUADRIGA_TEMPLATE_HOME")
    if override:
        return Path(override).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "quadriga" / "templates" / "plugin"


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)


def _git_ok(*args: str, cwd: Path) -> str:
    done = _git(*args, cwd=cwd)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {cwd}: {done.stderr.strip()}")
    return done.stdout.strip()


def _ignored(directory: str, names: list[str]) -> list[str]:
    return [n for n in names if n == "__pycache__" or n.endswith(".pyc")]


def _same_tree(a: Path, b: Path) -> bool:
    """``a`` and ``b`` hold the same files with the same contents (``.git`` and caches left out)."""
    cmp = filecmp.dircmp(a, b, ignore=[".git", "__pycache__"])
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    return not mismatch and not errors and all(_same_tree(a / d, b / d) for d in cmp.common_dirs)


def _next_tag(tags: set[str], version: str) -> str:
    if version not in tags:
        return version
    k = 1
    while f"{version}.post{k}" in tags:
        k += 1
    return f"{version}.post{k}"


@contextlib.contextmanager
def _locked(home: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``home`` (a file next to it) while the block runs; creates ``home``."""
    home.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # Windows: no lock (renders rarely run concurrently)
        yield
        return
    with open(home.parent / f".{home.name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def versioned_template(source: str | Path | None = None, home: str | Path | None = None) -> tuple[Path, str]:
    """A git repository holding the plugin template, with its current content committed and tagged.

    When the files of ``source`` differ from the repository's last commit they are committed
    and tagged with quadriga's version (``0.1.0``; ``0.1.0.post1``, ``0.1.0.post2``, ... when the
    template changes within one version), so copier sees a PEP 440 version per template state.

    Args:
        source: the template folder (default: the one shipped in the package, :func:`template_dir`).
        home: the repository (default :func:`template_home`); created when missing.

    Returns:
        ``(repository path, tag of its current content)``.

    Raises:
        RuntimeError: git is not installed, or a git command failed (its message is included).

    Source: copier 9 "Updating a project" (a template must be a git repository with PEP 440 tags).
    """
    import quadriga

    if shutil.which("git") is None:
        raise RuntimeError("git is not installed; copier needs it to version the template")
    repo = Path(home) if home is not None else template_home()
    with contextlib.ExitStack() as stack:
        src = Path(source) if source is not None else stack.enter_context(template_dir())
        with _locked(repo):
            if not (repo / ".git").is_dir():
                _git_ok("init", "-q", cwd=repo)
            tags = set(_git_ok("tag", "--list", cwd=repo).split())
            has_head = _git("rev-parse", "--verify", "-q", "HEAD", cwd=repo).returncode == 0
            if has_head and tags and _same_tree(src, repo):
                described = _git("describe", "--tags", "--exact-match", "HEAD", cwd=repo)
                if described.returncode == 0:
                    return repo, described.stdout.strip()
            for entry in repo.iterdir():
                if entry.name != ".git":
                    shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
            shutil.copytree(src, repo, dirs_exist_ok=True, ignore=_ignored)
            _git_ok("add", "-A", cwd=repo)
            tag = _next_tag(tags, quadriga.__version__)
            _git_ok(
                *_GIT_IDENTITY,
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                f"quadriga plugin template {tag}",
                cwd=repo,
            )
            _git_ok("tag", tag, cwd=repo)
            return repo, tag


def _git_init_project(path: Path, message: str) -> bool:
    """``git init`` and commit a fresh render unless it lies inside a git work tree; True when done."""
    if shutil.which("git") is None:
        return False
    if _git("rev-parse", "--is-inside-work-tree", cwd=path).returncode == 0:
        return False
    _git_ok("init", "-q", cwd=path)
    _git_ok("add", "-A", cwd=path)
    identity = () if _git("config", "user.email", cwd=path).returncode == 0 else _GIT_IDENTITY
    _git_ok(*identity, "commit", "-q", "-m", message, cwd=path)
    return True


def check_name_free(name: str, kind: str, registry: Registry | None = None) -> None:
    """Refuse a plugin name whose distribution, package, entry point or component is already taken.

    ``quadriga-NAME`` must be neither a catalogued distribution (:func:`quadriga.catalogue.catalogue`)
    nor an installed one (installing the render would replace it); its package ``quadriga_NAME`` and
    entry point ``NAME`` must not be an installed plugin's; and no installed (or catalogued)
    distribution may already register a ``kind`` called ``name`` (the two would clash in every
    lookup once both are installed).

    Args:
        name: the component's name (already checked against :data:`NAME_PATTERN`).
        kind: one of :data:`PLUGIN_KINDS`.
        registry: the registry to look in (default :func:`quadriga.registry.get_registry` with its cache).

    Raises:
        ConfigError: (key ``NAME``) the name is taken; the message says by which distribution and
            suggests another name.
    """
    from quadriga.catalogue import providers
    from quadriga.registry import get_registry, normalize_name

    distribution, package, short = f"quadriga-{name}", f"quadriga_{name.replace('-', '_')}", name
    other = f"'my-{name}' or '{name}-2'"
    _check_distribution_free(name, distribution, other)
    reg = registry if registry is not None else get_registry(cache=True)
    reg.load()
    for status in reg.plugins.values():
        top = status.entry_point.split(":")[0].split(".")[0]
        if normalize_name(status.plugin) == normalize_name(short) or top == package:
            raise ConfigError(
                f"'{name}' would give the package {package} and the entry point {short}, but the "
                f"installed plugin '{status.plugin}' of {status.distribution} (module "
                f"{status.entry_point}) already uses that name. Choose another name, e.g. {other}.",
                key="NAME",
            )
    owners = [s.distribution for s in reg.specs(kind) if s.name == name]
    owners += [s.distribution for s in reg.conflicts.get((kind, name), [])]
    where = "installed"
    if not owners:
        owners, where = [e.distribution for e, _ in providers(name, [kind])], "catalogued"
    if owners:
        raise ConfigError(
            f"a {kind} named '{name}' is already registered by {' and '.join(sorted(set(owners)))} "
            f"({where}); a second one would clash with it in every pipeline and `quadriga` command. "
            f"Choose another name, e.g. {other}.",
            key="NAME",
        )


def _check_distribution_free(name: str, distribution: str, other: str) -> None:
    """Refuse a ``distribution`` name that is catalogued or installed (the render would replace it).

    Raises:
        ConfigError: (key ``NAME``) naming the distribution and suggesting ``other`` names.
    """
    import importlib.metadata as metadata

    from quadriga.catalogue import catalogue

    if distribution in catalogue():
        raise ConfigError(
            f"'{name}' would make the distribution {distribution}, which is one of quadriga's own "
            f"plugins (see `quadriga list --all`); installing the render would replace it. "
            f"Choose another name, e.g. {other}.",
            key="NAME",
        )
    try:
        installed = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return
    raise ConfigError(
        f"'{name}' would make the distribution {distribution}, which is installed "
        f"({installed.metadata['Name']} {installed.version}); installing the render would replace it. "
        f"Choose another name, e.g. {other}.",
        key="NAME",
    )


def _check_one_line(flag: str, text: str | None) -> None:
    """Refuse a line break or a control character in free text the template renders.

    The template escapes quotes and backslashes for each file it writes (Python string literals
    and docstrings, TOML strings); a line break or a control character has no place in a one-line
    description, author or reference, so it is refused rather than guessed at.

    Raises:
        ConfigError: naming the flag.
    """
    if text and any(ord(c) < 32 or 127 <= ord(c) < 160 for c in text):  # line breaks included
        raise ConfigError(
            f"{flag} must be one line of text without control characters, got {text!r}.", key=flag
        )


def _check_render_args(name: str, kind: str, description: str | None, author: str, paper: str | None) -> None:
    """Refuse a malformed plugin name, an unknown kind, or free text that is not one line.

    Raises:
        ConfigError: key ``NAME``, ``--kind`` or the flag of the text, with the fix.
    """
    if len(name or "") > MAX_PLUGIN_NAME:
        raise ConfigError(
            f"the plugin name is {len(name)} characters long; a plugin name has at most "
            f"{MAX_PLUGIN_NAME} (it names the directory quadriga-NAME and the package). Shorten it.",
            key="NAME",
        )
    if not NAME_PATTERN.match(name or ""):
        raise ConfigError(
            f"'{name}' is not a valid plugin name: use lowercase letters, digits and single dashes, "
            "starting with a letter (e.g. my-sampler).",
            key="NAME",
        )
    if name.startswith("quadriga-"):
        raise ConfigError(
            f"give the method's name without the 'quadriga-' prefix (e.g. '{name[9:]}'); "
            "the distribution is named quadriga-NAME.",
            key="NAME",
        )
    if kind not in PLUGIN_KINDS:
        raise ConfigError(f"unknown kind '{kind}'; use one of {', '.join(PLUGIN_KINDS)}.", key="--kind")
    for flag, text in (("--description", description), ("--author", author), ("--paper", paper)):
        _check_one_line(flag, text)


def render_plugin(
    name: str,
    *,
    kind: str = "sampler",
    dest: str | Path = ".",
    description: str | None = None,
    author: str = "",
    paper: str | None = None,
    git_init: bool = True,
    template: str | Path | None = None,
    registry: Registry | None = None,
) -> Path:
    """Render the plugin template for a new component.

    Args:
        name: the component's registered name, lowercase with dashes (``"my-sampler"``); the
            distribution is ``quadriga-<name>`` and the package ``quadriga_<name with underscores>``.
        kind: one of :data:`PLUGIN_KINDS`.
        dest: the parent folder; the plugin is written to ``dest/quadriga-<name>``.
        description: one line for the README, ``pyproject.toml`` and ``quadriga list``.
        author: written to ``pyproject.toml`` when given.
        paper: the method's reference, shown by ``quadriga info``.
        git_init: make the new folder a git repository with one commit (skipped inside an
            existing work tree), which ``copier update`` requires.
        template: the template folder (default: the packaged one); it is rendered from its
            versioned copy (:func:`versioned_template`), so ``.copier-answers.yml`` records
            ``_src_path`` and ``_commit``. Without git it is rendered as a plain folder.
        registry: where to look for names already taken (:func:`check_name_free`; default the
            process-wide registry).

    Returns:
        The path of the new distribution folder.

    Raises:
        ConfigError: a malformed name, a name already taken (:func:`check_name_free`), an unknown
            kind, or a destination that exists and is not empty.
    """
    _check_render_args(name, kind, description, author, paper)
    check_name_free(name, kind, registry)
    target = Path(dest) / f"quadriga-{name}"
    if target.exists() and any(target.iterdir()):
        raise ConfigError(f"'{target}' exists and is not empty; choose another --dest or NAME.", key="--dest")
    import copier  # a dependency of quadriga; imported here because it is slow to import

    data: dict[str, Any] = {"name": name, "kind": kind, "author": author}
    if description:
        data["description"] = description
    if paper:
        data["paper"] = paper
    options: dict[str, Any] = {
        "data": data,
        "defaults": True,
        "quiet": True,
        "unsafe": False,
        "overwrite": True,
    }
    with contextlib.ExitStack() as stack:
        try:
            repo, tag = versioned_template(template)
            copier.run_copy(str(repo), str(target), vcs_ref=tag, **options)
        except (RuntimeError, OSError) as exc:  # no git, or no writable data folder: a plain render
            # (copier update will not be possible)
            print(f"note: {exc}; rendering without a template version", file=sys.stderr)
            src = Path(template) if template is not None else stack.enter_context(template_dir())
            copier.run_copy(str(src), str(target), **options)
    if git_init:
        try:
            _git_init_project(target, f"Render the quadriga plugin template ({kind} {name})")
        except RuntimeError as exc:  # e.g. commit signing configured: the render itself is complete
            print(
                f"note: {exc}; commit the new folder yourself before `quadriga new update`", file=sys.stderr
            )
    return target


def _read_answers(folder: Path) -> dict[str, Any]:
    """The ``.copier-answers.yml`` mapping of a rendered plugin ``folder``.

    Raises:
        ConfigError: ``folder`` is not a folder, has no answers file, or a damaged one (not YAML,
            not a mapping); the message says how to restore it.
    """
    answers = folder / ".copier-answers.yml"
    if not folder.is_dir():
        raise ConfigError(
            f"'{folder}' {'is not a folder' if folder.exists() else 'does not exist'}; give the folder "
            "of a plugin rendered by `quadriga new plugin` (e.g. quadriga-my-sampler).",
            key="PATH",
        )
    if not answers.is_file():
        raise ConfigError(
            f"'{folder}' has no .copier-answers.yml; give the folder of a plugin rendered by "
            "`quadriga new plugin` (renders from before the template wrote that file cannot be updated).",
            key="PATH",
        )
    import yaml  # type: ignore[import-untyped]  # a dependency of copier (PyYAML, no stubs installed)

    restore = f"restore it from git (`git -C {folder} checkout -- .copier-answers.yml`), then update again"
    try:
        loaded = yaml.safe_load(answers.read_text())
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        problem = " ".join(str(exc).split())
        raise ConfigError(f"is not valid YAML ({problem}); {restore}.", file=str(answers)) from None
    if not isinstance(loaded, dict):
        held = "is empty" if loaded is None else f"holds a YAML {type(loaded).__name__}"
        raise ConfigError(
            f"{held}, not the mapping of answers copier writes (_src_path, _commit, name, ...); {restore}.",
            file=str(answers),
        )
    return loaded


def update_plugin(
    path: str | Path, *, template: str | Path | None = None, conflict: Literal["inline", "rej"] = "inline"
) -> str:
    """Bring a rendered plugin up to this quadriga's template with ``copier update``.

    Syncs the versioned template (:func:`versioned_template`), then lets copier merge the
    template's changes since the plugin's ``_commit`` into its files, keeping the author's edits
    (conflicts are written inline, ``<<<<<<<``/``>>>>>>>``, or as ``.rej`` files with
    ``conflict="rej"``). The previous answers are reused.

    Args:
        path: the plugin folder (holding ``.copier-answers.yml``).
        template: the template folder (default: the packaged one).
        conflict: copier's conflict mode, ``"inline"`` or ``"rej"``.

    Returns:
        The template version the plugin is now at (``_commit``).

    Raises:
        ConfigError: ``path`` is not a folder, it has no ``.copier-answers.yml`` or a damaged one
            (not YAML, or not a mapping), or copier refused (the plugin is not a
            git repository, has uncommitted changes, or the template is older); the message says which.
        RuntimeError: git is not installed.
    """
    import copier
    from copier.errors import UserMessageError

    folder = Path(path)
    answers = folder / ".copier-answers.yml"
    loaded = _read_answers(folder)
    recorded = loaded.get("_src_path")
    repo, tag = versioned_template(template)
    if recorded is None or Path(str(recorded)).expanduser().resolve() != repo.resolve():
        raise ConfigError(
            f"'{answers}' names the template {recorded!r}, but this quadriga keeps it in '{repo}'; "
            f"set QUADRIGA_TEMPLATE_HOME={recorded} (where it was rendered) and run the update again.",
            key="PATH",
        )
    try:
        copier.run_update(
            str(folder),
            vcs_ref=tag,
            defaults=True,
            overwrite=True,
            quiet=True,
            unsafe=False,
            conflict=conflict,
        )
    except UserMessageError as exc:
        raise ConfigError(
            f"copier update of '{folder}' stopped: {exc} (commit your changes first: "
            "`git add -A && git commit`).",
            key="PATH",
        ) from None
    return tag


# ------------------------------------------------------------------ install commands
@dataclasses.dataclass(frozen=True)
class Origin:
    """Where an installed distribution came from (PEP 610 ``direct_url.json``).

    Attributes:
        name: the distribution name.
        installed: whether it is installed in the running interpreter.
        path: the local folder or wheel it was installed from (``None`` from an index).
        editable: installed with ``pip install -e``.
    """

    name: str
    installed: bool
    path: Path | None = None
    editable: bool = False

    @property
    def checkout(self) -> Path | None:
        """The source folder it was installed from (a checkout), or ``None`` (a wheel or an index)."""
        return self.path if self.path is not None and self.path.is_dir() else None


def origin_of(distribution: str) -> Origin:
    """The :class:`Origin` of an installed distribution, read from its ``direct_url.json``."""
    import importlib.metadata as metadata

    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return Origin(distribution, installed=False)
    raw = dist.read_text("direct_url.json")
    if not raw:
        return Origin(distribution, installed=True)
    try:
        info = json.loads(raw)
    except ValueError:
        return Origin(distribution, installed=True)
    url = urlparse(str(info.get("url", "")))
    if url.scheme != "file":
        return Origin(distribution, installed=True)
    return Origin(
        distribution,
        installed=True,
        path=Path(unquote(url.path)),
        editable=bool(info.get("dir_info", {}).get("editable", False)),
    )


def _quote(path: Path | str) -> str:
    import shlex

    return shlex.quote(str(path))


def install_commands(plugin: str | Path) -> dict[str, list[str]]:
    """The shell commands that install a rendered plugin, for the running quadriga's situation.

    Reads where ``quadriga`` and ``quadriga-std`` were installed from (:func:`origin_of`): a checkout
    (editable or not), a wheel file or an index. A checkout is installed editable (``-e``): pip
    builds a plain install of a source folder inside it (``build/`` left in the checkout), an
    editable one in a temporary folder, so the checkout holds nothing new but the
    ``*.egg-info`` metadata that git ignores; the new environment then follows the checkout's files.

    Args:
        plugin: the rendered plugin's folder.

    Returns:
        ``{"here": [...], "new environment": [...]}``: the commands in the environment running
        quadriga now, and in a fresh virtual environment (from the same checkout or wheels).
    """
    core, std = origin_of("quadriga"), origin_of("quadriga-std")
    checkout = core.checkout

    def source(path: Path) -> str:
        return f"-e {_quote(path)}" if path.is_dir() else _quote(path)

    std_source = "quadriga-std"
    if std.path is not None and std.path.exists():
        std_source = source(std.path)
    elif checkout is not None and (checkout / "plugins" / "quadriga-std" / "pyproject.toml").is_file():
        std_source = source(checkout / "plugins" / "quadriga-std")
    here: list[str] = []
    if not std.installed:
        here.append(f"pip install {std_source}")
    here.append(f"pip install -e {_quote(f'{plugin}[test]')}")
    fresh = ["python -m venv .venv", ". .venv/bin/activate"]
    if checkout is not None:
        constraints = checkout / "constraints.txt"
        pin = f"-c {_quote(constraints)} " if constraints.is_file() else ""
        fresh.append(f"pip install {pin}{source(checkout)} {std_source}")
    elif core.path is not None:
        fresh.append(f"pip install {source(core.path)} {std_source}")
    else:
        fresh.append("pip install quadriga quadriga-std")
    fresh.append(here[-1])
    return {"here": here, "new environment": fresh}
