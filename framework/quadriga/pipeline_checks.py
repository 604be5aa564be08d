"""Checks of a built pipeline: stage inputs against the interface, and the execution order."""

from __future__ import annotations

import graphlib
import inspect
from typing import Any

from quadriga.errors import suggest
from quadriga.interfaces import TASK_KINDS, accepted_types

__all__ = ["check_inputs", "topological_order"]


def _takes_many(node: Any, param: Any) -> bool:
    """Whether an input may name several nodes (a list).

    Every input of an evaluator may, and elsewhere inputs annotated as a mapping or sequence
    (``subject: Mapping[str, Samples]``).
    """
    if node.kind == "evaluator" or param is None:
        return True
    text = str(param.annotation)
    return any(word in text for word in ("Mapping", "dict", "Dict", "Sequence", "list"))


def check_inputs(node: Any, nodes: dict[str, Any], err: Any) -> None:
    """Check a stage's inputs: names known, accepted by the method, of accepted classes, none missing.

    A list of nodes is accepted only where the method takes several (:func:`_takes_many`). Inputs
    listed in the component's ``required_inputs`` class attribute (a tuple of names) are required
    even when the method gives them a default (an evaluator's ``reference = None``).

    Raises:
        ConfigError: (through ``err``) naming the table and ``inputs.ARG``.
    """
    signature = inspect.signature(node.method())
    injected = {"self", *node.interface.injected}
    params = {
        n: p
        for n, p in signature.parameters.items()
        if n not in injected and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    }
    takes_kwargs = any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())
    required = [n for n, p in params.items() if p.default is inspect.Parameter.empty]
    required += [n for n in getattr(type(node.component), "required_inputs", ()) if n not in required]
    for arg, ref in node.inputs.items():
        if isinstance(ref, list) and not _takes_many(node, params.get(arg)):
            raise err(
                f"input '{arg}' of {node.kind} '{node.use}' takes one task or stage, got the list {ref!r}; "
                f'write {arg} = "{ref[0] if ref else "NAME"}".',
                table=node.table,
                key=f"inputs.{arg}",
            )
        if arg not in params and not takes_kwargs:
            raise err(
                f"{node.kind} '{node.use}' has no input '{arg}'.{suggest(arg, params)} "
                f"Its inputs: {', '.join(params) or 'none'}.",
                table=node.table,
                key=f"inputs.{arg}",
            )
        for r in [ref] if isinstance(ref, str) else ref:
            _check_reference(node, nodes, arg, r, err)
    missing = [r for r in required if r not in node.inputs]
    if missing:
        raise err(
            f"missing input '{missing[0]}': {node.kind} '{node.use}' needs "
            f"inputs = {{ {', '.join(f'{m} = ...' for m in required)} }}.",
            table=node.table,
            key="inputs",
        )


def _check_reference(node: Any, nodes: dict[str, Any], arg: str, r: str, err: Any) -> None:
    """Check that input ``arg`` of ``node`` may name node ``r``.

    ``r`` must exist, not be ``node`` itself, and produce a class the method accepts for ``arg``
    (:func:`quadriga.interfaces.accepted_types`).

    Raises:
        ConfigError: (through ``err``) naming the table and ``inputs.ARG``.
    """
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
    accepted = accepted_types(type(node.component), arg)
    produced = nodes[r].output_type
    if accepted and not issubclass(produced, accepted):
        names = " or ".join(t.__name__ for t in accepted)
        kind_name = next((t.__name__ for t in (*TASK_KINDS.values(),) if issubclass(produced, t)), None)
        raise err(
            f"input '{arg}' gets '{r}', a {kind_name or produced.__name__}, but "
            f"{node.kind} '{node.use}' "
            f"accepts {names} there. Point it at a node that produces {names}.",
            table=node.table,
            key=f"inputs.{arg}",
        )


def topological_order(stages: dict[str, Any], err: Any) -> list[str]:
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
