"""The registry's records: names, kinds, :class:`Spec`, :class:`PluginStatus`, :class:`PluginRegistrar`.

:class:`PluginRegistrar` is what a plugin's ``quadriga_register`` hook fills.

Nothing here imports a plugin or reads entry points; discovery lives in :mod:`quadriga.registry`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

import attrs

from quadriga.errors import QuadrigaError, suggest

if TYPE_CHECKING:
    from quadriga.registry import Registry

ENTRY_POINT_GROUP = "quadriga"
#: the kinds of component (interfaces and tasks)
KINDS = ("sampler", "learner", "estimator", "evaluator", "target", "dataset", "environment")
#: every kind the registry holds: the components' kinds, ready pipelines and paper claims
SPEC_KINDS = (*KINDS, "pipeline", "claim")
#: a registered name: lowercase letters and digits in words joined by single dashes (``"mala"``, ``"lr-qr"``)
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


def _as_tuple(tags: Iterable[str]) -> tuple[str, ...]:
    """A spec's tags as a tuple (a restored cache gives lists)."""
    return tuple(tags)


@attrs.frozen
class Spec:
    """A registered component, ready pipeline or claim, not yet imported.

    Attributes:
        kind: one of :data:`SPEC_KINDS`.
        name: the name pipelines use (``use = "mala"``), or ``quadriga run NAME`` / ``quadriga verify NAME``.
        target: ``"module:attr"`` of the component class or claim; for a pipeline
            ``"package:relative/path.toml"`` inside the plugin's package.
        summary: one line.
        paper: the reference (authors, year, equation or algorithm number).
        plugin: the entry-point name of the plugin that registered it.
        distribution: that plugin's distribution name, e.g. ``"quadriga-std"``.
        tags: the component's capability tags (:mod:`quadriga.tags`), sorted; ``()`` for pipelines
            and claims.
    """

    kind: str
    name: str
    target: str
    summary: str = ""
    paper: str = ""
    plugin: str = ""
    distribution: str = ""
    tags: tuple[str, ...] = attrs.field(default=(), converter=_as_tuple)

    @property
    def resource(self) -> str:
        """A pipeline's ``"package:path.toml"`` (the same string as :attr:`target`)."""
        return self.target

    def read_text(self) -> str:
        """Return the TOML text of a pipeline spec (``importlib.resources``).

        Raises:
            QuadrigaError: the spec is not a pipeline.
        """
        import importlib.resources as resources

        if self.kind != "pipeline":
            raise QuadrigaError(f"{self.kind} '{self.name}' is not a pipeline; it has no TOML text.")
        package, _, rel = self.target.partition(":")
        node = resources.files(package)
        for part in rel.split("/"):
            node = node / part
        return node.read_text(encoding="utf-8")


PluginState = Literal["ok", "broken", "disabled"]


