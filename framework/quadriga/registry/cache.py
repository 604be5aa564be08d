"""A cache of the registry's discovery, so that ``quadriga list`` imports no plugin module.

Discovery (entry points, plugin modules, their ``quadriga_register`` hooks) is stored as JSON
under ``$QUADRIGA_CACHE_DIR`` (default ``$XDG_CACHE_HOME/quadriga`` or ``~/.cache/quadriga``),
one file per interpreter. It is reused only when its key (the JSON text of what follows, compared
whole) still matches. The key covers:

* the interpreter (``sys.executable``, ``sys.version``), ``sys.path`` in order, and the
  disabled plugins;
* every installed distribution: the name and version in each ``*.dist-info`` / ``*.egg-info``
  name on ``sys.path``, the directory's modification time and the modification time and size
  of its ``entry_points.txt`` (install, uninstall, upgrade, reinstall, an edited entry point);
* a zip archive on ``sys.path``: its modification time and size;
* the modification time and size of each file of the plugin modules imported during discovery
  (an editable plugin's ``plugin.py`` edited), of the ``plugin.toml`` beside the plugin module
  (``add_package`` reads it: edited, added or removed), and of each registered pipeline file and
  its folder (``add_pipelines`` reads them: a file edited, added or removed), checked when the
  cache is read;
* the core's registry code itself.

A discovery with a broken plugin is never stored (the next call retries it), nor one given extra
plugin objects. ``quadriga --no-cache`` or ``QUADRIGA_NO_CACHE=1`` bypasses the cache. Any error
reading or writing the cache falls back to normal discovery: the cache can make listing faster,
never different.

Reading the cache is the start-up of every ``quadriga`` command, so it keeps to ``os`` and ``json``
(no ``hashlib``, whose OpenSSL load costs more than comparing the key's text whole).
"""

from __future__ import annotations

import json
import os
import sys
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from quadriga.registry import Registry

__all__ = ["FORMAT", "cache_path", "enabled", "fingerprint", "restore", "store"]

#: bump when the stored layout changes
FORMAT = 2
_META_SUFFIXES = (".dist-info", ".egg-info")


def enabled() -> bool:
    """False when ``QUADRIGA_NO_CACHE`` is true (see :func:`quadriga.validators.env_flag`).

    Raises:
        ConfigError: ``QUADRIGA_NO_CACHE`` holds something that is neither true nor false.
    """
    from quadriga.validators import env_flag

    return not env_flag("QUADRIGA_NO_CACHE")


def cache_path() -> Path:
    """The cache file of this interpreter (``registry-<CRC-32 of sys.executable and prefix>.json``).

    The name only keeps interpreters apart; the key inside names the interpreter exactly.
    """
    return Path(_cache_file())


def _cache_file() -> str:
    """:func:`cache_path` as a string."""
    base = os.environ.get("QUADRIGA_CACHE_DIR")
    if not base:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(cache, "quadriga")
    tag = zlib.crc32(f"{sys.executable}\0{sys.prefix}".encode()) & 0xFFFFFFFF
    return os.path.join(base, f"registry-{tag:08x}.json")


def _stat(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def fingerprint(disabled: set[str]) -> str:
    """JSON text of everything discovery depends on except the plugin modules' files (see module doc)."""
    parts: list[Any] = [FORMAT, sys.executable, sys.version, sorted(disabled)]
    here = os.path.dirname(__file__)  # the registry package
    parts += [_stat(os.path.join(here, name)) for name in ("__init__.py", "specs.py", "cache.py")]
    parts += [_stat(os.path.join(os.path.dirname(here), name)) for name in ("hookspecs.py", "tags.py")]
    for entry in sys.path:
        where = entry or os.getcwd()
        parts.append(entry)
        if os.path.isfile(where):  # a zip archive
            parts.append(_stat(where))
            continue
        try:
            with os.scandir(where) as it:
                names = sorted(e.name for e in it if e.name.endswith(_META_SUFFIXES))
        except OSError:  # a missing directory
            continue
        for name in names:
            meta = os.path.join(where, name)
            parts.append((name, _stat(meta), _stat(os.path.join(meta, "entry_points.txt"))))
    return json.dumps(parts)


def _module_files(registry: Registry) -> dict[str, list[int] | None]:
    """Files of the plugin modules (and their parent packages), and the pipeline files and folders."""
    files: dict[str, list[int] | None] = {}
    for status in registry.plugins.values():
        if status.status != "ok":
            continue
        module = status.entry_point.partition(":")[0]
        parts = module.split(".")
        for i in range(1, len(parts) + 1):
            mod = sys.modules.get(".".join(parts[:i]))
            path = getattr(mod, "__file__", None)
            if path:
                files[path] = _stat(path)
        if path:  # the declarations beside plugin.py (registry.add_package), added, edited or removed
            declared = os.path.join(os.path.dirname(path), "plugin.toml")
            files[declared] = _stat(declared)
    for spec in registry.pipelines():  # registered by add_pipelines: a file edited, added or removed
        package, _, rel = spec.target.partition(":")
        base = getattr(sys.modules.get(package), "__file__", None)
        if base:
            path = os.path.join(os.path.dirname(base), rel)
            files[path] = _stat(path)
            files[os.path.dirname(path)] = _stat(os.path.dirname(path))
    return files


def store(registry: Registry) -> None:
    """Write ``registry``'s discovery to :func:`cache_path` (silently skipped on any error).

    Nothing is written when :meth:`Registry.to_cache` declines (a broken plugin, extra plugin objects).
    """
    discovery = registry.to_cache()
    if discovery is None:
        return
    try:
        data = {
            "format": FORMAT,
            "key": fingerprint(registry.disabled),
            "files": _module_files(registry),
            **discovery,
        }
        path = _cache_file()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(json.dumps(data))
        os.replace(tmp, path)
    except Exception:  # a read-only home, a full disk: discovery still worked
        return


def restore(registry: Registry) -> bool:
    """Fill ``registry`` from the cache when its key matches; return whether it did.

    The registry's plugin manager is left empty: :class:`~quadriga.registry.Registry` discovers
    the plugins for real the first time a hook is called or ``pm`` is used.
    """
    try:
        with open(_cache_file(), encoding="utf-8") as f:
            data = json.load(f)
        if data.get("format") != FORMAT or data.get("key") != fingerprint(registry.disabled):
            return False
        if any(_stat(path) != stamp for path, stamp in data["files"].items()):
            return False
        registry.from_cache(data)
    except Exception:
        return False
    return True
