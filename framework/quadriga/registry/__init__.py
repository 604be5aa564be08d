"""The component registry: pluggy over ``importlib.metadata`` entry points.

Discovery reads the entry points of the ``quadriga`` group, loads each plugin
module inside its own ``try`` (one broken plugin never breaks the others) and
registers it with a :class:`pluggy.PluginManager` under the entry-point name.
A plugin module not yet known to import cleanly is first imported in a child
process (:mod:`quadriga.registry.probe`), so that one ending the process at
import (``os._exit``, a crash) is reported broken instead of ending ours.
Each plugin's :func:`~quadriga.hookspecs.quadriga_register` is then called with
a :class:`PluginRegistrar` bound to its distribution, so that every component,
pipeline and claim records where it came from. Components are lazy
``"module:attr"`` strings, imported only when built (as gymnasium's ``register``).

The records (:class:`Spec`, :class:`PluginStatus`, :class:`PluginRegistrar`, the name rules) live
in :mod:`quadriga.registry.specs` and are re-exported here; this module holds the discovery and
the table (:class:`Registry`) and the process-wide registry (:func:`get_registry`).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata as md
import os
import traceback
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pluggy

from quadriga import hookspecs
from quadriga.errors import (
    ConfigError,
    DuplicateComponentError,
    PluginImportInterrupted,
    QuadrigaError,
    UnknownComponentError,
    suggest,
)
from quadriga.registry.specs import (
    ENTRY_POINT_GROUP,
    KINDS,
    NAME_PATTERN,
    SPEC_KINDS,
    PluginRegistrar,
    PluginStatus,
    Spec,
    _dist_of,
    normalize_name,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "KINDS",
    "NAME_PATTERN",
    "SPEC_KINDS",
    "PluginImportTimeout",
    "PluginRegistrar",
    "PluginStatus",
    "Registry",
    "Spec",
    "get_registry",
    "import_timeout",
    "normalize_name",
    "reset_registry",
]


class Registry:
    """All components, pipelines and claims of the installed, enabled plugins.

    Every spec lives in one table keyed by ``(kind, name)``; a key registered by more than one
    plugin holds all their specs, and using it is an error (:attr:`conflicts`).

    Args:
        disable: plugin (entry-point) names or distribution names not to load, in any spelling
            (``quadriga_std``, ``Quadriga-Std``); ``QUADRIGA_DISABLE=a,b`` adds to them when
            ``use_env`` is true. A name no installed plugin has makes every query raise a
            :class:`~quadriga.errors.ConfigError` (a typo would otherwise disable nothing).
        Two distributions declaring the same entry-point name are both reported as broken
        (stage ``"discovery"``) and neither is loaded.
        use_env: read ``QUADRIGA_DISABLE``.
        plugins: extra ``{name: module_or_object}`` registered as if found by
            entry point (for notebooks and tests).
        use_cache: reuse a stored discovery while the installed distributions and plugin files are
            unchanged (:mod:`quadriga.registry.cache`); the plugin modules are then imported only
            when a hook is called or ``pm`` is used.

    Loading is lazy: the first query discovers and registers the plugins.
    """

    def __init__(
        self,
        *,
        disable: Iterable[str] = (),
        use_env: bool = True,
        plugins: dict[str, object] | None = None,
        use_cache: bool = False,
    ) -> None:
        given = [(d.strip(), "--disable") for d in disable if d.strip()]
        if use_env:
            given += [
                (d.strip(), "QUADRIGA_DISABLE")
                for d in os.environ.get("QUADRIGA_DISABLE", "").split(",")
                if d.strip()
            ]
        self.disabled = {normalize_name(d) for d, _ in given}
        self._disable_given = given
        self._unknown_disabled: ConfigError | None = None
        self._extra = dict(plugins or {})
        self._pm = pluggy.PluginManager("quadriga")
        self._pm.add_hookspecs(hookspecs)
        self._table: dict[tuple[str, str], list[Spec]] = {}
        # {target: component} of the table object it was built from (None: not built); see component_of
        self._targets: tuple[dict[tuple[str, str], list[Spec]], dict[str, Spec]] | None = None
        self.plugins: dict[str, PluginStatus] = {}
        self._loaded = False
        self._use_cache, self._restored = use_cache, False

    @property
    def pm(self) -> pluggy.PluginManager:
        """The pluggy plugin manager, with every enabled plugin registered."""
        if self._restored:  # filled from the cache: import and register the plugins now
            self._restored, self._loaded, self._use_cache = False, False, False
            self._table, self.plugins = {}, {}
            self.load()
        return self._pm

    # ----------------------------------------------------------------- loading
    def load(self) -> Registry:
        """Discover and register every enabled plugin (idempotent). Returns ``self``."""
        if self._loaded:
            if self._unknown_disabled is not None:
                raise self._unknown_disabled
            return self
        self._loaded = True
        if self._use_cache and not self._extra:
            from quadriga.registry import cache as registry_cache

            if registry_cache.enabled() and registry_cache.restore(self):
                self._restored = True
                return self
        self._discover()
        if self._use_cache and not self._extra:
            from quadriga.registry import cache as registry_cache

            if registry_cache.enabled():
                registry_cache.store(self)
        return self

    # ----------------------------------------------------------------- cache
    def to_cache(self) -> dict[str, Any] | None:
        """The discovery as JSON-ready data for :mod:`quadriga.registry.cache`.

        Returns:
            ``{"plugins": [...], "specs": [...]}``, or ``None`` when it must not be stored (a
            broken plugin, which the next call retries, or plugin objects given to the constructor).
        """
        if self._extra or any(s.status == "broken" for s in self.plugins.values()):
            return None
        plugins = [
            {
                "plugin": s.plugin,
                "distribution": s.distribution,
                "version": s.version,
                "entry_point": s.entry_point,
                "status": s.status,
            }
            for s in self.plugins.values()
        ]
        specs = [
            [s.kind, s.name, s.target, s.summary, s.paper, s.plugin, s.distribution, list(s.tags)]
            for same in self._table.values()
            for s in same
        ]
        return {"plugins": plugins, "specs": specs}

    def from_cache(self, data: Mapping[str, Any]) -> None:
        """Replace the discovered plugins and specs by ``data`` as :meth:`to_cache` gave it.

        Raises:
            KeyError, TypeError: ``data`` is not what :meth:`to_cache` writes (the cache then
                falls back to discovery).
        """
        plugins = {p["plugin"]: PluginStatus(**p) for p in data["plugins"]}
        table: dict[tuple[str, str], list[Spec]] = {}
        for row in data["specs"]:
            spec = Spec(*row)
            table.setdefault((spec.kind, spec.name), []).append(spec)
        self.plugins, self._table = plugins, table

    def _discover(self) -> None:
        from quadriga.registry.probe import ImportRecord, module_files, probe  # not on the cached path

        pm = self._pm
        seconds = import_timeout()
        by_name: dict[str, list[Any]] = {}
        for ep in md.entry_points(group=ENTRY_POINT_GROUP):
            same = by_name.setdefault(ep.name, [])
            dist = ep.dist.name if ep.dist is not None else "?"
            if all((normalize_name(_dist_of(e)), e.value) != (normalize_name(dist), ep.value) for e in same):
                same.append(ep)  # the same distribution found twice on sys.path is one plugin
        to_load: list[tuple[Any, PluginStatus, str]] = []
        for name, eps in by_name.items():
            if len(eps) > 1:
                self._record_duplicate(name, eps)
                continue
            ep = eps[0]
            dist = _dist_of(ep)
            status = PluginStatus(
                ep.name, dist, version=ep.dist.version if ep.dist is not None else "?", entry_point=ep.value
            )
            self.plugins[ep.name] = status
            if normalize_name(ep.name) in self.disabled or normalize_name(dist) in self.disabled:
                pm.set_blocked(ep.name)
                status.status = "disabled"
                continue
            to_load.append((ep, status, ImportRecord.key(dist, status.version, ep.name, ep.value)))
        # a plugin not known to import cleanly is tried in a child first: os._exit cannot be caught
        record = ImportRecord()
        unknown = [(e.name, e.value, s.distribution) for e, s, k in to_load if not record.known(k)]
        probed = probe(unknown, seconds)
        for ep, status, key in to_load:
            outcome = probed.get(ep.name)
            if outcome is not None and outcome.state != "ok":  # ended the child, or hung
                status.status, status.stage, status.error = "broken", "import", outcome.error
                continue
            try:
                with _import_deadline(ep.name, seconds):
                    module = ep.load()
            except KeyboardInterrupt as exc:  # a plugin that hangs at import: say which one
                raise PluginImportInterrupted(ep.name, ep.value, status.distribution) from exc
            except BaseException as exc:  # sys.exit(), GeneratorExit, ... at import break that plugin only
                self._record_broken(status, "import", exc)
                continue
            record.remember(key, module_files(ep.value))
            try:
                pm.register(module, name=ep.name)
            except (Exception, SystemExit) as exc:
                self._record_broken(status, "register", exc)
        record.save()
        for name, obj in self._extra.items():
            status = PluginStatus(name, name, entry_point=repr(obj))
            self.plugins[name] = status
            if normalize_name(name) in self.disabled:
                status.status = "disabled"
                continue
            pm.register(obj, name=name)
        for impl in pm.hook.quadriga_register.get_hookimpls():
            name = impl.plugin_name
            status = self.plugins.get(name) or PluginStatus(name, name)
            try:
                impl.function(registry=PluginRegistrar(self, name, status.distribution))
            except (Exception, SystemExit) as exc:
                self._record_broken(status, "register", exc)
                self._drop_plugin(name)
        known = {normalize_name(n) for n in self.plugins} | {
            normalize_name(s.distribution) for s in self.plugins.values()
        }
        for given, origin in self._disable_given:
            if normalize_name(given) not in known:
                names = sorted({s.distribution for s in self.plugins.values()} | set(self.plugins))
                dists = sorted({s.distribution for s in self.plugins.values()})
                self._unknown_disabled = ConfigError(
                    f"no plugin or distribution named '{given}' is installed, so it cannot be disabled "
                    f"(from {origin}).{suggest(normalize_name(given), names)} "
                    f"Installed distributions: {', '.join(dists)} (`quadriga doctor` lists them).",
                    key="--disable" if origin == "--disable" else None,
                    file=None if origin == "--disable" else "QUADRIGA_DISABLE",
                )
                raise self._unknown_disabled

    def _record_duplicate(self, name: str, eps: list[Any]) -> None:
        """Two distributions declare the entry point ``name``: neither is loaded, both are reported."""
        who = " and ".join(f"'{_dist_of(e)}' ({e.value})" for e in eps)
        for i, ep in enumerate(eps):
            status = PluginStatus(
                name if i == 0 else f"{name} ({_dist_of(ep)})",
                _dist_of(ep),
                version=ep.dist.version if ep.dist is not None else "?",
                entry_point=ep.value,
                status="broken",
                stage="discovery",
                error=f"the entry-point name '{name}' is declared by {who}; neither is loaded. "
                "Uninstall one of them, or rename its entry point",
            )
            self.plugins[status.plugin] = status

    @staticmethod
    def _record_broken(status: PluginStatus, stage: str, exc: BaseException) -> None:
        status.status, status.stage = "broken", stage
        status.error = f"{type(exc).__name__}: {exc}"
        status.traceback = "".join(traceback.format_exception(exc))

    def _drop_plugin(self, name: str) -> None:
        """Remove what a plugin registered before its hook raised."""
        self._targets = None
        for key in list(self._table):
            self._table[key] = [s for s in self._table[key] if s.plugin != name]
            if not self._table[key]:
                del self._table[key]

    def _add(self, spec: Spec) -> None:
        self._targets = None
        self._table.setdefault((spec.kind, spec.name), []).append(spec)

    # ----------------------------------------------------------------- queries
    @property
    def broken(self) -> list[PluginStatus]:
        """The plugins that failed to import or to register, in discovery order."""
        self.load()
        return [s for s in self.plugins.values() if s.status == "broken"]

    def specs(self, kind: str | None = None) -> list[Spec]:
        """Every spec without a conflict (of one kind of :data:`SPEC_KINDS`), sorted by kind and name."""
        self.load()
        found = [v[0] for (k, _), v in self._table.items() if len(v) == 1 and kind in (None, k)]
        return sorted(found, key=lambda s: (SPEC_KINDS.index(s.kind), s.name))

    def components(self, kind: str | None = None) -> list[Spec]:
        """All registered components (of one kind), sorted by kind and name."""
        return [s for s in self.specs(kind) if s.kind in KINDS]

    def component_of(self, target: str) -> Spec | None:
        """The component registered for ``target`` (``"module:Class"``), ``None`` when there is none.

        The first of :meth:`components` with that target (several: the first by kind and name),
        found without sorting them all.
        """
        self.load()
        if self._targets is None or self._targets[0] is not self._table:
            self._targets = (self._table, self._by_target())
        return self._targets[1].get(target)

    def _by_target(self) -> dict[str, Spec]:
        """``{target: the component registered for it}`` over the whole table, for :meth:`component_of`.

        Built once per table (a new table, or one changed by :meth:`_add` or :meth:`_drop_plugin`,
        builds it again) instead of scanning every spec at each call.
        """
        out: dict[str, Spec] = {}
        for same in self._table.values():
            spec = same[0]
            if len(same) != 1 or spec.kind not in KINDS:
                continue
            known = out.get(spec.target)
            if known is None or (SPEC_KINDS.index(spec.kind), spec.name) < (
                SPEC_KINDS.index(known.kind),
                known.name,
            ):
                out[spec.target] = spec
        return out

    @property
    def conflicts(self) -> dict[tuple[str, str], list[Spec]]:
        """``{(kind, name): [specs]}`` registered by more than one plugin."""
        self.load()
        return {key: list(specs) for key, specs in self._table.items() if len(specs) > 1}

    def pipelines(self) -> list[Spec]:
        """All ready pipelines, sorted by name."""
        return self.specs("pipeline")

    def claims(self) -> list[Spec]:
        """All claims, sorted by distribution and name."""
        return sorted(self.specs("claim"), key=lambda s: (s.distribution, s.name))

    def _lookup(self, kind: str, name: str) -> Spec | None:
        """The one spec of ``(kind, name)``, ``None`` when there is none.

        Raises:
            DuplicateComponentError: two plugins registered it.
        """
        specs = self._table.get((kind, name), [])
        if len(specs) > 1:
            who = " and ".join(f"'{s.distribution}' (plugin '{s.plugin}')" for s in specs)
            raise DuplicateComponentError(
                f"{kind} '{name}' is registered by both {who}. Uninstall one of them, or disable one "
                f"with --disable PLUGIN or QUADRIGA_DISABLE=PLUGIN."
            )
        return specs[0] if specs else None

    def _broken_note(self, what: str) -> str:
        broken = [b.plugin for b in self.broken]
        disabled = sorted({s.distribution for s in self.plugins.values() if s.status == "disabled"})
        note = (
            f" Note: plugin(s) {', '.join(broken)} failed to load{what} (see `quadriga doctor`)."
            if broken
            else ""
        )
        if disabled:
            note += (
                f" Disabled (--disable or QUADRIGA_DISABLE): {', '.join(disabled)}; the name may come "
                "from one of them."
            )
        return note

    def catalogue_note(self, name: str, kinds: Iterable[str] | None = None) -> str:
        """For an error about an unknown ``name``: which catalogued distribution provides it.

        The sentence (:func:`quadriga.catalogue.unknown_name_note`) gives the install command of a
        distribution that is not installed, or says it is disabled or broken; ``""`` when none does.

        Args:
            name: the name that was not found.
            kinds: the kinds it was looked for among (all of :data:`SPEC_KINDS` when ``None``).
        """
        from quadriga.catalogue import unknown_name_note  # read only when a name is unknown

        self.load()
        return unknown_name_note(name, kinds, self.plugins)

    def get(self, name: str, kinds: Iterable[str] | str | None = None) -> Spec:
        """Find a component by name among ``kinds`` (all component kinds when ``None``).

        Raises:
            UnknownComponentError: no such name; the message lists close matches of those kinds.
            DuplicateComponentError: two distributions registered it.
            QuadrigaError: the name exists in several of ``kinds`` (say which with ``kind = ...``).
        """
        self.load()
        kinds = KINDS if kinds is None else ((kinds,) if isinstance(kinds, str) else tuple(kinds))
        found = [spec for spec in (self._lookup(k, name) for k in kinds) if spec is not None]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise QuadrigaError(
                f"'{name}' names a {' and a '.join(s.kind for s in found)}; "
                f'add kind = "{found[0].kind}" (or another) to say which.'
            )
        components = self.components()
        what = "/".join(kinds) if len(kinds) < len(KINDS) else "component"
        hint = suggest(name, [s.name for s in components if s.kind in kinds])
        others = [s for s in components if s.name == name]
        if others:
            article = "an" if others[0].kind[0] in "aeiou" else "a"
            hint += f" ('{name}' is {article} {others[0].kind}, which cannot be used here.)"
        hint += self.catalogue_note(name, kinds) or self._broken_note("")
        if not hint:
            hint = " Run `quadriga list` to see what is installed."
        raise UnknownComponentError(f"unknown {what} '{name}'.{hint}")

    def get_pipeline(self, name: str) -> Spec:
        """Find a ready pipeline by name.

        Raises:
            UnknownComponentError: with close matches.
            DuplicateComponentError: when two distributions ship it.
        """
        self.load()
        spec = self._lookup("pipeline", name)
        if spec is not None:
            return spec
        hint = suggest(name, [p.name for p in self.pipelines()]) or " Run `quadriga list --kind pipeline`."
        missing = ", so their pipelines are missing"
        hint += self.catalogue_note(name, ("pipeline",)) or self._broken_note(missing)
        raise UnknownComponentError(f"no pipeline file and no registered pipeline named '{name}'.{hint}")

    def load_class(self, spec: Spec) -> Any:
        """Import the object ``spec.target`` names: a component class, or a claim.

        Returns ``Any`` because a target is only known to be a class once imported.

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

    def load_claim(self, spec: Spec) -> Any:
        """Import the claim of ``spec`` (errors as for :meth:`load_class`)."""
        return self.load_class(spec)

    def call_hook(self, name: str, **kwargs: Any) -> list[str]:
        """Call a lifecycle hook on every plugin; return warnings for the ones that raised.

        Each implementation receives only the keyword arguments it declares (as in pluggy).
        """
        self.load()
        warnings = []
        for impl in getattr(self.pm.hook, name).get_hookimpls():
            try:
                impl.function(**{k: v for k, v in kwargs.items() if k in impl.argnames})
            except Exception as exc:
                warnings.append(f"plugin '{impl.plugin_name}' raised in {name}: {type(exc).__name__}: {exc}")
        return warnings


