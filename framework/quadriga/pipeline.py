"""Pipelines: TOML files composed by name, checked whole before anything runs.

A pipeline has one ``[pipeline]`` table (``name``, ``seed``, ``description``),
``[task.NAME]`` tables (targets, datasets, environments) and ``[stage.NAME]``
tables, each with ``use`` (a registered name), optional ``kind`` (to pick between
an estimator and an evaluator of the same name), ``inputs`` (stages only:
``{argument = "node"}`` or ``{argument = ["node", ...]}``) and the component's
parameters. :func:`load_pipeline` parses, applies ``--set`` overrides, builds every
component and checks names, parameters, types, inputs and cycles, raising a
:class:`~quadriga.errors.ConfigError` that names the file, table and key.
A pipeline file can only name registered components: nothing in it is imported
or evaluated.
"""

from __future__ import annotations

import graphlib
import inspect
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from quadriga.components import build_component, component_config
from quadriga.errors import ConfigError, QuadrigaError, suggest
from quadriga.expansion import EXPANDED_RE, expand_sections
from quadriga.interfaces import INTERFACES, TASK_KINDS
from quadriga.seeding import derive_seed

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["NAME_RE", "Node", "Pipeline", "load_pipeline", "parse_override", "read_source"]

NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
_RESERVED = {"use", "kind", "inputs", "source", "replicate"}
_TOP = ("pipeline", "task", "stage")
_METHOD = {"sampler": "sample", "learner": "fit", "estimator": "estimate", "evaluator": "evaluate"}
_INJECTED = {"generator", "progress", "self"}


@attrs.define(eq=False)
class Node:
    """One task or stage of a pipeline, built and checked.

    Attributes:
        name: the table name (``"mala"`` for ``[stage.mala]``).
        section: ``"task"`` or ``"stage"``.
        use: the registered component name.
        kind: its registry kind.
        component: the built component instance.
        inputs: ``{argument: node name or list of node names}`` (stages only).
        config: the resolved parameters, every default filled in.
        source: the table it was expanded from (``"mala"`` for ``mala[step_size=0.1][2]``;
            its own name when not expanded).
        replicate: the replicate index ``i`` of a repeated table, else ``None``.
    """

    name: str
    section: str
    use: str
    kind: str
    component: Any
    inputs: dict[str, Any] = attrs.field(factory=dict)
    config: dict[str, Any] = attrs.field(factory=dict)
    source: str = ""
    replicate: int | None = None

    def __attrs_post_init__(self) -> None:
        self.source = self.source or self.name

    @property
    def table(self) -> str:
        """``"stage.NAME"`` or ``"task.NAME"``."""
        return f"{self.section}.{self.name}"

    @property
    def seed_key(self) -> str:
        """What the node's seed is derived from, with the root seed.

        ``"stage.NAME"`` for a plain table, ``"stage.SOURCE"`` for a matrix point (the points of
        one table share a seed), ``"stage.KIND[i]"`` for replicate ``i`` (replicate ``i`` of every
        repeated stage of one kind shares a seed: common random numbers across arms).
        """
        if self.replicate is not None:
            return f"{self.section}.{self.kind}[{self.replicate}]"
        return f"{self.section}.{self.source}"

    @property
    def output_type(self) -> str:
        """What the node produces: a task's kind name or the stage's artifact type."""
        return type(self.component).output_type

    def method(self) -> Any:
        """The interface method a stage calls (``sample``, ``fit``, ...)."""
        return getattr(self.component, _METHOD[self.kind])


