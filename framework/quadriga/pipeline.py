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

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from quadriga.components import build
from quadriga.errors import ConfigError, QuadrigaError, suggest
from quadriga.expansion import expand_sections, is_expanded
from quadriga.interfaces import INTERFACES, TASK_KINDS, Component, interface_of
from quadriga.pipeline_checks import check_inputs, topological_order
from quadriga.pipeline_source import TOP as _TOP
from quadriga.pipeline_source import apply_overrides, parse_override, read_source
from quadriga.seeding import derive_seed
from quadriga.stage_names import NAME_RE, StageName, parse_stage_name

if TYPE_CHECKING:
    from quadriga.registry import Registry

__all__ = ["NAME_RE", "Node", "Pipeline", "load_pipeline", "parse_override", "read_source"]

_RESERVED = {"use", "kind", "inputs", "source", "replicate", "device", "save", "save_thin"}
_META = ("name", "seed", "description", "device")
DEVICE_RE = re.compile(r"^(cpu|mps|cuda(:\d+)?)$")


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
    """

    name: str
    seed: int
    description: str
    file: str
    tasks: dict[str, Node]
    stages: dict[str, Node]
    device: str = "cpu"

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


def load_pipeline(
    source: str | Path | Mapping[str, Any],
    registry: Registry,
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
    touched = apply_overrides(data, overrides, registry)

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
        if key not in _META:
            raise err(
                f"unknown key.{suggest(key, _META)} [pipeline] takes name, seed, description and device.",
                table="pipeline",
                key=key,
            )
    device = meta.get("device", "cpu")
    if not isinstance(device, str) or not DEVICE_RE.match(device):
        raise err(
            f'device must be "cpu", "cuda", "cuda:N" or "mps", got {device!r}.',
            table="pipeline",
            key="device",
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
            expanded = isinstance(table, dict) and "source" in table and is_expanded(node_name)
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
            _check_reserved(table, where, err)
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
    order = topological_order(stages_unordered, err)
    for node in stages_unordered.values():
        check_inputs(node, nodes, err)
    return Pipeline(
        name, root_seed, description, file, tasks, {n: stages_unordered[n] for n in order}, device=device
    )


def _build_node(
    registry: Registry, section: str, name: str, table: dict[str, Any], file: str, err: Any
) -> Node:
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
        built = build(registry, table["use"], params, kinds=kinds, file=file, table=where)
    except ConfigError as exc:
        raise err(exc.reason, table=where, key=exc.key) from None
    except QuadrigaError as exc:
        raise err(str(exc), table=where, key="use") from None
    inputs = table.get("inputs", {})
    if section == "task" and ("save" in table or "save_thin" in table):
        key = "save" if "save" in table else "save_thin"
        raise err(f"tasks are not saved; '{key}' belongs in a [stage.NAME] table.", table=where, key=key)
    save, thin = table.get("save", True), table.get("save_thin", 1)
    if not isinstance(save, bool):
        raise err(f"save must be true or false, got {save!r}.", table=where, key="save")
    if not isinstance(thin, int) or isinstance(thin, bool) or thin < 1:
        raise err(
            f"save_thin must be an integer >= 1 (keep every N-th draw on disk), got {thin!r}.",
            table=where,
            key="save_thin",
        )
    if thin != 1 and section == "stage" and built.spec.kind != "sampler":
        raise err(
            f"save_thin applies to the Samples of a sampler, not to a {built.spec.kind}; remove it "
            "(save = false keeps this stage's output off disk).",
            table=where,
            key="save_thin",
        )
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
        built.spec.kind,
        built.component,
        dict(inputs),
        built.config,
        source=table.get("source", name),
        replicate=table.get("replicate"),
        point=_point(name, table),
        device=table.get("device"),
        save=save,
        save_thin=thin,
    )


_MISSING = object()


def _point(name: str, table: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The matrix point of an expanded table: the keys its name holds, each with the value in the table.

    The name gives the keys (``mala[step_size=0.1]``); each value is read from the table, where the
    expansion set it, so it keeps its type (the name writes the string ``"1"`` and the integer ``1``
    alike). A hand-written expanded table without the value keeps the one its name reads.
    """
    if "source" not in table or "[" not in name:
        return ()
    point = []
    for key, value in parse_stage_name(name).point:
        node: Any = table
        for part in key.split("."):
            node = node.get(part, _MISSING) if isinstance(node, Mapping) else _MISSING
        point.append((key, value if node is _MISSING else node))
    return tuple(point)


def _check_reserved(table: dict[str, Any], where: str, err: Any) -> None:
    source, replicate = table.get("source", "x"), table.get("replicate")
    if not isinstance(source, str) or not NAME_RE.match(source):
        raise err(
            f"'source' must name the table this one was expanded from, got {source!r}.", where, "source"
        )
    device = table.get("device")
    if device is not None and (not isinstance(device, str) or not DEVICE_RE.match(device)):
        raise err(f'device must be "cpu", "cuda", "cuda:N" or "mps", got {device!r}.', where, "device")
    if replicate is not None and (
        not isinstance(replicate, int) or isinstance(replicate, bool) or replicate < 0
    ):
        raise err(f"'replicate' must be an integer >= 0, got {replicate!r}.", where, "replicate")
