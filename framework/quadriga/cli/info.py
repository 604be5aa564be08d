"""``quadriga info NAME``: a component's parameters, inputs, output and paper (or a pipeline or claim)."""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from typing import Any

from rich.padding import Padding
from rich.text import Text

from quadriga.cli._common import (
    Formatter,
    Subparsers,
    add_common_options,
    add_kind_option,
    console,
    name_completer,
    registry_for,
)
from quadriga.cli.output import print_json
from quadriga.markup import escape
from quadriga.registry import SPEC_KINDS

__all__ = [
    "add_parser",
    "cmd_info",
    "doc_paragraphs",
    "hanging_lines",
    "parameters",
    "render_doc",
    "toml_value",
    "type_text",
]


def add_parser(sub: Subparsers) -> None:
    """Add ``info`` to ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser(
        "info",
        help="parameters, inputs and paper of a component (or a pipeline/claim)",
        description="Show a component's parameters with types, defaults and documentation, "
        "its inputs and output, its paper, and the distribution it comes from.",
        formatter_class=Formatter,
    )
    p.add_argument(
        "name", help="a component, pipeline or claim name, as `quadriga list` shows it"
    ).completer = name_completer(*SPEC_KINDS)
    add_kind_option(p, "when the name has several kinds")
    p.add_argument(
        "--json", action="store_true", help="machine-readable output (a list, one entry per match)"
    )
    add_common_options(p)
    p.set_defaults(func=cmd_info)


def _type_names(types: Any) -> str:
    return " | ".join(t if isinstance(t, str) else t.__name__ for t in types)


_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


_HEADER = re.compile(r"^[A-Z][A-Za-z ]*:( |$)")


def doc_paragraphs(doc: str) -> list[tuple[int, str]]:
    """A docstring as ``(indent, text)`` logical lines, dedented (:func:`inspect.cleandoc`).

    The hard-wrapped lines of one paragraph are joined so that the console wraps them at its width.

    A line starts a new logical line when it is blank, indented differently from the one before
    (except a hanging indent inside a section: an entry of ``Raises:`` continued on deeper-indented
    lines is one line), a section header (``Raises:``), a list item (``-``/``*``), or follows a line
    ending in ``:``.
    """
    out: list[tuple[int, str]] = []
    previous_indent = -1
    for raw in inspect.cleandoc(doc).splitlines():
        text = raw.strip()
        indent = len(raw) - len(raw.lstrip())
        if not text:
            out.append((0, ""))
            previous_indent = -1
            continue
        joins = (
            out
            and out[-1][1]
            and previous_indent >= 0
            and (indent == previous_indent or (indent > previous_indent and out[-1][0] > 0))
            and not _HEADER.match(text)
            and not text.startswith(("- ", "* "))
            and not out[-1][1].endswith(":")
        )
        if joins:
            out[-1] = (out[-1][0], f"{out[-1][1]} {text}")
        else:
            out.append((indent, text))
        previous_indent = indent
    return out


def render_doc(text: str) -> str:
    """One logical docstring line as rich markup.

    Sphinx roles and literals (``:class:`~a.B```, ````x````) are shown as their text in cyan;
    everything else is escaped.
    """
    text = escape(text)
    text = _ROLE.sub(lambda m: f"[cyan]{m.group(1).rsplit('.', 1)[-1]}[/]", text)
    return _LITERAL.sub(lambda m: f"[cyan]{m.group(1)}[/]", text)


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def toml_value(value: Any, registry: Any = None) -> str:
    """``value`` as it is written in a pipeline file (``0.1``, ``"4-mode-2d"``, ``[1, 2]``, ``{ a = 1 }``).

    ``None`` is ``unset``: TOML has no null, the key is left out. Tables are written inline; a
    component instance (a nested default) is written as its table, ``{ use = "mala" }`` plus the
    parameters that differ from the component's defaults (its name is looked up in ``registry``).
    """
    import attrs
    import tomli_w

    from quadriga.interfaces import Component

    if value is None:
        return "unset"
    if isinstance(value, Component) and attrs.has(type(value)):
        return _component_table(value, registry)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = (
            f"{k if _BARE_KEY.fullmatch(str(k)) else toml_value(str(k))} = {toml_value(v, registry)}"
            for k, v in value.items()
        )
        return "{ " + ", ".join(items) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v, registry) for v in value) + "]"
    try:
        return tomli_w.dumps({"v": value}).split("=", 1)[1].strip()
    except (TypeError, ValueError):
        return repr(value)


def _component_table(value: Any, registry: Any) -> str:
    """``{ use = "NAME", key = value, ... }`` of a component instance (only non-default keys)."""
    import attrs

    cls = type(value)
    target = f"{cls.__module__}:{cls.__qualname__}"
    names = [s.name for s in registry.components() if s.target == target] if registry is not None else []
    if not names:
        return f"a {cls.__name__}"
    items = [f'use = "{names[0]}"']
    for f in attrs.fields(cls):
        if not f.init or f.name.startswith("_"):
            continue
        if f.default is attrs.NOTHING:
            default: Any = attrs.NOTHING
        elif isinstance(f.default, attrs.Factory):  # type: ignore[arg-type]
            default = f.default.factory()
        else:
            default = f.default
        current = getattr(value, f.name)
        try:
            same = bool(current == default)
        except Exception:  # e.g. tensors: compare by value is ambiguous, show it
            same = False
        if not same:
            items.append(f"{f.name} = {toml_value(current, registry)}")
    return "{ " + ", ".join(items) + " }"


def type_text(tp: Any) -> str:
    """A parameter's annotation in a pipeline file's terms.

    A nested component's interface becomes its kind (``Sampler`` -> ``sampler``), ``tuple[X, ...]``
    a ``list[X]``, ``dict[str, X]`` a ``table`` (``table[X]``), ``NoneType`` ``None``; an annotation
    that cannot be resolved is shown as written, and ``Any`` as ``any``.
    """
    import types
    import typing

    from quadriga.components import kinds_for_base
    from quadriga.interfaces import Component

    if tp is Any:
        return "any"
    if isinstance(tp, str):
        return tp.replace("typing.", "")
    if tp is type(None):
        return "None"
    if isinstance(tp, type) and issubclass(tp, Component):
        return " | ".join(kinds_for_base(tp))
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_text(a) for a in args)
    if origin in (list, tuple, set, frozenset) or (origin is not None and str(origin).endswith("Sequence'>")):
        inner = [a for a in args if a is not Ellipsis]
        if origin is tuple and len(inner) > 1:
            return "[" + ", ".join(type_text(a) for a in inner) + "]"
        return f"list[{type_text(inner[0])}]" if inner else "list"
    if origin is dict or (origin is not None and str(origin).endswith("Mapping'>")):
        value = args[1] if len(args) == 2 else Any
        return "table" if value is Any else f"table[{type_text(value)}]"
    if origin is typing.Literal:
        return " | ".join(toml_value(a) for a in args)
    name = getattr(tp, "__name__", None)
    if name and not args:
        return name
    return str(tp).replace("typing.", "")


def parameters(cls: type, registry: Any = None) -> list[dict[str, Any]]:
    """``[{"name", "type", "default", "doc", "required"}]`` of a component class; defaults in TOML.

    The type is the field's ``toml_type`` (:func:`quadriga.param`) or its annotation in TOML terms
    (:func:`type_text`); a nested component's default is shown as its table when ``registry``
    knows its name.
    """
    import attrs

    from quadriga.params import describe_params

    fields = {f.name: f for f in attrs.fields(cls)}
    rows = []
    for row in describe_params(cls):
        f = fields[row["name"]]
        if f.default is attrs.NOTHING:
            default = "required"
        elif isinstance(f.default, attrs.Factory):  # type: ignore[arg-type]
            try:
                default = toml_value(f.default.factory(), registry)
            except Exception:
                default = "(computed)"
        else:
            default = toml_value(f.default, registry)
        type_name = f.metadata.get("toml_type") or type_text(f.type)
        rows.append(
            {
                "name": row["name"],
                "type": type_name,
                "default": default,
                "doc": row["doc"],
                "required": default == "required",
            }
        )
    return rows


def hanging_lines(line: str, width: int = 80) -> list[str]:
    """``line`` folded at word boundaries into lines of at most ``width`` characters, continuations indented.

    A continuation is indented 4 spaces beyond ``line``'s own indentation, so a wrapped field
    (``"  replicates are the rows of ..."``) stays visibly one field under the line it belongs to.
    A word longer than the width is kept whole on its own line (a path or a name is not cut).

    Returns:
        The lines, without trailing newlines; ``[line]`` when it fits or is blank.
    """
    import textwrap

    lead = line[: len(line) - len(line.lstrip(" "))]
    return textwrap.wrap(
        line,
        width=width,
        subsequent_indent=lead + "    ",
        break_long_words=False,
        break_on_hyphens=False,
    ) or [line]


def wrap_comments(text: str, width: int = 80) -> str:
    """TOML text with every whole-line comment longer than ``width`` folded into several comment lines.

    ``quadriga info PIPELINE`` prints the pipeline's file; long comment lines are folded at word
    boundaries with the same indentation and ``#`` so the output fits a terminal and stays the same
    TOML (only comments change; values, tables and end-of-line comments are left as they are).
    """
    import textwrap

    out = []
    for line in text.splitlines():
        stripped = line.lstrip()
        if len(line) <= width or not stripped.startswith("#"):
            out.append(line)
            continue
        lead = line[: len(line) - len(stripped)] + "# "
        body = stripped.lstrip("#").strip()
        out += textwrap.wrap(body, width=width, initial_indent=lead, subsequent_indent=lead) or [line]
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def cmd_info(args: argparse.Namespace) -> int:
    """``quadriga info NAME``: a component's parameters, inputs, output and paper.

    A pipeline is printed as its TOML file (with a ``#`` comment header), so that
    ``quadriga info NAME > my.toml`` gives a file to edit.

    Raises:
        UnknownComponentError: nothing of that name (and kind) is registered.
    """
    reg = registry_for(args)
    con = console()
    name, kind = args.name, args.kind
    found: list[dict[str, Any]] = []
    for p in reg.pipelines() if kind in (None, "pipeline") else []:
        if p.name == name:
            text = p.read_text()
            found.append(dict(kind="pipeline", name=p.name, distribution=p.distribution, toml=text))
            if not args.json:
                _print_pipeline(p, text)
    if any(f["kind"] == "pipeline" for f in found) and kind is None and not args.json:
        _note_other_kinds(reg, name)
        return 0
    for c in reg.claims() if kind in (None, "claim") else []:
        if c.name == name:
            from quadriga.claims.info import claim_facts, claim_lines

            facts = claim_facts(reg, c)
            found.append(dict(kind="claim", **facts))
            if not args.json:
                width = min(80, con.width)
                for i, line in enumerate(claim_lines(facts)):
                    for part in hanging_lines(line, width):
                        con.print(f"[bold]{escape(part)}[/]" if i == 0 else escape(part), soft_wrap=True)
    colliding = [s for (k, n), v in reg.conflicts.items() if n == name and kind in (None, k) for s in v]
    for spec in [s for s in reg.components() if s.name == name and kind in (None, s.kind)] + colliding:
        if spec in colliding and not args.json:
            who = " and ".join(f"'{s.distribution}'" for s in colliding if s.kind == spec.kind)
            con.print(
                f"[red]name collision[/]: {spec.kind} '{escape(spec.name)}' is registered by {who}; "
                "using it is an error until one is disabled (--disable PLUGIN). This one:"
            )
        facts = _component_facts(reg, spec, collision=spec in colliding)
        found.append(facts)
        if not args.json:
            _print_component(con, facts)
    if not found:
        _raise_unknown(reg, name, kind)
    if args.json:
        print_json(found)
    return 0


def _print_pipeline(p: Any, text: str) -> None:
    """Write pipeline ``p``'s TOML ``text`` to stdout under a ``#`` comment header (how to run or copy it)."""
    import textwrap

    head = textwrap.fill(
        f"pipeline {p.name} from {p.distribution}: {p.summary}",
        width=78,
        initial_indent="# ",
        subsequent_indent="#   ",
    )
    sys.stdout.write(
        f"{head}\n# run it: quadriga run {p.name}\n"
        "# edited copy saved to a file: change [pipeline] name below first, so\n"
        f"# its runs go to runs/<new name>/ and not next to those of\n# {p.name}; "
        "then quadriga run FILE.toml\n\n"
        f"{wrap_comments(text)}"
    )
    if not text.endswith("\n"):
        sys.stdout.write("\n")


def _note_other_kinds(reg: Any, name: str) -> None:
    """Name, in ``#`` comments, the claims and components that share a pipeline's ``name``.

    ``quadriga info NAME > my.toml`` must stay a TOML file, so they are not printed; each is
    reachable with ``--kind``.
    """
    others = sorted(
        {c.kind for c in reg.claims() if c.name == name}
        | {s.kind for s in reg.components() if s.name == name}
    )
    for other in others:
        article = "an" if other[0] in "aeiou" else "a"
        hint = f"quadriga info {name} --kind {other}"
        sys.stdout.write(f"# '{name}' also names {article} {other}: {hint}\n")


def _component_facts(reg: Any, spec: Any, *, collision: bool) -> dict[str, Any]:
    """What ``info`` shows of a component (its ``--json`` entry): origin, doc, parameters, inputs, output."""
    cls = reg.load_class(spec)
    status = reg.plugins.get(spec.plugin)
    output = getattr(cls, "output_type", None)
    return dict(
        kind=spec.kind,
        name=spec.name,
        distribution=spec.distribution,
        version=status.version if status is not None else "",
        target=spec.target,
        summary=spec.summary,
        paper=spec.paper,
        tags=list(spec.tags),
        doc=inspect.cleandoc(cls.__doc__ or ""),
        parameters=parameters(cls, reg),
        inputs={k: _type_names(v) for k, v in getattr(cls, "input_types", {}).items()},
        output=None if output is None else output if isinstance(output, str) else output.__name__,
        collision=collision,
    )


def _print_component(con: Any, facts: dict[str, Any]) -> None:
    """Print a component's :func:`_component_facts` for a reader: header, doc, parameters, inputs, output."""
    con.print(
        f"[bold]{facts['kind']} {escape(facts['name'])}[/]  "
        f"({escape(facts['distribution'])} {escape(facts['version'])})"
    )
    con.print(f"class: {escape(facts['target'])}", soft_wrap=True)
    if facts["summary"]:
        con.print(escape(facts["summary"]))
    if facts["paper"]:
        con.print(f"paper: {escape(facts['paper'])}")
    if facts["tags"]:
        con.print(f"tags: {', '.join(facts['tags'])} (`quadriga list --where TAG`)")
    if facts["doc"]:
        con.print()
        for indent, line in doc_paragraphs(facts["doc"]):
            con.print(Padding(Text.from_markup(render_doc(line)), (0, 0, 0, indent)))
    con.print()
    if facts["parameters"]:
        con.print("[bold]parameters[/] (set them in the stage's table or with --set stage.NAME.KEY=VALUE):")
        for row in facts["parameters"]:
            con.print(f"  [bold]{escape(row['name'])}[/]: {escape(row['type'])} = {escape(row['default'])}")
            if row["doc"]:
                con.print(Padding(Text(row["doc"]), (0, 0, 0, 6)))
    else:
        con.print("no parameters")
    if facts["inputs"]:
        con.print("[bold]inputs[/]: " + escape(", ".join(f"{k} ({v})" for k, v in facts["inputs"].items())))
    if facts["output"] is not None:
        con.print(f"[bold]output[/]: {facts['output']}")


def _raise_unknown(reg: Any, name: str, kind: str | None) -> None:
    """Raise the error for a name ``info`` found nothing under (another kind, close matches, the catalogue).

    Raises:
        UnknownComponentError: always.
    """
    from quadriga.errors import UnknownComponentError, suggest

    known = [s.name for s in reg.specs()]
    elsewhere = sorted({s.kind for s in reg.specs() if s.name == name})
    if elsewhere:
        raise UnknownComponentError(
            f"'{name}' is registered as {' and as '.join(elsewhere)}, not as {kind}: quadriga info {name}"
            + (f" --kind {elsewhere[0]}" if len(elsewhere) == 1 else "")
        )
    from pathlib import Path

    path = Path(name)
    if path.suffix == ".toml" or path.exists():  # a file or a run: info describes registered names
        what = (
            f"`quadriga run {name} --check` checks and prints a pipeline file"
            if path.suffix == ".toml"
            else f"`quadriga compare {name}` or `quadriga report {name}` shows a run or sweep"
        )
        raise UnknownComponentError(
            f"'{name}' is a path; `quadriga info` describes registered names (`quadriga list`). {what}."
        )
    raise UnknownComponentError(
        f"nothing named '{name}' is registered.{suggest(name, known)} Run `quadriga list`."
        + reg.catalogue_note(name, None if kind is None else (kind,))
    )