@attrs.define(eq=False)
class Pipeline:
    """A checked pipeline, ready to run.

    Attributes:
        name: from ``[pipeline] name`` (or the file's stem).
        seed: the root seed.
        description: free text.
        file: where it was read from (a path, ``"<registered: NAME>"`` or ``"<dict>"``).
        tasks: task nodes in file order.
        stages: stage nodes in execution order (a topological order, file order among ties).
    """

    name: str
    seed: int
    description: str
    file: str
    tasks: dict[str, Node]
    stages: dict[str, Node]

    def seed_of(self, node: Node) -> int:
        """The seed of a task or stage: ``derive_seed(root seed, node.seed_key)``."""
        return derive_seed(self.seed, node.seed_key)

    def seeds(self) -> dict[str, int]:
        """``{"task.NAME" or "stage.NAME": seed}`` of every node (recorded in ``manifest.json``)."""
        return {n.table: self.seed_of(n) for n in (*self.tasks.values(), *self.stages.values())}

    def resolved(self) -> dict[str, Any]:
        """The resolved configuration as a TOML-ready dict (what a run saves as ``pipeline.toml``)."""
        out: dict[str, Any] = {"pipeline": {"name": self.name, "seed": self.seed}}
        if self.description:
            out["pipeline"]["description"] = self.description
        for section, nodes in (("task", self.tasks), ("stage", self.stages)):
            if nodes:
                out[section] = {}
            for node in nodes.values():
                table: dict[str, Any] = {"use": node.use}
                if node.section == "stage":
                    table["kind"] = node.kind
                    table["inputs"] = node.inputs
                if node.source != node.name:
                    table["source"] = node.source
                if node.replicate is not None:
                    table["replicate"] = node.replicate
                table.update(node.config)
                out[section][node.name] = table
        return out

    def describe(self) -> list[tuple[str, str, str, str]]:
        """Rows ``(table, component, kind, inputs)`` for printing the pipeline before it runs."""
        rows = [(n.table, n.use, n.kind, "") for n in self.tasks.values()]
        for n in self.stages.values():
            ins = ", ".join(
                f"{k}={v if isinstance(v, str) else '[' + ', '.join(v) + ']'}" for k, v in n.inputs.items()
            )
            rows.append((n.table, n.use, n.kind, ins))
        return rows


def read_source(source: str | Path | Mapping[str, Any], registry: Any) -> tuple[dict[str, Any], str]:
    """Read a pipeline from a path, a registered name, or a dict.

    Returns:
        ``(data, file)`` where ``file`` names the origin for error messages.

    Raises:
        ConfigError: bad TOML (with line and column), an empty file.
        UnknownComponentError: neither a file nor a registered pipeline (close matches suggested).
    """
    if isinstance(source, Mapping):
        return _copy(source), "<dict>"
    text: str
    path = Path(source)
    if path.suffix == ".toml" or path.exists() or "/" in str(source):
        if not path.is_file():
            raise ConfigError(f"pipeline file '{source}' does not exist.")
        text, file = path.read_text(encoding="utf-8"), str(path)
    else:
        spec = registry.get_pipeline(str(source))
        text, file = spec.read_text(), f"{spec.name} (from {spec.distribution})"
    if not text.strip():
        raise ConfigError(
            "the file is empty. A pipeline needs a [pipeline] table and at least one "
            "[stage.NAME] table; see `quadriga run --help` for an example.",
            file=file,
        )
    try:
        return tomllib.loads(text), file
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        dup = re.search(r"Cannot (?:declare|overwrite).*?\('(\w+)', '([^']+)'\)", msg)
        if dup:
            raise ConfigError(
                f"[{dup.group(1)}.{dup.group(2)}] is defined twice ({msg}). Rename one of them; "
                "every task and stage needs its own name.",
                file=file,
            ) from None
        raise ConfigError(
            f"invalid TOML: {msg}. Check quoting, '=' and brackets on that line.", file=file
        ) from None


def _copy(data: Any) -> Any:
    if isinstance(data, Mapping):
        return {k: _copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_copy(v) for v in data]
    return data


def parse_override(text: str) -> tuple[list[str], Any]:
    """Parse ``"stage.srmc.alpha=2"`` into ``(["stage", "srmc", "alpha"], 2)``.

    The value is parsed as a TOML value (``2``, ``0.5``, ``true``, ``[1, 2]``,
    ``{ use = "mala" }``, ``"text"``); a bare word that is not valid TOML is taken as a string.

    Raises:
        ConfigError: no ``=``, or an empty key.
    """
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"'{text}' is not KEY=VALUE (e.g. --set stage.srmc.alpha=2).", file="--set")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    return key.split("."), value