_DEFAULT: Registry | None = None
_DEFAULT_KEY: tuple[frozenset[str], str] | None = None


class PluginImportTimeout(TimeoutError):
    """A plugin module's import did not finish within ``QUADRIGA_IMPORT_TIMEOUT`` seconds (default 60)."""


#: the longest import deadline (about 116 days): ``inf`` or a larger value means this one, since the
#: timer behind the deadline (``signal.setitimer``) overflows somewhere above 1e9 s
MAX_IMPORT_TIMEOUT = 1e7


def import_timeout() -> float:
    """Seconds a plugin module's import may take: ``QUADRIGA_IMPORT_TIMEOUT``, default 60.

    ``inf`` (or anything above :data:`MAX_IMPORT_TIMEOUT`) is :data:`MAX_IMPORT_TIMEOUT`: no
    deadline in practice.

    Raises:
        ConfigError: it is not a positive number of seconds.
    """
    raw = os.environ.get("QUADRIGA_IMPORT_TIMEOUT", "60")
    try:
        seconds = float(raw)
        if not seconds > 0:
            raise ValueError
    except ValueError:
        raise ConfigError(
            f"QUADRIGA_IMPORT_TIMEOUT must be a positive number of seconds, got {raw!r}.",
            key="QUADRIGA_IMPORT_TIMEOUT",
        ) from None
    return min(seconds, MAX_IMPORT_TIMEOUT)


