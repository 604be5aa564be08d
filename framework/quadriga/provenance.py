"""Where a run's code came from, for ``manifest.json``: components, plugin sources, the environment.

- ``components``: for every task and stage table (and every component nested in a parameter, e.g.
  ``base_kernel = { use = "mala" }``), the registered name, kind, the distribution that supplied it,
  its version and the ``module:Class`` target;
- ``plugin_sources``: for every plugin distribution, whether it is an editable install
  (PEP 610 ``direct_url.json``), its directory and, when that directory is in a git work tree, the
  commit and whether the plugin's files differ from it (``dirty``, from ``git status --porcelain``);
- ``environment``: every installed distribution and its version (``importlib.metadata``).

Git is asked once per work tree and manifest (all plugins of this repository share one
``git status``, which gives the commit too); the work tree of a directory is found by looking for
``.git`` (no subprocess). No git, or a directory outside a work tree, gives ``commit = None``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata as md
import json
import os
import select
import shutil
import signal
import stat
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

if TYPE_CHECKING:
    from quadriga.pipeline import Pipeline
    from quadriga.registry import Registry

__all__ = [
    "command_line",
    "component_sources",
    "distribution_source",
    "environment",
    "plugin_sources",
    "provenance",
]


def command_line(argv: Iterable[str] | None = None) -> list[str]:
    """The command line as a user would type it again: ``["quadriga", "run", ...]``.

    ``python -m quadriga`` puts ``.../quadriga/__main__.py`` in ``sys.argv[0]`` and the console
    script its absolute path; both are recorded as ``quadriga``. Any other program (a script
    calling :func:`quadriga.api.run`) is kept as it was.

    Args:
        argv: the arguments, program first (default: ``sys.argv``).
    """
    args = list(sys.argv if argv is None else argv)
    if args:
        first = Path(args[0])
        if first.name == "quadriga" or (first.name == "__main__.py" and first.parent.name == "quadriga"):
            args[0] = "quadriga"
    return args


#: the last :func:`environment` and the installed distributions it was read from (their key)
_ENVIRONMENT: dict[tuple[Any, ...], dict[str, str]] = {}


def environment() -> dict[str, str]:
    """``{distribution: version}`` of every installed distribution, sorted by name.

    Reading every distribution's metadata takes most of a small run's CPU time (about 0.15 s for
    200 distributions), so the answer is kept for this process while the installed distributions
    are unchanged (:func:`_installed_key`).
    """
    return _environment(_installed_key())


def _environment(key: tuple[Any, ...]) -> dict[str, str]:
    """:func:`environment` for the installed distributions ``key`` (:func:`_installed_key`) names."""
    found = _ENVIRONMENT.get(key)
    if found is None:
        from quadriga.versions import header_fields

        found = {}
        for dist in md.distributions():
            headers = header_fields(dist, ("Name", "Version"))
            if headers is None:  # the whole metadata file, parsed once
                meta = dist.metadata
                headers = {"Name": meta["Name"], "Version": meta["Version"]} if meta is not None else {}
            name = headers.get("Name")
            if name and name not in found:
                found[name] = headers["Version"]
        found = dict(sorted(found.items(), key=lambda kv: kv[0].lower()))
        _ENVIRONMENT.clear()
        _ENVIRONMENT[key] = found
    return dict(found)


#: ``{sys.path entry: (its modification time, the distribution entries in it)}``
_LISTED: dict[str, tuple[int | None, tuple[str, ...]]] = {}


def _installed_key() -> tuple[Any, ...]:
    """The ``*.dist-info``/``*.egg-info`` names (they carry the versions) in each ``sys.path`` entry.

    They change when a distribution is installed, removed or upgraded.
    A directory is listed again only when its modification time changed (creating or removing an
    entry in it changes it), so a call costs one ``stat`` per ``sys.path`` entry (about 80 here),
    where :func:`quadriga.registry.cache.fingerprint`, which also covers entry points edited in
    place, stats every distribution twice (about 10 ms a call on a loaded machine, twice per run
    before). An entry that is not a directory (a zip file) is keyed by its modification time.
    When no entry's modification time (nor ``sys.path`` itself) changed since the last call, that
    call's key is returned as it was.
    """
    paths = tuple(sys.path)
    cwd = os.getcwd() if "" in paths else ""
    stats = [_stat(entry or cwd) for entry in paths]
    marks = (paths, cwd, tuple([None if st is None else st.st_mtime_ns for st in stats]))
    if _LAST_KEY and _LAST_KEY[0][0] == marks:  # nothing on the path changed: the same answer
        return _LAST_KEY[0][1]
    key = _read_installed_key(paths, cwd, stats)
    _LAST_KEY[:] = [(marks, key)]
    return key


#: the last :func:`_installed_key`: ``[((sys.path, cwd, modification times), key)]``
_LAST_KEY: list[tuple[tuple[Any, ...], tuple[Any, ...]]] = []


def _stat(path: str) -> os.stat_result | None:
    """``os.stat(path)``; ``None`` when it cannot be read."""
    try:
        return os.stat(path)
    except OSError:
        return None


def _read_installed_key(
    paths: tuple[str, ...], cwd: str, stats: list[os.stat_result | None]
) -> tuple[Any, ...]:
    """:func:`_installed_key` of ``sys.path`` entries ``paths`` with their ``stats``.

    Directories whose modification time is the one in :data:`_LISTED` are not listed again.
    """
    from quadriga.registry.cache import _META_SUFFIXES

    key: list[Any] = []
    for entry, info in zip(paths, stats, strict=True):
        if info is None:
            key.append((entry, None))
            continue
        if not stat.S_ISDIR(info.st_mode):
            key.append((entry, info.st_mtime_ns))
            continue
        where = entry or cwd
        known = _LISTED.get(where)
        if known is None or known[0] != info.st_mtime_ns:
            try:
                with os.scandir(where) as it:
                    names = tuple(sorted(e.name for e in it if e.name.endswith(_META_SUFFIXES)))
            except OSError:
                names = ()
            known = _LISTED[where] = (info.st_mtime_ns, names)
        key.append((entry, known[1]))
    return tuple(key)


def _git(root: str) -> tuple[str | None, str | None, frozenset[str]]:
    """``(work tree root, HEAD commit, changed paths relative to the root)`` of the tree at ``root``.

    One ``git status --porcelain=v2 --branch`` gives both the commit (its ``# branch.oid`` header;
    ``None`` before the first commit) and the changed and untracked paths. No git, or a failing
    git, gives ``(None, None, frozenset())``.
    """
    return _git_many([root])[root]


def _git_many(roots: Iterable[str]) -> dict[str, GitState]:
    """:func:`_git` of several work trees, their ``git status`` processes running side by side.

    A run whose plugins come from several checkouts waits for the slowest status, not their sum
    (:data:`GIT_SECONDS` at most; a slower git is killed and counts as no git).
    ``--no-optional-locks`` keeps git from refreshing the index, so a run never takes the
    repository's ``index.lock`` from under the user's own ``git commit``.
    """
    git = _git_executable()
    started: dict[str, tuple[int, int] | None] = {}
    for root in dict.fromkeys(roots):
        started[root] = _spawn_git(git, root) if git is not None else None
    outputs = _read_all({root: proc for root, proc in started.items() if proc is not None}, GIT_SECONDS)
    return {root: _git_result(root, outputs.get(root)) for root in started}


#: the longest a run waits for ``git status`` (seconds)
GIT_SECONDS = 20.0


@functools.lru_cache(maxsize=1)
def _git_executable() -> str | None:
    """The full path of ``git`` (None: not installed), looked up once per process."""
    return shutil.which("git")


def _spawn_git(git: str, root: str) -> tuple[int, int] | None:
    """Start ``git status`` in work tree ``root``; return ``(process id, its stdout's read end)``.

    Started by ``os.posix_spawn`` (no fork of this process, whose copy of a large address space
    with torch loaded cost more CPU than git's work, and none of :class:`subprocess.Popen`'s
    bookkeeping): stdout into a pipe, stderr to ``/dev/null``, ``SIGPIPE`` and ``SIGXFSZ`` back
    to their defaults as ``Popen`` does. ``None`` when it cannot be started.
    """
    argv = [
        git,
        "--no-optional-locks",
        "-C",
        root,
        "status",
        "--porcelain=v2",
        "--branch",
        "--untracked-files=normal",
    ]
    read, write = os.pipe()
    actions = [
        (os.POSIX_SPAWN_DUP2, write, 1),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    defaults = [getattr(signal, n) for n in ("SIGPIPE", "SIGXFSZ") if hasattr(signal, n)]
    # os.environ's own bytes mapping, the same variables: os.environ itself makes posix_spawn
    # decode every name and value in Python (about a third of the spawn's CPU time)
    env = getattr(os.environ, "_data", None)
    if not isinstance(env, dict) or not all(type(k) is bytes for k in env):
        env = os.environ
    try:
        pid = os.posix_spawn(git, argv, env, file_actions=actions, setsigdef=defaults)
    except OSError:
        os.close(read)
        return None
    finally:
        os.close(write)
    return pid, read


def _read_all(procs: Mapping[str, tuple[int, int]], seconds: float) -> dict[str, str]:
    """The standard output of each started git (:func:`_spawn_git`) that exited with status 0.

    Reads all pipes until they close, for ``seconds`` at most; a git still running then is
    killed. Every process is waited for (no zombie is left) and every descriptor closed.
    """
    chunks: dict[int, list[bytes]] = {fd: [] for _, fd in procs.values()}
    open_fds = set(chunks)
    poller = select.poll()
    for fd in open_fds:
        poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + seconds
    try:
        while open_fds:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            for fd, _ in poller.poll(left * 1000):
                data = os.read(fd, 1 << 16)
                if data:
                    chunks[fd].append(data)
                else:
                    poller.unregister(fd)
                    open_fds.discard(fd)
    finally:
        out = {}
        for root, (pid, fd) in procs.items():
            if fd in open_fds:  # still writing after the deadline (or interrupted): stop it
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            os.close(fd)
            status = _reap(pid, deadline)
            if fd not in open_fds and os.waitstatus_to_exitcode(status) == 0:
                out[root] = b"".join(chunks[fd]).decode("utf-8", "surrogateescape")
    return out


def _reap(pid: int, deadline: float) -> int:
    """Wait for process ``pid`` until ``deadline`` (``time.monotonic``), then kill it; its wait status."""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() >= deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            return os.waitpid(pid, 0)[1]
        time.sleep(0.0005)


#: ``(work tree root, HEAD commit, changed paths)`` as :func:`_git` gives it
GitState = tuple[str | None, str | None, frozenset[str]]


def _git_result(root: str, out: str | None) -> GitState:
    """Parse the output of one ``git status --porcelain=v2 --branch`` (``None``: it failed)."""
    if out is None:
        return None, None, frozenset()
    commit: str | None = None
    changed = set()
    for line in out.splitlines():
        if line.startswith("# branch.oid "):
            oid = line.split()[2]
            commit = None if oid == "(initial)" else oid
        elif line.startswith(("1 ", "2 ", "u ", "? ", "! ")):
            # "1 XY sub mH mI mW hH hI path", "2 ... score path<TAB>orig", "u ... path", "? path"
            fields = {"1": 9, "2": 10, "u": 11, "?": 2, "!": 2}[line[0]]
            path = line.split(" ", fields - 1)[-1].split("\t")[0]
            changed.add(path.strip('"'))
    return root, commit, frozenset(changed)


@functools.lru_cache(maxsize=256)
def _toplevel(directory: str) -> str | None:
    """The root of the git work tree holding ``directory``, or ``None``.

    The nearest parent with a ``.git`` entry (a folder or, in a linked work tree or submodule, a
    file), found without running git and kept for the process (a distribution's directory does not
    move under a running process).
    """
    here = Path(directory).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return str(folder)
    return None


#: ``{installed-distributions key: {name: (version, editable, path)}}``: what the metadata says
_INSTALLED: dict[tuple[Any, ...], dict[str, tuple[str | None, bool, str | None]]] = {}


def _installed(name: str, known: dict[str, Any] | None = None) -> tuple[str | None, bool, str | None]:
    """``(version, editable, local path)`` of distribution ``name`` (version ``None``: not installed).

    Read from its metadata (PEP 610 ``direct_url.json``) once per process while the installed
    distributions are unchanged (``known``: :func:`_installed_now`), not once per run.
    """
    known = _installed_now() if known is None else known
    if name not in known:
        known[name] = _read_installed(name)
    return known[name]


def _installed_now(key: tuple[Any, ...] | None = None) -> dict[str, Any]:
    """The per-process answers of :func:`_installed` for the distributions installed now.

    Keyed by :func:`_installed_key` (``key``, when the caller has it), as :func:`environment` is;
    answers for an earlier set of installed distributions are dropped.
    """
    key = _installed_key() if key is None else key
    if key not in _INSTALLED:
        _INSTALLED.clear()
        _INSTALLED[key] = {}
    return _INSTALLED[key]


def _read_installed(name: str) -> tuple[str | None, bool, str | None]:
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        return None, False, None
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
    except json.JSONDecodeError:
        direct = {}
    editable = bool(direct.get("dir_info", {}).get("editable", False))
    url = urlparse(direct.get("url", ""))
    return dist.version, editable, unquote(url.path) if url.scheme == "file" else None


def distribution_source(
    name: str, _trees: dict[str, Any] | None = None, _known: dict[str, Any] | None = None
) -> dict[str, Any]:
    """How distribution ``name`` is installed: ``{"editable", "path", "commit", "dirty"}``.

    ``path`` is the local directory of an editable or local-directory install (else ``None``);
    ``commit`` and ``dirty`` are given when that directory is in a git work tree (asked of git on
    every call: files change between runs of one process).
    """
    out: dict[str, Any] = {"editable": False, "path": None, "commit": None, "dirty": None}
    _, out["editable"], local = _installed(name, _known)
    if local is None:
        return out
    out["path"] = _normal_path(local)
    top, prefix = _work_tree(local)
    if top is not None:
        trees = {} if _trees is None else _trees
        if top not in trees:
            trees[top] = _git(top)
        root, commit, changed = trees[top]
        if root is not None:
            out["commit"] = commit
            out["dirty"] = any(c.startswith(prefix) for c in changed)
    return out


@functools.lru_cache(maxsize=256)
def _normal_path(local: str) -> str:
    """``str(Path(local))``, kept for the process (a plain function of the string)."""
    return str(Path(local))


@functools.lru_cache(maxsize=256)
def _work_tree(local: str) -> tuple[str | None, str]:
    """``(work tree root, the directory's path in it + "/")`` of a distribution's local directory.

    ``(None, "")`` when ``local`` is not a directory in a git work tree. Kept for the process, as
    :func:`_toplevel` is (an installed distribution's directory does not move under a running
    process); resolving the paths every run cost more than the rest of the plugin sources.
    """
    path = Path(local)
    if not path.is_dir():
        return None, ""
    top = _toplevel(str(path))
    if top is None:
        return None, ""
    prefix = path.resolve().relative_to(Path(top).resolve()).as_posix()
    return top, "" if prefix == "." else prefix + "/"


def plugin_sources(registry: Registry) -> dict[str, dict[str, Any]]:
    """:func:`distribution_source` of the core and of every plugin distribution, with its version."""
    return _plugin_sources(registry, _installed_key())


def _plugin_sources(registry: Registry, key: tuple[Any, ...]) -> dict[str, dict[str, Any]]:
    """:func:`plugin_sources` for the installed distributions ``key`` (:func:`_installed_key`) names.

    Only git is asked on every call (:func:`_git_many`); what the metadata says of each
    distribution is read once per process and set of installed distributions (:func:`_source_rows`).
    """
    registry.load()
    names = frozenset({"quadriga"} | {s.distribution for s in registry.plugins.values()})
    rows = _source_rows(names, key)
    # one git status per work tree, all at once
    trees: dict[str, GitState] = _git_many([row[4] for row in rows if row[4] is not None])
    out = {}
    for name, version, editable, path, top, prefix in rows:
        entry: dict[str, Any] = {
            "version": version,
            "editable": editable,
            "path": path,
            "commit": None,
            "dirty": None,
        }
        if top is not None:
            root, commit, changed = trees[top]
            if root is not None:
                entry["commit"] = commit
                entry["dirty"] = any(c.startswith(prefix) for c in changed)
        out[name] = entry
    return out


#: the last :func:`_source_rows`: ``{(installed-distributions key, names): rows}``
_ROWS: dict[tuple[Any, ...], list[tuple[str, str, bool, str | None, str | None, str]]] = {}


def _source_rows(
    names: frozenset[str], key: tuple[Any, ...]
) -> list[tuple[str, str, bool, str | None, str | None, str]]:
    """``(name, version, editable, path, work tree, prefix)`` of each installed distribution in ``names``.

    Sorted by name; ``path`` is the local directory of an editable or local-directory install,
    ``work tree`` the root of the git work tree holding it and ``prefix`` its path in there
    (:func:`_work_tree`), both ``None``/``""`` outside one. A distribution that is not installed
    (a plugin registered from Python) is left out. Kept while ``key`` (:func:`_installed_key`)
    and ``names`` are unchanged, as :func:`_installed` keeps its answers.
    """
    found = _ROWS.get((key, names))
    if found is None:
        known = _installed_now(key)
        found = []
        for name in sorted(names):
            version, editable, local = _installed(name, known)
            if version is None:
                continue
            top, prefix = _work_tree(local) if local is not None else (None, "")
            path = _normal_path(local) if local is not None else None
            found.append((name, version, editable, path, top, prefix))
        _ROWS.clear()
        _ROWS[(key, names)] = found
    return found


def _nested_uses(config: Any) -> Iterator[tuple[str, str]]:
    """``(parameter path, name)`` of every ``{"use": name, ...}`` table inside a component's config."""
    if isinstance(config, Mapping):
        for key, value in config.items():
            if isinstance(value, Mapping) and isinstance(value.get("use"), str):
                yield str(key), value["use"]
                yield from ((f"{key}.{p}", n) for p, n in _nested_uses(value))
            elif isinstance(value, (Mapping, list)):
                yield from ((f"{key}.{p}", n) for p, n in _nested_uses(value))
    elif isinstance(config, list):
        for i, value in enumerate(config):
            if isinstance(value, Mapping) and isinstance(value.get("use"), str):
                yield str(i), value["use"]
            yield from ((f"{i}.{p}", n) for p, n in _nested_uses(value))


def _describe(registry: Registry, name: str, kind: str | None) -> dict[str, Any]:
    from quadriga.errors import QuadrigaError

    try:
        spec = registry.get(name, kind)
    except QuadrigaError:
        return {"use": name, "kind": kind, "distribution": None, "version": None, "target": None}
    status = registry.plugins.get(spec.plugin)
    return {
        "use": name,
        "kind": spec.kind,
        "distribution": spec.distribution,
        "version": status.version if status is not None else None,
        "target": spec.target,
    }


def component_sources(pipeline: Pipeline, registry: Registry) -> dict[str, dict[str, Any]]:
    """Which distribution supplied each component of ``pipeline``.

    Returns:
        ``{"stage.mala": {"use", "kind", "distribution", "version", "target"}, ...}`` for every
        table and every component nested in a parameter (``"stage.srmc.base_kernel"``).
    """
    out: dict[str, dict[str, Any]] = {}
    for node in [*pipeline.tasks.values(), *pipeline.stages.values()]:
        out[node.table] = _describe(registry, node.use, node.kind)
        for path, name in _nested_uses(node.config):
            out[f"{node.table}.{path}"] = _describe(registry, name, None)
    return out


def provenance(pipeline: Pipeline, registry: Registry) -> dict[str, Any]:
    """The manifest's ``components``, ``plugin_sources`` and ``environment`` entries."""
    key = _installed_key()  # one look at the installed distributions for both
    return {
        "components": component_sources(pipeline, registry),
        "plugin_sources": _plugin_sources(registry, key),
        "environment": _environment(key),
    }