def _apply_overrides(data: dict[str, Any], overrides: Iterable[str]) -> set[tuple[str, str]]:
    touched: set[tuple[str, str]] = set()
    for text in overrides:
        path, value = parse_override(text)
        if path[0] not in _TOP:
            raise ConfigError(
                f"'{'.'.join(path)}' must start with pipeline., task. or stage.{suggest(path[0], _TOP)}",
                file="--set",
            )
        if path[0] == "pipeline":
            if len(path) != 2:
                raise ConfigError("use --set pipeline.KEY=VALUE (e.g. pipeline.seed=3).", file="--set")
            data.setdefault("pipeline", {})[path[1]] = value
            continue
        if len(path) < 3:
            raise ConfigError(f"'{'.'.join(path)}' must be {path[0]}.NAME.KEY=VALUE.", file="--set")
        section = data.get(path[0], {})
        if path[1] not in section:
            raise ConfigError(
                f"there is no [{path[0]}.{path[1]}] in this pipeline.{suggest(path[1], section)} "
                f"Tables: {', '.join(f'{path[0]}.{n}' for n in section) or 'none'}.",
                file="--set",
                table=f"{path[0]}.{path[1]}",
            )
        node = section[path[1]]
        for part in path[2:-1]:
            if not isinstance(node.get(part), dict):
                node[part] = {} if part not in node else {"use": node[part]}
            node = node[part]
        node[path[-1]] = value
        touched.add((f"{path[0]}.{path[1]}", path[2]))
    return touched