@attrs.define
class PluginStatus:
    """What the registry knows about one plugin (an entry point of the ``quadriga`` group).

    Attributes:
        plugin: the entry-point name.
        distribution: the distribution name (``"?"`` when unknown).
        version: the distribution's version (``""`` for plugins given as objects).
        entry_point: the entry point's value (``"module"``), or the object's repr.
        status: ``"ok"``, ``"broken"`` or ``"disabled"``.
        stage: for a broken plugin, where it failed: ``"import"`` or ``"register"``.
        error: for a broken plugin, ``"ExceptionType: message"``.
        traceback: for a broken plugin, the formatted traceback.
    """

    plugin: str
    distribution: str
    version: str = ""
    entry_point: str = ""
    status: PluginState = "ok"
    stage: str = ""
    error: str = ""
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

    def _spec(
        self, kind: str, name: str, target: str, summary: str, paper: str, tags: Iterable[str] = ()
    ) -> None:
        where = f"plugin '{self.plugin}' ({self.distribution})"
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            raise QuadrigaError(
                f"{where}: {kind} name {name!r} is not valid; use lowercase letters and digits in words "
                "joined by single dashes, starting with a letter (e.g. 'my-sampler')."
            )
        _check_target(target, f"{where}, {kind} '{name}'")
        checked: tuple[str, ...] = ()
        if tags:
            from quadriga.tags import check_tags  # only when tags are declared (a restored cache has them)

            checked = check_tags(tags, f"{where}, {kind} '{name}'")
        spec = Spec(kind, name, target, summary, paper, self.plugin, self.distribution, checked)
        self._registry._add(spec)

    def add(
        self,
        kind: str,
        name: str,
        target: str,
        *,
        summary: str = "",
        paper: str = "",
        tags: Iterable[str] = (),
    ) -> None:
        """Register a component lazily.

        Args:
            kind: one of ``sampler, learner, estimator, evaluator, target, dataset, environment``.
            name: lowercase words and digits joined by dashes, e.g. ``"mala"`` (:data:`NAME_PATTERN`).
            target: ``"module:Class"``, imported only when the component is built.
            summary: one line shown by ``quadriga list``.
            paper: reference shown by ``quadriga info``.
            tags: capability tags from :data:`quadriga.tags.TAGS` (``("mcmc", "needs-score")``),
                found by ``quadriga list --where TAG``.

        Raises:
            QuadrigaError: for an unknown kind, a malformed name, a malformed target or an unknown
                tag; the message names the plugin (which is then reported as broken).
        """
        if kind not in KINDS:
            raise QuadrigaError(
                f"plugin '{self.plugin}': unknown kind '{kind}' for '{name}'; "
                f"use one of {', '.join(KINDS)}.{suggest(kind, KINDS)}"
            )
        self._spec(kind, name, target, summary, paper, tags)

    def add_pipeline(self, name: str, resource: str, *, summary: str = "") -> None:
        """Register one ready pipeline file ``"package:path/in/package.toml"`` by name.

        A plugin registers its ``pipelines/*.toml`` with one :meth:`add_pipelines` call instead;
        this is for a file kept elsewhere in the package.

        Raises:
            QuadrigaError: a malformed name or resource, naming the plugin.
        """
        self._spec("pipeline", name, resource, summary, "")

    def add_pipelines(self, package: str, folder: str = "pipelines") -> list[str]:
        """Register every ``folder/*.toml`` inside ``package`` as a ready pipeline named by its file.

        A plugin calls ``registry.add_pipelines(__package__)`` once; a new file is found without
        touching ``plugin.py``. Each file's ``[pipeline] description`` describes it: its first
        paragraph (up to the first blank line, joined into one line) is the summary that
        ``quadriga list`` shows, the rest is for ``quadriga info``. Reading a few small TOML files
        imports nothing heavy.

        Args:
            package: the plugin's package (``__package__`` in its ``plugin.py``).
            folder: the folder of pipeline files inside the package.

        Returns:
            The registered names, sorted.

        Raises:
            QuadrigaError: naming the plugin and the file, when the folder is missing, a file is not
                valid TOML, its ``[pipeline] name`` differs from the file name, or its name is malformed.
        """
        import importlib.resources as resources

        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib

        where = f"plugin '{self.plugin}' ({self.distribution})"
        try:
            files = sorted(
                (f for f in resources.files(package).joinpath(folder).iterdir() if f.name.endswith(".toml")),
                key=lambda f: f.name,
            )
        except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError) as exc:
            raise QuadrigaError(
                f"{where}: no pipeline folder '{folder}' in package '{package}' ({exc})."
            ) from None
        names = []
        for file in files:
            name = file.name[: -len(".toml")]
            try:
                meta = tomllib.loads(file.read_text(encoding="utf-8")).get("pipeline", {})
            except tomllib.TOMLDecodeError as exc:
                raise QuadrigaError(
                    f"{where}: {package}:{folder}/{file.name} is not valid TOML: {exc}"
                ) from None
            declared = meta.get("name", name) if isinstance(meta, dict) else name
            if declared != name:
                raise QuadrigaError(
                    f"{where}: {folder}/{file.name} declares [pipeline] name = {declared!r}; "
                    f"a registered pipeline is named by its file: write name = {name!r} or rename the file."
                )
            description = meta.get("description", "") if isinstance(meta, dict) else ""
            summary = " ".join(str(description).strip().split("\n\n", 1)[0].split())
            self._spec("pipeline", name, f"{package}:{folder}/{file.name}", summary, "")
            names.append(name)
        return names

    def add_package(self, package: str, file: str = "plugin.toml", pipelines: str = "pipelines") -> list[str]:
        """Register what ``package``'s ``plugin.toml`` declares, and its ``pipelines/*.toml``, in one call.

        ``quadriga_register`` is then one line, ``registry.add_package(__package__)``: components and
        claims are data, declared once each. An optional ``[plugin] paper`` stands for ``{paper}``
        in every entry's ``paper``; then a table per kind (a component kind or ``claim``) holds a
        table per registered name, registered in file order (``tags``: components only)::

            [plugin]
            paper = "Hu et al. 2026, Score-Repellent Monte Carlo, arXiv 2604.22948"

            [sampler.srmc]
            target = "sampler:SRMC"          # "module:attr" inside the package
            summary = "Score-Repellent Monte Carlo around any MCMC kernel"
            paper = "{paper}, Algorithm 1"
            tags = ["mcmc"]

        The pipeline folder, when the package has one, is read as :meth:`add_pipelines`.

        Args:
            package: the plugin's package (``__package__`` in its ``plugin.py``).
            file: the declaration file inside the package.
            pipelines: the folder of pipeline files inside the package (skipped when absent).

        Returns:
            The registered names (components and claims, then pipelines).

        Raises:
            QuadrigaError: naming the plugin, file and entry: a missing file, invalid TOML, an unknown
                kind or key, no ``target``, a malformed name, target or tag.
        """
        import importlib.resources as resources

        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib
        where = f"plugin '{self.plugin}' ({self.distribution}), {package}:{file}"
        root = resources.files(package)
        try:
            data = tomllib.loads(root.joinpath(file).read_text(encoding="utf-8"))
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise QuadrigaError(f"{where}: no such file ({exc}).") from None
        except tomllib.TOMLDecodeError as exc:
            raise QuadrigaError(f"{where}: not valid TOML: {exc}") from None
        paper = str(data.pop("plugin", {}).get("paper", ""))
        names = []
        for kind, entries in data.items():
            if kind not in (*KINDS, "claim") or not isinstance(entries, dict):
                kinds = (*KINDS, "claim")
                raise QuadrigaError(
                    f"{where}: [{kind}] is not a kind; use [plugin] or one of {', '.join(kinds)}."
                    f"{suggest(kind, kinds)}"
                )
            for name, entry in entries.items():
                self._declared(kind, name, entry, package, paper, where)
                names.append(name)
        if root.joinpath(pipelines).is_dir():
            names += self.add_pipelines(package, pipelines)
        return names

    def _declared(self, kind: str, name: str, entry: Any, package: str, paper: str, where: str) -> None:
        """Register one ``[kind.name]`` table of a ``plugin.toml`` (see :meth:`add_package`)."""
        keys = ("target", "summary", "paper") if kind == "claim" else ("target", "summary", "paper", "tags")
        unknown = sorted(set(entry) - set(keys)) if isinstance(entry, dict) else []
        if not isinstance(entry, dict) or unknown or "target" not in entry:
            what = f"unknown key(s) {', '.join(unknown)}" if unknown else "no target"
            what = what if isinstance(entry, dict) else "no table"
            raise QuadrigaError(f"{where}: [{kind}.{name}] has {what}; its keys: {', '.join(keys)}.")
        target = str(entry["target"])
        if not target.startswith(f"{package}."):
            target = f"{package}.{target}"
        text = str(entry.get("paper", "")).replace("{paper}", paper)
        self._spec(kind, name, target, str(entry.get("summary", "")), text, entry.get("tags", ()))

    def add_claim(self, name: str, target: str, *, summary: str = "", paper: str = "") -> None:
        """Register a paper claim: ``target`` is ``"module:attr"`` (see :mod:`quadriga.claims`).

        Raises:
            QuadrigaError: a malformed name or target, naming the plugin.
        """
        self._spec("claim", name, target, summary, paper)


def normalize_name(name: str) -> str:
    """A plugin or distribution name as PEP 503 compares them: ``Quadriga_Std`` -> ``quadriga-std``."""
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def _dist_of(ep: Any) -> str:
    return ep.dist.name if ep.dist is not None else "?"
