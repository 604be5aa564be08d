"""``quadriga info NAME``: a component's parameters, inputs, output and paper (or a pipeline or claim)."""

from __future__ import annotations

import argparse
from typing import Any

from rich.markup import escape
from rich.table import Table

from quadriga.cli._common import (
    Formatter,
    Subparsers,
    add_common_options,
    console,
    name_completer,
    registry_for,
)
from quadriga.registry import KINDS

__all__ = ["add_parser", "cmd_info"]


def add_parser(sub: Subparsers) -> None:
    """Add ``info`` to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser(
        "info",
        help="parameters, inputs and paper of a component (or a pipeline/claim)",
        description="Show a component's parameters with types, defaults and documentation, "
        "its inputs and output, its paper, and the distribution it comes from.",
        formatter_class=Formatter,
    )
    p.add_argument("name").completer = name_completer(*KINDS, "pipeline", "claim")
    p.add_argument("--kind", choices=[*KINDS, "pipeline", "claim"], help="when the name has several kinds")
    add_common_options(p)
    p.set_defaults(func=cmd_info)


def _type_names(types: Any) -> str:
    return " | ".join(t if isinstance(t, str) else t.__name__ for t in types)


def cmd_info(args: argparse.Namespace) -> int:
    """``quadriga info NAME``: a component's parameters, inputs, output and paper.

    Raises:
        UnknownComponentError: nothing of that name (and kind) is registered.
    """
    from quadriga.errors import UnknownComponentError, suggest
    from quadriga.params import describe_params

    reg = registry_for(args)
    con = console()
    name, kind = args.name, args.kind
    shown = False
    for p in reg.pipelines() if kind in (None, "pipeline") else []:
        if p.name == name:
            con.print(f"[bold]pipeline {p.name}[/] from {p.distribution}: {p.summary}\n")
            con.print(p.read_text(), markup=False)
            shown = True
    for c in reg.claims() if kind in (None, "claim") else []:
        if c.name == name:
            con.print(
                f"[bold]claim {c.name}[/] from {c.distribution}: {c.summary}\nsource: {c.paper}\n"
                f"run it: quadriga verify {c.name} [--scale paper]"
            )
            shown = True
    colliding = [s for (k, n), v in reg.conflicts.items() if n == name and kind in (None, k) for s in v]
    for spec in [s for s in reg.components() if s.name == name and kind in (None, s.kind)] + colliding:
        if spec in colliding:
            who = " and ".join(f"'{s.distribution}'" for s in colliding if s.kind == spec.kind)
            con.print(
                f"[red]name collision[/]: {spec.kind} '{escape(spec.name)}' is registered by {who}; "
                "using it is an error until one is disabled (--disable PLUGIN). This one:"
            )
        cls = reg.load_class(spec)
        status = reg.plugins.get(spec.plugin)
        version = status.version if status is not None else ""
        con.print(f"[bold]{spec.kind} {spec.name}[/]  ({spec.distribution} {version}, {spec.target})")
        if spec.summary:
            con.print(spec.summary)
        if spec.paper:
            con.print(f"paper: {spec.paper}")
        doc = (cls.__doc__ or "").strip()
        if doc:
            con.print()
            con.print(doc, markup=False)
        table = Table(title="parameters")
        for col in ("name", "type", "default", "doc"):
            table.add_column(col, overflow="fold")
        for row in describe_params(cls):
            table.add_row(row["name"], escape(row["type"]), escape(row["default"]), escape(row["doc"]))
        con.print(table)
        inputs = getattr(cls, "input_types", {})
        if inputs:
            con.print("inputs: " + ", ".join(f"{k} ({_type_names(v)})" for k, v in inputs.items()))
        output = getattr(cls, "output_type", None)
        if output is not None:
            con.print(f"output: {output if isinstance(output, str) else output.__name__}")
        shown = True
    if not shown:
        known = [s.name for s in reg.specs()]
        raise UnknownComponentError(
            f"nothing named '{name}' is registered.{suggest(name, known)} Run `quadriga list`."
        )
    return 0