def load_pipeline(
    source: str | Path | Mapping[str, Any],
    registry: Any,
    *,
    overrides: Iterable[str] = (),
    seed: int | None = None,
) -> Pipeline:
    """Read, override, build and check a pipeline.

    Args:
        source: a path to a TOML file, a registered pipeline name, or a dict.
        registry: the :class:`~quadriga.registry.Registry`.
        overrides: ``--set`` strings.
        seed: replaces ``[pipeline] seed`` when given.

    Returns:
        A :class:`Pipeline` whose components are built and whose inputs are checked.

    Raises:
        ConfigError: anything wrong, naming the file, table and key.
    """
    data, file = read_source(source, registry)
    touched = _apply_overrides(data, overrides)

    origin: dict[str, tuple[str, str]] = {}
    varied: dict[str, set[str]] = {}

    def err(msg: str, table: str | None = None, key: str | None = None) -> ConfigError:
        if table in origin:  # an expanded table: name its source (and the matrix key it varies)
            table, name = origin[table]
            msg = f"{msg} (in its expansion '{name}')"
            if key in varied.get(table, ()):
                key = f"matrix.{key}"
        shown = "command line (--set/--grid)" if table and (table, key) in touched else file
        return ConfigError(msg, file=shown, table=table, key=key)

    for top in data:
        if top not in _TOP:
            raise err(
                f"unknown top-level table '{top}'.{suggest(top, _TOP)} A pipeline has [pipeline], "
                "[task.NAME] and [stage.NAME] tables.",
                table=top,
            )
    meta = data.get("pipeline", {})
    if not isinstance(meta, dict):
        raise err("'pipeline' must be a table.", table="pipeline")
    for key in meta:
        if key not in ("name", "seed", "description"):
            raise err(
                f"unknown key.{suggest(key, ('name', 'seed', 'description'))} [pipeline] takes name, "
                "seed and description.",
                table="pipeline",
                key=key,
            )
    name = meta.get("name", Path(file).stem if file.endswith(".toml") else "pipeline")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise err(
            "the name must start with a letter and use only letters, digits, '.', '_' and '-' "
            "(it becomes a directory name).",
            table="pipeline",
            key="name",
        )
    root_seed = meta.get("seed", 0) if seed is None else seed
    if not isinstance(root_seed, int) or isinstance(root_seed, bool):
        raise err(f"the seed must be an integer, got {root_seed!r}.", table="pipeline", key="seed")
    description = meta.get("description", "")

    sections: dict[str, dict[str, Any]] = {}
    for section in ("task", "stage"):
        tables = data.get(section, {})
        if not isinstance(tables, dict):
            raise err(f"'{section}' must hold tables such as [{section}.NAME].", table=section)
        sections[section] = tables
    if not sections["stage"]:
        raise err("the pipeline has no [stage.NAME] table; add at least one stage.")
    for section, tables in sections.items():
        for node_name, table in tables.items():
            where = f"{section}.{node_name}"
            expanded = isinstance(table, dict) and "source" in table and EXPANDED_RE.match(node_name)
            if not NAME_RE.match(node_name) and not expanded:
                raise err(
                    "names must start with a letter and use only letters, digits, '.', '_' and '-'.",
                    table=where,
                )
            if not isinstance(table, dict):
                raise err("must be a table with 'use = \"name\"'.", table=where)
            if section == "task" and "inputs" in table:
                raise err("tasks take no inputs; move this table to [stage.NAME].", table=where, key="inputs")
    varied = {
        f"{section}.{n}": set(t["matrix"])
        for section, tables in sections.items()
        for n, t in tables.items()
        if isinstance(t.get("matrix"), dict)
    }
    sections = expand_sections(sections, err)
    seen: dict[str, str] = {}
    for section, tables in sections.items():
        for node_name, table in tables.items():
            where = f"{section}.{node_name}"
            if "source" in table:
                origin[where] = (f"{section}.{table['source']}", node_name)
                _check_expanded(table, where, err)
            if node_name in seen:
                raise err(
                    f"'{node_name}' is both [{seen[node_name]}] and [{where}]; names must be unique.",
                    table=where,
                )
            seen[node_name] = where
            if "use" not in table:
                raise err(
                    "missing 'use' (the registered component to build, e.g. use = \"mala\").",
                    table=where,
                    key="use",
                )

    tasks = {n: _build_node(registry, "task", n, t, file, err) for n, t in sections["task"].items()}
    stages_unordered = {
        n: _build_node(registry, "stage", n, t, file, err) for n, t in sections["stage"].items()
    }
    nodes = {**tasks, **stages_unordered}
    order = _topological(stages_unordered, err)
    for node in stages_unordered.values():
        _check_inputs(node, nodes, err)
    return Pipeline(name, root_seed, description, file, tasks, {n: stages_unordered[n] for n in order})


def _build_node(registry: Any, section: str, name: str, table: dict[str, Any], file: str, err: Any) -> Node:
    where = f"{section}.{name}"
    params = {k: v for k, v in table.items() if k not in _RESERVED}
    kind = table.get("kind")
    allowed = tuple(TASK_KINDS) if section == "task" else tuple(INTERFACES)
    if kind is not None and kind not in allowed:
        raise err(
            f"kind '{kind}' is not allowed in [{section}.*]; use one of {', '.join(allowed)}."
            f"{suggest(str(kind), allowed)}",
            table=where,
            key="kind",
        )
    kinds = (kind,) if kind else allowed
    try:
        component = build_component(registry, table["use"], params, kinds=kinds, file=file, table=where)
    except ConfigError as exc:
        raise err(exc.reason, table=where, key=exc.key) from None
    except QuadrigaError as exc:
        raise err(str(exc), table=where, key="use") from None
    used_kind = component.__quadriga_use__[0]
    inputs = table.get("inputs", {})
    if section == "stage":
        if not isinstance(inputs, dict):
            raise err('inputs must be a table, e.g. inputs = { target = "gmm" }.', table=where, key="inputs")
        for arg, ref in inputs.items():
            ok = isinstance(ref, str) or (
                isinstance(ref, list) and ref and all(isinstance(r, str) for r in ref)
            )
            if not ok:
                raise err(
                    f"input '{arg}' must name a task or stage, or a list of them; got {ref!r}.",
                    table=where,
                    key=f"inputs.{arg}",
                )
    return Node(
        name,
        section,
        table["use"],
        used_kind,
        component,
        dict(inputs),
        component_config(component, registry),
        source=table.get("source", name),
        replicate=table.get("replicate"),
    )


