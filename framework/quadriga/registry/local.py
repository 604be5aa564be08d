"""Components registered from Python in this process: a class defined in a notebook cell or a script.

:func:`register` adds such a class to a registry under a name, as a plugin's declaration would;
:func:`quadriga.register` and :func:`quadriga.notebook.register` are this function. The classes
are kept in :data:`registered` (the specs' targets point there), under the plugin
:data:`NOTEBOOK_PLUGIN`. Processes started later (``quadriga sweep`` workers, the command line)
do not see them.
"""

from __future__ import annotations

import types
from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs

from quadriga.errors import ConfigError

if TYPE_CHECKING:
    from quadriga.registry import Registry

__all__ = ["NOTEBOOK_PLUGIN", "register", "registered"]

#: the plugin name that components registered from Python carry (``quadriga list`` shows it)
NOTEBOOK_PLUGIN = "notebook"

#: classes registered by :func:`register`; targets are ``"quadriga.registry.local:registered.<attr>"``
registered = types.SimpleNamespace()


def _registry(registry: Registry | None) -> Registry:
    from quadriga.registry import get_registry

    return registry if registry is not None else get_registry()


def register(
    kind: str,
    name: str,
    cls: type,
    *,
    summary: str = "",
    paper: str = "",
    tags: Iterable[str] = (),
    registry: Registry | None = None,
) -> None:
    """Register a component class defined in this process (a notebook cell, a script) under ``name``.

    Afterwards ``name`` works everywhere a plugin's component does in this process:
    :func:`quadriga.build`, pipelines run by :func:`quadriga.api.run`,
    ``quadriga.testing.check_component``. Registering the same kind and name again replaces the
    earlier class (re-running a cell). Processes started later (``quadriga sweep`` workers, the
    command line) do not see it: for those, put the class in a plugin (``quadriga new plugin NAME``).

    Args:
        kind: the component kind (``sampler``, ``learner``, ...).
        name: lowercase words joined by dashes, e.g. ``"my-sampler"``.
        cls: an attrs class implementing the kind's interface (``quadriga.Sampler``, ...).
        summary: one line for ``quadriga list``.
        paper: the reference for ``quadriga info``.
        tags: capability tags from :data:`quadriga.tags.TAGS` (``("mcmc", "needs-score")``), for
            ``quadriga list --where``.
        registry: defaults to the process-wide one.

    Raises:
        ConfigError: ``cls`` is not a class deriving from the kind's interface, or not an attrs class;
            ``name`` is already taken by an installed plugin's component of the same kind (the
            error names its distribution; pick another name).
        QuadrigaError: unknown kind, malformed name or a tag outside the vocabulary.
        DuplicateComponentError: (when used) a plugin registers the same kind and name.
    """
    from quadriga.interfaces import KIND_BASES
    from quadriga.registry import PluginRegistrar, PluginStatus

    if not isinstance(cls, type) or not attrs.has(cls):
        raise ConfigError(
            f"register({kind!r}, {name!r}, ...) needs an attrs class (decorate it with @attrs.define), "
            f"got {cls!r}.",
            key="cls",
        )
    base = KIND_BASES.get(kind)
    if base is not None and not issubclass(cls, base):
        raise ConfigError(
            f"register({kind!r}, {name!r}, {cls.__name__}): {cls.__name__} does not derive from the "
            f"interface of a {kind}: write class {cls.__name__}(quadriga.{base.__name__}).",
            key="cls",
        )
    reg = _registry(registry)
    reg.load()
    attr = f"{kind}__{name}"
    # re-running a cell replaces the earlier registration instead of colliding with it
    key = (kind, name)
    table = reg._table  # the registry's one table of specs; only notebook entries are removed here
    taken = [s for s in table.get(key, []) if s.plugin != NOTEBOOK_PLUGIN]
    if taken:
        owner = taken[0].distribution or taken[0].plugin
        raise ConfigError(
            f"register({kind!r}, {name!r}, ...): the installed distribution {owner!r} already has a "
            f"{kind} named {name!r}; register this class under another name, e.g. "
            f"'my-{name}'.",
            key="name",
        )
    setattr(registered, attr, cls)
    if key in table:
        reg._targets = None  # its index of targets is built again (Registry.component_of)
        table[key] = [s for s in table[key] if s.plugin != NOTEBOOK_PLUGIN]
        if not table[key]:
            del table[key]
    reg.plugins.setdefault(
        NOTEBOOK_PLUGIN, PluginStatus(NOTEBOOK_PLUGIN, NOTEBOOK_PLUGIN, entry_point=__name__)
    )
    PluginRegistrar(reg, NOTEBOOK_PLUGIN, NOTEBOOK_PLUGIN).add(
        kind, name, f"{__name__}:registered.{attr}", summary=summary, paper=paper, tags=tags
    )
