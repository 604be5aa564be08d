"""Pipelines: TOML files composed by name, checked whole before anything runs.

A pipeline has one ``[pipeline]`` table (``name``, ``seed``, ``description``),
``[task.NAME]`` tables (targets, datasets, environments) and ``[stage.NAME]``
tables, each with ``use`` (a registered name), optional ``kind`` (to pick between
an estimator and an evaluator of the same name), ``inputs`` (stages only:
``{argument = "node"}`` or ``{argument = ["node", ...]}``) and the component's
parameters (the reserved keys are :data:`quadriga.pipeline_schema.RESERVED`, structured by the
component converter). :func:`load_pipeline` parses, applies ``--set`` overrides, expands
``repeat``/``matrix``, builds every component and checks names, parameters, types, inputs and
cycles, raising a
:class:`~quadriga.errors.ConfigError` that names the file, table and key.
A pipeline file can only name registered components: nothing in it is imported
or evaluated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from quadriga.components import build
from quadriga.errors import ConfigError, QuadrigaError, suggest
from quadriga.expansion import expand_sections, is_expanded, matrix_keys
from quadriga.interfaces import Component, interface_of
from quadriga.pipeline_checks import check_inputs, topological_order
from quadriga.pipeline_schema import (
    DEVICE_RE,
    PipelineMeta,
    StageTable,
    TaskTable,
    split_table,
    structure,
    table_keys,
)
from quadriga.pipeline_source import (
    ORIGIN,
    WRITTEN_BY_EXPANSION,
    apply_overrides,
    parse_override,
    read_source,
)
from quadriga.pipeline_source import TOP as _TOP
from quadriga.seeding import derive_seed
from quadriga.stage_names import NAME_RE, StageName, format_point, name_problem, parse_stage_name

if TYPE_CHECKING:
    from quadriga.registry import Registry

__all__ = ["DEVICE_RE", "NAME_RE", "Node", "Pipeline", "load_pipeline", "parse_override", "read_source"]


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
        point: the matrix point of an expanded table, ``((key, value), ...)`` in matrix order
            (``(("step_size", 0.1),)`` for ``mala[step_size=0.1][2]``); ``()`` without a matrix.
            The values are those the table was built with.
        save: whether the run writes the stage's artifact to disk (``save = false`` keeps it
            in memory only; ``--resume`` then recomputes the stage).
        save_thin: keep every ``save_thin``-th draw of a sampler's ``Samples`` on disk (``1``:
            all); what later stages receive in memory is unchanged. (Not ``thin``: that is a
            parameter of the MCMC samplers, which thins the chain itself.)
    """

    name: str
    section: str
    use: str
    kind: str
    component: Component
    inputs: dict[str, Any] = attrs.field(factory=dict)
    config: dict[str, Any] = attrs.field(factory=dict)
    source: str = ""
    replicate: int | None = None
    point: tuple[tuple[str, Any], ...] = ()
    device: str | None = None
    save: bool = True
    save_thin: int = 1

    def __attrs_post_init__(self) -> None:
        """The source defaults to the name."""
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
    def interface(self) -> type[Component]:
        """The interface class of the component (``Sampler``, ..., or the task kind)."""
        return interface_of(type(self.component))

    @property
    def output_type(self) -> type:
        """What the node produces: a task's own class, or the artifact class of the stage's interface."""
        return type(self.component) if self.section == "task" else self.interface.output_type

    @property
    def stage_name(self) -> StageName:
        """The name as its parts, :class:`~quadriga.stage_names.StageName` ``(source, point, replicate)``."""
        return StageName(self.source, self.point, self.replicate)

    def method(self) -> Any:
        """The bound interface method a stage calls (``interface.method``: ``sample``, ``fit``, ...)."""
        return getattr(self.component, self.interface.method)


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
        device: from ``[pipeline] device`` (``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"mps"``);
            a stage's own ``device`` overrides it.
        notes: what loading changed that the user did not write, one sentence each (a component
            swapped by ``--set stage.NAME.use=...`` and the parameters it dropped); shown before a run.
    """

    name: str
    seed: int
    description: str
    file: str
    tasks: dict[str, Node]
    stages: dict[str, Node]
    device: str = "cpu"
    notes: list[str] = attrs.field(factory=list)

    def device_of(self, node: Node) -> str:
        """The device of a node's generator: its own ``device`` or the pipeline's."""
        return node.device or self.device

    def devices(self) -> dict[str, str]:
        """``{"stage.NAME": device}`` of every stage (recorded in ``manifest.json``)."""
        return {n.table: self.device_of(n) for n in self.stages.values()}

    def seed_of(self, node: Node) -> int:
        """The seed of a task or stage: ``derive_seed(root seed, node.seed_key)``."""
        return derive_seed(self.seed, node.seed_key)

    def seeds(self) -> dict[str, int]:
        """``{"task.NAME" or "stage.NAME": seed}`` of every node (recorded in ``manifest.json``)."""
        return {n.table: self.seed_of(n) for n in (*self.tasks.values(), *self.stages.values())}

    def resolved(self) -> dict[str, Any]:
        """The resolved configuration as a TOML-ready dict (what a run saves as ``pipeline.toml``)."""
        out: dict[str, Any] = {"pipeline": {"name": self.name, "seed": self.seed}}
        if self.device != "cpu":
            out["pipeline"]["device"] = self.device
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
                if node.device is not None:
                    table["device"] = node.device
                if not node.save:
                    table["save"] = False
                if node.save_thin != 1:
                    table["save_thin"] = node.save_thin
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


class _Blame:
    """Builds the :class:`ConfigError` of a pipeline: the file (or the command line) and the table at fault.

    An error in an expanded table names its source table and the expansion; a key a ``matrix``
    varies is shown as ``matrix.KEY``; a key set by ``--set``/``--grid`` names the command line.
    """

    def __init__(self, file: str, touched: set[tuple[str, str]]) -> None:
        self.file, self.touched = file, touched
        self.origin: dict[str, tuple[str, str]] = {}  # "stage.x[a=1]" -> ("stage.x", "x[a=1]")
        self.varied: dict[str, list[str]] = {}  # "stage.x" -> the matrix keys ("a", "inputs.target")

    def __call__(self, msg: str, table: str | None = None, key: str | None = None) -> ConfigError:
        if table in self.origin:  # an expanded table: name its source (and the matrix key it varies)
            table, name = self.origin[table]
            msg = f"{msg} (in its expansion '{name}')"
            if key is not None and any(
                key == v or key.startswith(v + ".") for v in self.varied.get(table, ())
            ):
                key = f"matrix.{key}"
        shown = ORIGIN if table and (table, key) in self.touched else self.file
        return ConfigError(msg, file=shown, table=table, key=key)

    def expanded(self, sections: dict[str, dict[str, Any]]) -> None:
        """Remember where each expanded table came from (its ``source``)."""
        for section, tables in sections.items():
            for name, table in tables.items():
                if isinstance(table.get("source"), str):
                    self.origin[f"{section}.{name}"] = (f"{section}.{table['source']}", name)


def load_pipeline(
    source: str | Path | Mapping[str, Any],
    registry: Registry,
    *,
    overrides: Iterable[str] = (),
    seed: int | None = None,
) -> Pipeline:
    """Read, override, build and check a pipeline: read -> structure -> expand -> build -> check.

    Args:
        source: a path to a TOML file, a registered pipeline name, or a dict.
        registry: the :class:`~quadriga.registry.Registry`.
        overrides: ``--set`` strings (``stage.NAME.use=OTHER`` swaps the component and drops the
            parameters it does not take, with a note in :attr:`Pipeline.notes`).
        seed: replaces ``[pipeline] seed`` when given.

    The ``[pipeline] description`` was written for the file's own settings: with overrides it
    gains ``" [changed since: KEY=VALUE, ...]"`` so that the saved ``pipeline.toml`` and every
    report built from it do not describe settings the run did not use.

    Returns:
        A :class:`Pipeline` whose components are built and whose inputs are checked.

    Raises:
        ConfigError: anything wrong, naming the file, table and key.
    """
    data, file = read_source(source, registry)
    notes: list[str] = []
    overrides = list(overrides)
    err = _Blame(file, apply_overrides(data, overrides, registry, notes=notes))
    meta = _read_meta(data, file, seed, err)
    if overrides and meta.description:  # the description was written for the settings before --set
        meta = attrs.evolve(meta, description=f"{meta.description} [changed since: {', '.join(overrides)}]")
    sections = _read_sections(data, err)
    tasks = {n: _build_node(registry, TaskTable, n, t, file, err) for n, t in sections["task"].items()}
    stages = {n: _build_node(registry, StageTable, n, t, file, err) for n, t in sections["stage"].items()}
    order = topological_order(stages, err)
    for node in stages.values():
        check_inputs(node, {**tasks, **stages}, err)
    _check_devices(meta.device, [*tasks.values(), *stages.values()], file)
    return Pipeline(
        meta.name,
        meta.seed,
        meta.description,
        file,
        tasks,
        {n: stages[n] for n in order},
        device=meta.device,
        notes=notes,
    )


def _check_devices(default: str, nodes: list[Node], file: str) -> None:
    """Refuse, before any run directory exists, a device this machine does not have.

    ``cpu`` is always there (and needs no torch import); any other device is tried by making a
    generator on it, which is what the run would do first.

    Raises:
        ConfigError: naming the file, the table (``[pipeline]`` or the stage) and ``device``.
    """
    from quadriga.seeding import make_generator

    tried: dict[str, ConfigError | None] = {}
    for table, device in [("pipeline", default), *((n.table, n.device or default) for n in nodes)]:
        if device == "cpu":
            continue
        if device not in tried:
            try:
                make_generator(0, device)
                tried[device] = None
            except ConfigError as refused:
                tried[device] = refused
        problem = tried[device]
        if problem is not None:
            where = "pipeline" if table == "pipeline" or device == default else table
            raise ConfigError(problem.reason, file=file, table=where, key="device")


def _read_meta(data: dict[str, Any], file: str, seed: int | None, err: _Blame) -> PipelineMeta:
    """The ``[pipeline]`` table, structured (the name defaults to the file's stem)."""
    for top in data:
        if top not in _TOP:
            raise err(
                f"unknown top-level table '{top}'.{suggest(top, _TOP)} A pipeline has [pipeline], "
                "[task.NAME] and [stage.NAME] tables.",
                table=top,
            )
    table = dict(data.get("pipeline", {}))
    table.setdefault("name", Path(file).stem if file.endswith(".toml") else "pipeline")
    if seed is not None:
        table["seed"] = seed
    try:
        return structure(table, PipelineMeta, "pipeline")
    except ConfigError as exc:
        raise err(exc.reason, table="pipeline", key=exc.key) from None


def _read_sections(data: dict[str, Any], err: _Blame) -> dict[str, dict[str, Any]]:
    """The task and stage tables, names checked, expanded (``repeat``, ``matrix``, ``name[*]``)."""
    sections = {section: data.get(section, {}) for section in ("task", "stage")}
    if not sections["stage"]:
        raise err("the pipeline has no [stage.NAME] table; add at least one stage.")
    for section, tables in sections.items():
        for node_name, table in tables.items():
            expanded = isinstance(table, dict) and "source" in table and is_expanded(node_name)
            if not NAME_RE.match(node_name) and not expanded:
                raise err(
                    name_problem(node_name).replace("the name", "a task or stage name", 1),
                    table=f"{section}.{node_name}",
                )
            written = [k for k in WRITTEN_BY_EXPANSION if isinstance(table, dict) and k in table]
            if written and not expanded:
                raise err(
                    f"'{written[0]}' is written by the expansion of repeat and matrix (into the "
                    "expanded tables of a run's saved pipeline.toml, named NAME[...]); it chooses the "
                    "seed, so a table may not set it. Remove it, and use repeat = N or matrix = { ... }.",
                    table=f"{section}.{node_name}",
                    key=written[0],
                )
            err.varied[f"{section}.{node_name}"] = matrix_keys(table.get("matrix"))
    sections = expand_sections(sections, err)
    err.expanded(sections)
    seen: dict[str, str] = {}
    for section, tables in sections.items():
        for node_name in tables:
            where = f"{section}.{node_name}"
            if node_name in seen:
                raise err(
                    f"'{node_name}' is both [{seen[node_name]}] and [{where}]; names must be unique.",
                    table=where,
                )
            seen[node_name] = where
    return sections


def _build_node(
    registry: Registry, schema: type[TaskTable], name: str, table: dict[str, Any], file: str, err: _Blame
) -> Node:
    """Structure a table's reserved keys into ``schema``, build its component, make the :class:`Node`."""
    where = f"{schema.section}.{name}"
    reserved, params = split_table(table, schema)
    try:
        spec: TaskTable = structure(reserved, schema, where)
        kinds = (spec.kind,) if spec.kind else schema.kinds
        keys = table_keys(schema)
        built = build(registry, spec.use, params, kinds=kinds, file=file, table=where, table_keys=keys)
    except ConfigError as exc:
        raise err(exc.reason, table=where, key=exc.key) from None
    except QuadrigaError as exc:
        raise err(str(exc), table=where, key="use") from None
    stage = spec if isinstance(spec, StageTable) else StageTable(use=spec.use)
    if stage.save_thin != 1 and built.spec.kind != "sampler":
        raise err(
            f"save_thin applies to the Samples of a sampler, not to a {built.spec.kind}; remove it "
            "(save = false keeps this stage's output off disk).",
            table=where,
            key="save_thin",
        )
    return Node(
        name,
        schema.section,
        spec.use,
        built.spec.kind,
        built.component,
        dict(stage.inputs),
        built.config,
        source=spec.source or name,
        replicate=spec.replicate,
        point=_point(name, table),
        device=spec.device,
        save=stage.save,
        save_thin=stage.save_thin,
    )


_MISSING = object()


def _point(name: str, table: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The matrix point of an expanded table: the keys its name holds, each with its value.

    The name gives the keys and values (``mala[step_size=0.1]``, ``draw[use=mala,inputs.target=gmm]``,
    ``fit[sampler=hmc]`` for an axis of component tables). A value is read from the table, where
    the expansion set it, when it is written as the name writes it, so it keeps its type (the
    name writes the string ``"1"`` and the integer ``1`` alike); otherwise (an axis of component
    tables named by their ``use``, an input bound replicate-wise) the name's value is kept.
    """
    if "source" not in table or "[" not in name:
        return ()
    point = []
    for key, value in parse_stage_name(name).point:
        node: Any = table
        for part in key.split("."):
            node = node.get(part, _MISSING) if isinstance(node, Mapping) else _MISSING
        same = node is not _MISSING and format_point(((key, node),)) == format_point(((key, value),))
        point.append((key, node if same else value))
    return tuple(point)
