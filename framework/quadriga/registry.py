"""The component registry: pluggy over ``importlib.metadata`` entry points.

Discovery reads the entry points of the ``quadriga`` group, loads each plugin
module inside its own ``try`` (one broken plugin never breaks the others) and
registers it with a :class:`pluggy.PluginManager` under the entry-point name.
Each plugin's :func:`~quadriga.hookspecs.quadriga_register` is then called with
a :class:`PluginRegistrar` bound to its distribution, so that every component,
pipeline and claim records where it came from. Components are lazy
``"module:attr"`` strings, imported only when built (as gymnasium's ``register``).
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import os
import traceback
from collections.abc import Iterable
from typing import Any, NamedTuple

import pluggy

from quadriga import hookspecs
from quadriga.errors import DuplicateComponentError, QuadrigaError, UnknownComponentError, suggest

__all__ = [
    "ENTRY_POINT_GROUP",
    "KINDS",
    "BrokenPlugin",
    "ClaimSpec",
    "ComponentSpec",
    "PipelineSpec",
    "PluginRegistrar",
    "Registry",
    "get_registry",
    "reset_registry",
]

ENTRY_POINT_GROUP = "quadriga"
KINDS = ("sampler", "learner", "estimator", "evaluator", "target", "dataset", "environment")


class ComponentSpec(NamedTuple):
    """A registered component, not yet imported.

    Attributes:
        kind: one of :data:`KINDS`.
        name: the name pipelines use (``use = "mala"``).
        target: ``"module:attr"`` of the attrs class.
        summary: one line.
        paper: the reference (authors, year, equation or algorithm number).
        plugin: the entry-point name of the plugin that registered it.
        distribution: that plugin's distribution name, e.g. ``"quadriga-std"``.
    """

    kind: str
    name: str
    target: str
    summary: str = ""
    paper: str = ""
    plugin: str = ""
    distribution: str = ""


class PipelineSpec(NamedTuple):
    """A ready pipeline shipped by a plugin.

    Attributes:
        name: the name for ``quadriga run NAME``.
        resource: ``"package:relative/path.toml"`` inside the plugin's package.
        summary, plugin, distribution: as for :class:`ComponentSpec`.
    """

    name: str
    resource: str
    summary: str = ""
    plugin: str = ""
    distribution: str = ""

    def read_text(self) -> str:
        """Return the TOML text of the pipeline (``importlib.resources``)."""
        import importlib.resources as resources

        package, _, rel = self.resource.partition(":")
        node = resources.files(package)
        for part in rel.split("/"):
            node = node / part
        return node.read_text(encoding="utf-8")


class ClaimSpec(NamedTuple):
    """A paper claim registered by a plugin.

    Attributes:
        name: the claim name (``quadriga verify NAME``).
        target: ``"module:attr"`` of a callable ``claim(scale, *, out_dir) -> ClaimResult``.
        summary: the claim in one sentence.
        paper: the reference.
        plugin, distribution: where it came from.
    """

    name: str
    target: str
    summary: str = ""
    paper: str = ""
    plugin: str = ""
    distribution: str = ""


class BrokenPlugin(NamedTuple):
    """A plugin that failed to import or to register.

    Attributes:
        plugin: entry-point name.
        distribution: distribution name (``"?"`` when unknown).
        entry_point: the entry point's value (``"module"``).
        stage: ``"import"`` or ``"register"``.
        error: ``"ExceptionType: message"``.
        traceback: the formatted traceback.
    """

    plugin: str
    distribution: str
    entry_point: str
    stage: str
    error: str
    traceback: str = ""


def _check_target(target: str, where: str) -> None:
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise QuadrigaError(f"{where}: target '{target}' must be 'package.module:attr'")


class PluginRegistrar:
    """What a plugin's ``quadriga_register`` hook receives: adds specs tagged with the plugin.

    Args:
        registry: the :class:`Registry` being filled.
        plugin: the plugin's entry-point name.
        distribution: the plugin's distribution name.
    """

    def __init__(self, registry: Registry, plugin: str, distribution: str) -> None:
        self._registry, self.plugin, self.distribution = registry, plugin, distribution

    def add(self, kind: str, name: str, target: str, *, summary: str = "", paper: str = "") -> None:
        """Register a component lazily.

        Args:
            kind: one of ``sampler, learner, estimator, evaluator, target, dataset, environment``.
            name: lowercase name with dashes, e.g. ``"mala"``.
            target: ``"module:Class"``, imported only when the component is built.
            summary: one line shown by ``quadriga list``.
            paper: reference shown by ``quadriga info``.

        Raises:
            QuadrigaError: for an unknown kind or a malformed target.
        """
        if kind not in KINDS:
            raise QuadrigaError(
                f"plugin '{self.plugin}': unknown kind '{kind}' for '{name}'; "
                f"use one of {', '.join(KINDS)}.{suggest(kind, KINDS)}"
            )
        _check_target(target, f"plugin '{self.plugin}', {kind} '{name}'")
        self._registry._add_component(
            ComponentSpec(kind, name, target, summary, paper, self.plugin, self.distribution)
        )

    def add_pipeline(self, name: str, resource: str, *, summary: str = "") -> None:
        """Register a ready pipeline file ``"package:path/in/package.toml"`` by name."""
        _check_target(resource, f"plugin '{self.plugin}', pipeline '{name}'")
        self._registry._add_named(
            "pipeline",
            self._registry._pipelines,
            PipelineSpec(name, resource, summary, self.plugin, self.distribution),
        )

    def add_claim(self, name: str, target: str, *, summary: str = "", paper: str = "") -> None:
        """Register a paper claim: ``target`` is ``"module:function"`` (see :mod:`quadriga.claims`)."""
        _check_target(target, f"plugin '{self.plugin}', claim '{name}'")
        self._registry._add_named(
            "claim",
            self._registry._claims,
            ClaimSpec(name, target, summary, paper, self.plugin, self.distribution),
        )


class Registry:
    """All components, pipelines and claims of the installed, enabled plugins.

    Args:
        disable: plugin (entry-point) names or distribution names not to load;
            ``QUADRIGA_DISABLE=a,b`` adds to them when ``use_env`` is true.
        use_env: read ``QUADRIGA_DISABLE``.
        plugins: extra ``{name: module_or_object}`` registered as if found by
            entry point (for notebooks and tests).

    Loading is lazy: the first query discovers and registers the plugins.
    """

    def __init__(
        self, *, disable: Iterable[str] = (), use_env: bool = True, plugins: dict[str, Any] | None = None
    ) -> None:
        self.disabled = {d.strip() for d in disable if d.strip()}
        if use_env:
            self.disabled |= {
                d.strip() for d in os.environ.get("QUADRIGA_DISABLE", "").split(",") if d.strip()
            }
        self._extra = dict(plugins or {})
        self.pm = pluggy.PluginManager("quadriga")
        self.pm.add_hookspecs(hookspecs)
        self._components: dict[tuple[str, str], ComponentSpec] = {}
        self._conflicts: dict[tuple[str, str], list[ComponentSpec]] = {}
        self._pipelines: dict[str, PipelineSpec] = {}
        self._claims: dict[str, ClaimSpec] = {}
        self._named_conflicts: dict[tuple[str, str], list[Any]] = {}
        self.broken: list[BrokenPlugin] = []
        self.plugins: dict[str, dict[str, str]] = {}
        self._loaded = False

    # ----------------------------------------------------------------- loading
    def load(self) -> Registry:
        """Discover and register every enabled plugin (idempotent). Returns ``self``."""
        if self._loaded:
            return self
        self._loaded = True
        dists: dict[str, str] = {}
        for ep in md.entry_points(group=ENTRY_POINT_GROUP):
            dist = ep.dist.name if ep.dist is not None else "?"
            version = ep.dist.version if ep.dist is not None else "?"
            if ep.name in self.plugins:  # the same name twice on sys.path: keep the first
                continue
            self.plugins[ep.name] = {
                "distribution": dist,
                "version": version,
                "entry_point": ep.value,
                "status": "ok",
            }
            if ep.name in self.disabled or dist in self.disabled:
                self.pm.set_blocked(ep.name)
                self.plugins[ep.name]["status"] = "disabled"
                continue
            try:
                module = ep.load()
            except Exception as exc:
                self._record_broken(ep.name, dist, ep.value, "import", exc)
                continue
            try:
                self.pm.register(module, name=ep.name)
            except Exception as exc:
                self._record_broken(ep.name, dist, ep.value, "register", exc)
                continue
            dists[ep.name] = dist
        for name, obj in self._extra.items():
            self.plugins[name] = {
                "distribution": name,
                "version": "",
                "entry_point": repr(obj),
                "status": "ok",
            }
            if name in self.disabled:
                self.plugins[name]["status"] = "disabled"
                continue
            self.pm.register(obj, name=name)
            dists[name] = name
        for impl in self.pm.hook.quadriga_register.get_hookimpls():
            name = impl.plugin_name
            registrar = PluginRegistrar(self, name, dists.get(name, name))
            try:
                impl.function(registry=registrar)
            except Exception as exc:
                info = self.plugins.get(name, {})
                self._record_broken(
                    name, registrar.distribution, info.get("entry_point", "?"), "register", exc
                )
                self._drop_plugin(name)
        return self

    def _record_broken(self, name: str, dist: str, value: str, stage: str, exc: BaseException) -> None:
        self.broken.append(
            BrokenPlugin(
                name,
                dist,
                value,
                stage,
                f"{type(exc).__name__}: {exc}",
                "".join(traceback.format_exception(exc)),
            )
        )
        if name in self.plugins:
            self.plugins[name]["status"] = "broken"

    def _drop_plugin(self, name: str) -> None:
        """Remove what a plugin registered before its hook raised."""
        for key in [k for k, s in self._components.items() if s.plugin == name]:
            del self._components[key]
        for table in (self._pipelines, self._claims):
            for key in [k for k, s in table.items() if s.plugin == name]:
                del table[key]

    def _add_component(self, spec: ComponentSpec) -> None:
        key = (spec.kind, spec.name)
        if key in self._conflicts:
            self._conflicts[key].append(spec)
            return
        old = self._components.get(key)
        if old is not None:
            self._conflicts[key] = [old, spec]
            return
        self._components[key] = spec

    def _add_named(self, what: str, table: dict[str, Any], spec: Any) -> None:
        key = (what, spec.name)
        if key in self._named_conflicts:
            self._named_conflicts[key].append(spec)
            return
        if spec.name in table:
            self._named_conflicts[key] = [table.pop(spec.name), spec]
            return
        table[spec.name] = spec

    # ----------------------------------------------------------------- queries
    def components(self, kind: str | None = None) -> list[ComponentSpec]:
        """All registered components (of one kind), sorted by kind and name."""
        self.load()
        specs = [s for s in self._components.values() if kind is None or s.kind == kind]
        return sorted(specs, key=lambda s: (KINDS.index(s.kind), s.name))

    @property
    def conflicts(self) -> dict[tuple[str, str], list[Any]]:
        """``{(kind, name): [specs]}`` registered by more than one plugin."""
        self.load()
        return {**self._conflicts, **self._named_conflicts}

    def pipelines(self) -> list[PipelineSpec]:
        """All ready pipelines, sorted by name."""
        self.load()
        return sorted(self._pipelines.values(), key=lambda s: s.name)

    def claims(self) -> list[ClaimSpec]:
        """All claims, sorted by distribution and name."""
        self.load()
        return sorted(self._claims.values(), key=lambda s: (s.distribution, s.name))

    def _conflict_error(self, what: str, name: str, specs: list[Any]) -> DuplicateComponentError:
        who = " and ".join(f"'{s.distribution}' (plugin '{s.plugin}')" for s in specs)
        return DuplicateComponentError(
            f"{what} '{name}' is registered by both {who}. Uninstall one of them, or disable one "
            f"with --disable PLUGIN or QUADRIGA_DISABLE=PLUGIN."
        )

    def get(self, name: str, kinds: Iterable[str] | str | None = None) -> ComponentSpec:
        """Find a component by name among ``kinds`` (all kinds when ``None``).

        Raises:
            UnknownComponentError: no such name; the message lists close matches of those kinds.
            DuplicateComponentError: two distributions registered it.
            QuadrigaError: the name exists in several of ``kinds`` (say which with ``kind = ...``).
        """
        self.load()
        kinds = KINDS if kinds is None else ((kinds,) if isinstance(kinds, str) else tuple(kinds))
        for kind in kinds:
            if (kind, name) in self._conflicts:
                raise self._conflict_error(kind, name, self._conflicts[(kind, name)])
        found = [self._components[(k, name)] for k in kinds if (k, name) in self._components]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise QuadrigaError(
                f"'{name}' names a {' and a '.join(s.kind for s in found)}; "
                f'add kind = "{found[0].kind}" (or another) to say which.'
            )
        known = [s.name for s in self._components.values() if s.kind in kinds]
        what = "/".join(kinds) if len(kinds) < len(KINDS) else "component"
        hint = suggest(name, known)
        others = [s for s in self._components.values() if s.name == name]
        if others:
            article = "an" if others[0].kind[0] in "aeiou" else "a"
            hint += f" ('{name}' is {article} {others[0].kind}, which cannot be used here.)"
        broken = [b.plugin for b in self.broken]
        if broken:
            hint += f" Note: plugin(s) {', '.join(broken)} failed to load (see `quadriga doctor`)."
        if not hint:
            hint = " Run `quadriga list` to see what is installed."
        raise UnknownComponentError(f"unknown {what} '{name}'.{hint}")

    def get_pipeline(self, name: str) -> PipelineSpec:
        """Find a ready pipeline by name.

        Raises:
            UnknownComponentError: with close matches.
            DuplicateComponentError: when two distributions ship it.
        """
        self.load()
        if ("pipeline", name) in self._named_conflicts:
            raise self._conflict_error("pipeline", name, self._named_conflicts[("pipeline", name)])
        if name in self._pipelines:
            return self._pipelines[name]
        hint = suggest(name, self._pipelines) or " Run `quadriga list --kind pipeline`."
        if self.broken:
            hint += (
                f" Note: plugin(s) {', '.join(b.plugin for b in self.broken)} failed to load, so their "
                "pipelines are missing (see `quadriga doctor`)."
            )
        raise UnknownComponentError(f"no pipeline file and no registered pipeline named '{name}'.{hint}")

    def load_class(self, spec: ComponentSpec) -> type:
        """Import the component class of ``spec``.

        Raises:
            QuadrigaError: the module or attribute cannot be imported; names the distribution.
        """
        module_name, _, attr = spec.target.partition(":")
        try:
            obj: Any = importlib.import_module(module_name)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except Exception as exc:
            raise QuadrigaError(
                f"{spec.kind} '{spec.name}' from '{spec.distribution}' could not be "
                f"imported ({spec.target}): {type(exc).__name__}: {exc}. "
                f"Reinstall '{spec.distribution}' or run `quadriga doctor`."
            ) from exc
        return obj

    def load_claim(self, spec: ClaimSpec) -> Any:
        """Import the claim callable of ``spec`` (errors as for :meth:`load_class`)."""
        return self.load_class(
            ComponentSpec("claim", spec.name, spec.target, plugin=spec.plugin, distribution=spec.distribution)
        )

    def call_hook(self, name: str, **kwargs: Any) -> list[str]:
        """Call a lifecycle hook on every plugin; return warnings for the ones that raised."""
        self.load()
        warnings = []
        for impl in getattr(self.pm.hook, name).get_hookimpls():
            try:
                impl.function(**{k: v for k, v in kwargs.items() if k in impl.argnames})
            except Exception as exc:
                warnings.append(f"plugin '{impl.plugin_name}' raised in {name}: {type(exc).__name__}: {exc}")
        return warnings


_DEFAULT: Registry | None = None


def get_registry(*, disable: Iterable[str] = ()) -> Registry:
    """Return the process-wide registry, creating it on first use.

    Args:
        disable: plugins to disable (only applied when the registry is created,
            or when it differs from the current one's set).
    """
    global _DEFAULT
    disable = set(disable)
    if _DEFAULT is None or (disable and not disable <= _DEFAULT.disabled):
        _DEFAULT = Registry(disable=disable)
    return _DEFAULT


def reset_registry() -> None:
    """Forget the process-wide registry (the next :func:`get_registry` rediscovers plugins)."""
    global _DEFAULT
    _DEFAULT = None
