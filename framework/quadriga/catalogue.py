"""The catalogue of the repository's plugin distributions (``quadriga/catalogue.toml``).

The catalogue lists every distribution under ``plugins/`` with a one-line summary, its install
command and the names it registers (components by kind, pipelines, claims). It is read only by
``quadriga list --all`` and by the registry's error for an unknown name, so that a name provided
by a distribution that is not installed (or is disabled, or failed to load) gets the command that
installs it. The distributions are installed from a clone of the repository
(``pip install -c constraints.txt -e plugins/<dist>`` in its root), not from PyPI.

Reading the file costs a ``tomllib`` parse; nothing here is imported on the listing path.
"""

from __future__ import annotations

import functools
import importlib.resources
import sys
from collections.abc import Iterable, Mapping

import attrs

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from quadriga.registry.specs import SPEC_KINDS, PluginStatus, normalize_name

__all__ = ["Entry", "catalogue", "not_installed", "providers", "unknown_name_note"]


@attrs.frozen
class Entry:
    """One catalogued distribution.

    Attributes:
        distribution: its name, e.g. ``"quadriga-ddpm"`` (the folder under ``plugins/``).
        summary: one line.
        install: the command that installs it from a clone of the repository.
        names: ``{kind: (name, ...)}`` for the kinds of :data:`~quadriga.registry.SPEC_KINDS` it
            registers (``"sampler"``, ..., ``"pipeline"``, ``"claim"``).
    """

    distribution: str
    summary: str
    install: str
    names: Mapping[str, tuple[str, ...]]

    def provides(self, name: str, kinds: Iterable[str] | None = None) -> str | None:
        """The kind under which this distribution registers ``name`` (among ``kinds``), or ``None``."""
        for kind in SPEC_KINDS if kinds is None else kinds:
            if name in self.names.get(kind, ()):
                return kind
        return None


@functools.cache
def catalogue() -> dict[str, Entry]:
    """``{distribution: Entry}`` read from the ``catalogue.toml`` shipped in the core package.

    Raises:
        ValueError: a table has a key that is neither ``summary``, ``install`` nor a kind
            (a broken catalogue is a defect of the core, caught by its tests).
    """
    text = importlib.resources.files("quadriga").joinpath("catalogue.toml").read_text(encoding="utf-8")
    entries = {}
    for dist, table in tomllib.loads(text)["plugin"].items():
        extra = set(table) - {"summary", "install", *SPEC_KINDS}
        if extra:
            raise ValueError(f"catalogue.toml: [plugin.{dist}] has unknown keys {sorted(extra)}")
        names = {k: tuple(table[k]) for k in SPEC_KINDS if k in table}
        entries[dist] = Entry(dist, table["summary"], table["install"], names)
    return entries


def _state(entry: Entry, plugins: Mapping[str, PluginStatus]) -> str:
    """``"ok"``, ``"disabled"``, ``"broken"`` or ``"absent"`` for ``entry`` among the plugins found."""
    states = [s.status for s in plugins.values() if normalize_name(s.distribution) == entry.distribution]
    for state in ("ok", "broken", "disabled"):
        if state in states:
            return state
    return "absent"


def not_installed(plugins: Mapping[str, PluginStatus]) -> list[Entry]:
    """The catalogued distributions that no plugin in ``plugins`` (``Registry.plugins``) comes from."""
    return [e for e in catalogue().values() if _state(e, plugins) == "absent"]


def providers(name: str, kinds: Iterable[str] | None = None) -> list[tuple[Entry, str]]:
    """``[(entry, kind)]`` of the catalogued distributions that register ``name`` among ``kinds``."""
    kinds = None if kinds is None else tuple(kinds)
    found = [(e, e.provides(name, kinds)) for e in catalogue().values()]
    return [(e, kind) for e, kind in found if kind is not None]


def unknown_name_note(name: str, kinds: Iterable[str] | None, plugins: Mapping[str, PluginStatus]) -> str:
    """A sentence for the error about an unknown ``name``: which catalogued distribution provides it.

    Args:
        name: the name looked up.
        kinds: the kinds it was looked up among (all when ``None``).
        plugins: the registry's plugins (:attr:`quadriga.registry.Registry.plugins`).

    Returns:
        ``" 'ddpm' is a sampler of quadriga-ddpm, which is not installed; install it from a clone
        of the repository: pip install -c constraints.txt -e plugins/quadriga-ddpm"``, or that
        the distribution is disabled or failed to load; ``""`` when no catalogued distribution
        provides the name or the one that does is installed and loaded. Never raises: a catalogue
        that cannot be read gives ``""``.
    """
    try:
        found = providers(name, kinds)
    except Exception:  # the hint must never hide the error it decorates
        return ""
    notes = []
    for entry, kind in found:
        state = _state(entry, plugins)
        article = "an" if kind[0] in "aeiou" else "a"
        what = f" '{name}' is {article} {kind} of {entry.distribution}, which"
        if state == "absent":
            notes.append(
                f"{what} is not installed; install it from a clone of the repository: {entry.install}"
            )
        elif state == "disabled":
            notes.append(f"{what} is disabled (--disable or QUADRIGA_DISABLE).")
        elif state == "broken":
            notes.append(f"{what} failed to load (`quadriga doctor` says why).")
    return "".join(notes)