@contextlib.contextmanager
def _import_deadline(plugin: str, seconds: float) -> Iterator[None]:
    """Raise :class:`PluginImportTimeout` in the block after ``seconds`` (:func:`import_timeout`).

    A plugin that hangs at import (waiting on a lock, a network, an endless loop in Python) is then
    reported broken, and every other plugin still loads. The deadline is a ``SIGALRM`` timer, so it
    applies in the main thread of a POSIX process only (elsewhere the import runs without one); a
    hang inside C code that never returns to Python is not interrupted.

    Raises:
        PluginImportTimeout: the deadline passed.
    """
    import signal
    import threading

    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise PluginImportTimeout(
            f"importing plugin '{plugin}' did not finish within {seconds:g} s (QUADRIGA_IMPORT_TIMEOUT)"
        )

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def get_registry(*, disable: Iterable[str] = (), cache: bool = False) -> Registry:
    """Return the process-wide registry, creating it on first use.

    Args:
        disable: plugins to disable (names in any spelling, :func:`normalize_name`); a registry is
            made anew whenever this set or ``QUADRIGA_DISABLE`` differs from the current one's.
        cache: when the registry is created, let it reuse a stored discovery
            (:mod:`quadriga.registry.cache`; the command line's default, off with ``--no-cache``).

    Raises:
        ConfigError: (on first use) a disabled name that no installed plugin has.
    """
    global _DEFAULT, _DEFAULT_KEY
    key = (frozenset(normalize_name(d) for d in disable if d.strip()), os.environ.get("QUADRIGA_DISABLE", ""))
    if _DEFAULT is None or key != _DEFAULT_KEY:
        _DEFAULT, _DEFAULT_KEY = Registry(disable=disable, use_cache=cache), key
    return _DEFAULT


def reset_registry() -> None:
    """Forget the process-wide registry (the next :func:`get_registry` rediscovers plugins)."""
    global _DEFAULT, _DEFAULT_KEY
    _DEFAULT, _DEFAULT_KEY = None, None