def _check_expanded(table: dict[str, Any], where: str, err: Any) -> None:
    source, replicate = table["source"], table.get("replicate")
    if not isinstance(source, str) or not NAME_RE.match(source):
        raise err(
            f"'source' must name the table this one was expanded from, got {source!r}.", where, "source"
        )
    if replicate is not None and (
        not isinstance(replicate, int) or isinstance(replicate, bool) or replicate < 0
    ):
        raise err(f"'replicate' must be an integer >= 0, got {replicate!r}.", where, "replicate")


def _check_inputs(node: Node, nodes: dict[str, Node], err: Any) -> None:
    signature = inspect.signature(node.method())
    params = {
        n: p
        for n, p in signature.parameters.items()
        if n not in _INJECTED and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    }
    takes_kwargs = any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())
    required = [n for n, p in params.items() if p.default is inspect.Parameter.empty]
    types = type(node.component).input_types
    for arg, ref in node.inputs.items():
        if arg not in params and not takes_kwargs:
            raise err(
                f"{node.kind} '{node.use}' has no input '{arg}'.{suggest(arg, params)} "
                f"Its inputs: {', '.join(params) or 'none'}.",
                table=node.table,
                key=f"inputs.{arg}",
            )
        for r in [ref] if isinstance(ref, str) else ref:
            if r not in nodes:
                raise err(
                    f"input '{arg}' names '{r}', which is neither a task nor a stage of this pipeline."
                    f"{suggest(r, nodes)} Known: {', '.join(n for n in nodes if n != node.name)}.",
                    table=node.table,
                    key=f"inputs.{arg}",
                )
            if r == node.name:
                raise err(
                    f"stage '{node.name}' cannot take its own output as input.",
                    table=node.table,
                    key=f"inputs.{arg}",
                )
            accepted = types.get(arg)
            produced = nodes[r].output_type
            if accepted and produced not in accepted:
                raise err(
                    f"input '{arg}' gets '{r}', a {produced}, but {node.kind} '{node.use}' accepts "
                    f"{' or '.join(accepted)} there. Point it at a node that produces "
                    f"{' or '.join(accepted)}.",
                    table=node.table,
                    key=f"inputs.{arg}",
                )
    missing = [r for r in required if r not in node.inputs]
    if missing:
        raise err(
            f"missing input '{missing[0]}': {node.kind} '{node.use}' needs "
            f"inputs = {{ {', '.join(f'{m} = ...' for m in required)} }}.",
            table=node.table,
            key="inputs",
        )


def _topological(stages: dict[str, Node], err: Any) -> list[str]:
    """Stage names in an execution order: dependencies first, file order among the ready ones."""
    position = {n: i for i, n in enumerate(stages)}
    sorter: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter()
    for n, s in stages.items():
        refs = [r for ref in s.inputs.values() for r in ([ref] if isinstance(ref, str) else ref)]
        sorter.add(n, *(r for r in refs if r in stages and r != n))
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        cycle = list(reversed(exc.args[1]))
        raise err(
            f"the stages form a cycle: {' -> '.join(cycle)}. A stage can only use stages that do not "
            "depend on it.",
            table=f"stage.{cycle[0]}",
            key="inputs",
        ) from None
    order: list[str] = []
    ready: list[str] = []
    while sorter.is_active():
        ready.extend(sorter.get_ready())
        ready.sort(key=position.__getitem__)
        order.append(ready.pop(0))
        sorter.done(order[-1])
    return order
