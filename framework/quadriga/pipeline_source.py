"""Reading pipeline sources and applying ``--set`` overrides (before expansion and checks)."""

from __future__ import annotations

import logging
import re
import sys
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from quadriga.errors import ConfigError, suggest
from quadriga.serialization import copy_tables
from quadriga.stage_names import WRITTEN_BY_EXPANSION

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "INT64",
    "MAX_DEPTH",
    "ORIGIN",
    "TOP",
    "WRITTEN_BY_EXPANSION",
    "apply_overrides",
    "check_values",
    "parse_override",
    "read_source",
]

_log = logging.getLogger(__name__)

TOP = ("pipeline", "task", "stage")
#: how ``--set`` and ``--grid`` values are named in error messages
ORIGIN = "command line (--set/--grid)"
#: the deepest nesting of tables and arrays a pipeline may use (components inside components included)
MAX_DEPTH = 32
#: the integers a pipeline value may hold: those of a signed 64-bit integer (what torch and numpy take)
INT64 = (-(2**63), 2**63 - 1)


def _where(path: list[str]) -> tuple[str | None, str | None]:
    """``["stage", "draw", "inner", "x"]`` -> ``("stage.draw", "inner.x")``."""
    if not path:
        return None, None
    if path[0] == "pipeline" or len(path) < 2:
        return path[0], ".".join(path[1:]) or None
    return f"{path[0]}.{path[1]}", ".".join(path[2:]) or None


def check_values(value: Any, file: str, path: list[str] | None = None, depth: int = 0) -> None:
    """Refuse values no component can take: nesting deeper than :data:`MAX_DEPTH`, integers beyond int64.

    Args:
        value: a parsed TOML value (or the whole document).
        file: the origin named in errors (a file, or :data:`ORIGIN`).
        path: the keys leading to ``value`` (``["stage", "draw", "num_samples"]``).
        depth: how deep ``value`` lies (the document is 0).

    Raises:
        ConfigError: naming the file, table and key.
    """
    path = path or []
    if depth > MAX_DEPTH:
        table, key = _where(path)
        raise ConfigError(
            f"tables, arrays or components are nested more than {MAX_DEPTH} deep; no pipeline needs "
            "that many levels. Flatten the value.",
            file=file,
            table=table,
            key=key,
        )
    if isinstance(value, bool):
        return
    if isinstance(value, int) and not INT64[0] <= value <= INT64[1]:
        table, key = _where(path)
        raise ConfigError(
            f"the integer {value} does not fit in a signed 64-bit integer "
            f"([{INT64[0]}, {INT64[1]}]); use a smaller value.",
            file=file,
            table=table,
            key=key,
        )
    if isinstance(value, Mapping):
        for k, v in value.items():
            check_values(v, file, [*path, str(k)], depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            sub = [*path[:-1], f"{path[-1]}[{i}]"] if path else [f"[{i}]"]
            check_values(v, file, sub, depth + 1)


#: a table header line, ``[stage.mala]`` (not an array of tables, ``[[...]]``)
_HEADER = re.compile(r"\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")


def _toml_hint(text: str, msg: str) -> str:
    """What to change, read off the line ``tomllib``'s message points at (``(at line N, ...)``).

    A key given twice in one table names the key and the table (the nearest header above it); a
    Python literal where TOML has its own word
    (``True``/``False``, ``None``) says the TOML spelling; anything else gets the generic advice.
    """
    where = re.search(r"at line (\d+)", msg)
    lines = text.splitlines()
    line = lines[int(where.group(1)) - 1] if where and 0 < int(where.group(1)) <= len(lines) else ""
    odd = _non_ascii_outside_strings(line)
    if odd is not None:
        column, char = odd
        name = unicodedata.name(char, "unnamed character")
        return (
            f"Line {where.group(1) if where else '?'}, column {column} holds {char!r} (U+{ord(char):04X} "
            f"{name}), a non-ASCII character outside a string; keys, booleans and numbers are ASCII. "
            "Retype it (it may be a look-alike of a Latin letter or a typographic quote)."
        )
    key, _, value = line.partition("=")
    key, value = key.strip().strip('"'), value.strip().split("#", 1)[0].strip()
    if "Cannot overwrite a value" in msg and key:
        row = int(where.group(1)) if where else 0
        header = next((h.group(1) for h in map(_HEADER.match, reversed(lines[: max(row - 1, 0)])) if h), None)
        table = f"[{header}]" if header else "its table"
        return f"Key '{key}' is given twice in {table}; keep one of them."
    python = {"True": "true", "False": "false"}
    if value in python:
        return f"TOML booleans are lowercase: write {key} = {python[value]}."
    if value == "None":
        return f"TOML has no None: leave '{key}' out to keep its default."
    return "Check quoting, '=' and brackets on that line."


def _non_ascii_outside_strings(line: str) -> tuple[int, str] | None:
    """The first non-ASCII character of a TOML ``line`` outside quotes and comments: ``(column, char)``.

    Columns count from 1; ``None`` when there is none. Quotes are followed simply (a ``"`` or ``'``
    opens a string up to the same quote not escaped by a backslash), which is enough for one line.
    """
    quote = ""
    escaped = False
    for i, char in enumerate(line):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\" and quote == '"':
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in "\"'":
            quote = char
        elif char == "#":
            return None
        elif ord(char) > 127:
            return i + 1, char
    return None


def _check_structure(data: dict[str, Any], file: str, *, need_pipeline: bool = True) -> None:
    """The top-level shape: a ``[pipeline]`` table with a string description, tables of tables."""
    if need_pipeline and "pipeline" not in data:
        raise ConfigError(
            'there is no [pipeline] table. Start the file with [pipeline] and name = "..." '
            "(see `quadriga run --help` for an example).",
            file=file,
        )
    meta = data.get("pipeline", {})
    if not isinstance(meta, dict):
        raise ConfigError(
            f"'pipeline' must be a table ([pipeline] with name, seed, ...), got {meta!r}.",
            file=file,
            table="pipeline",
        )
    _check_description(meta.get("description", ""), file)
    for section in ("task", "stage"):
        tables = data.get(section, {})
        if not isinstance(tables, dict):
            raise ConfigError(
                f"'{section}' must hold tables such as [{section}.NAME], got {tables!r}.",
                file=file,
                table=section,
            )
        for name, table in tables.items():
            if not isinstance(table, dict):
                raise ConfigError(
                    f"must be a table with 'use = \"name\"', got {table!r}.",
                    file=file,
                    table=f"{section}.{name}",
                )


def _check_description(value: Any, file: str) -> None:
    if not isinstance(value, str):
        raise ConfigError(
            f"the description must be a string (text in quotes), got {value!r}.",
            file=file,
            table="pipeline",
            key="description",
        )


def read_source(source: str | Path | Mapping[str, Any], registry: Any) -> tuple[dict[str, Any], str]:
    """Read a pipeline from a path, a registered name, or a dict.

    Returns:
        ``(data, file)`` where ``file`` names the origin for error messages.

    Raises:
        ConfigError: an unreadable file, bytes that are not UTF-8, bad TOML (with line and column),
            nesting deeper than :data:`MAX_DEPTH`, an integer beyond int64, an empty file, no
            ``[pipeline]`` table, a non-string description, ``task``/``stage`` entries that are not tables.
        UnknownComponentError: neither a file nor a registered pipeline (close matches suggested).
    """
    if isinstance(source, Mapping):
        data = copy_tables(source)
        check_values(data, "<dict>")
        _check_structure(data, "<dict>", need_pipeline=False)
        return data, "<dict>"
    path = Path(source)
    if path.suffix == ".toml" or path.exists() or "/" in str(source):
        text, file = _read_file(path, str(source))
    else:
        spec = registry.get_pipeline(str(source))
        text, file = spec.read_text(), f"{spec.name} (from {spec.distribution})"
    data = _parse_toml(text, file)
    check_values(data, file)
    _check_structure(data, file)
    return data, file


def _read_file(path: Path, source: str) -> tuple[str, str]:
    """The UTF-8 text of the pipeline file at ``path`` and its name for error messages.

    Raises:
        ConfigError: a directory, a missing or unreadable file, bytes that are not UTF-8 (with the line).
    """
    if path.is_dir():
        raise ConfigError(f"'{source}' is a directory, not a file; give the path of a pipeline .toml file.")
    if not path.is_file():
        raise ConfigError(f"pipeline file '{source}' does not exist.")
    file = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the file: {exc.strerror or exc}.", file=file) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"the file is not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {line}). Save it as UTF-8.",
            file=file,
        ) from None
    return text, file


def _parse_toml(text: str, file: str) -> dict[str, Any]:
    """Parse a pipeline's TOML ``text`` (``file`` names it in errors).

    Raises:
        ConfigError: empty text, nesting deeper than :data:`MAX_DEPTH`, invalid TOML (a table
            defined twice is named, other errors get a hint).
    """
    if text.startswith("\ufeff"):
        raise ConfigError(
            "the file starts with a byte-order mark (BOM, U+FEFF), which TOML does not allow. "
            "Save it as UTF-8 without a BOM (in most editors: encoding 'UTF-8', not 'UTF-8 with BOM').",
            file=file,
        )
    if not text.strip():
        raise ConfigError(
            "the file is empty. A pipeline needs a [pipeline] table and at least one "
            "[stage.NAME] table; see `quadriga run --help` for an example.",
            file=file,
        )
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise ConfigError(
            f"tables or arrays are nested too deeply to read (more than {MAX_DEPTH} levels are refused).",
            file=file,
        ) from None
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        dup = re.search(r"Cannot (?:declare|overwrite).*?\('(\w+)', '([^']+)'\)", msg)
        if dup:
            raise ConfigError(
                f"[{dup.group(1)}.{dup.group(2)}] is defined twice ({msg}). Rename one of them; "
                "every task and stage needs its own name.",
                file=file,
            ) from None
        raise ConfigError(f"invalid TOML: {msg}. {_toml_hint(text, msg)}", file=file) from None
    return data


def parse_override(text: str) -> tuple[list[str], Any]:
    """Parse ``"stage.srmc.alpha=2"`` into ``(["stage", "srmc", "alpha"], 2)``.

    The value is parsed as a TOML value (``2``, ``0.5``, ``true``, ``[1, 2]``,
    ``{ use = "mala" }``, ``"text"``); a bare word that is not valid TOML is taken as a string.

    Raises:
        ConfigError: no ``=``, an empty key, a value that spans lines outside a quoted string (text
            after a newline would be parsed as further keys, or kept in a bare string), a value
            nested too deeply or an integer beyond int64 (attributed to :data:`ORIGIN`).
    """
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"'{text}' is not KEY=VALUE (e.g. --set stage.srmc.alpha=2).", file=ORIGIN)
    try:
        document = tomllib.loads(f"v = {raw.strip()}")
    except RecursionError:
        raise ConfigError(f"the value of '{key}' is nested too deeply.", file=ORIGIN) from None
    except tomllib.TOMLDecodeError:
        document = {"v": raw.strip()}
    value = document["v"]
    extra = [k for k in document if k != "v"]
    if extra or (isinstance(value, str) and ("\n" in value or "\r" in value) and value == raw.strip()):
        shown = raw.strip().replace("\r", "\\r").replace("\n", "\\n")
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise ConfigError(
            f"the value of '{key}' ('{shown}') spans more than one line"
            + (f" and would also set {', '.join(repr(k) for k in extra)}" if extra else "")
            + "; one --set gives one value. Give each key its own --set KEY=VALUE.",
            file=ORIGIN,
            key="--set",
        )
    path = key.split(".")
    check_values(value, ORIGIN, path)
    return path, value


def _table_name(section: dict[str, Any], parts: list[str], top: str) -> int:
    """How many of ``parts`` name the table: the one prefix joined by dots that is a table name.

    Table names may hold dots (``[stage."a.b"]``, expanded names like ``mala[step_size=0.1]``):
    ``stage.a.b.x`` sets ``x`` of ``[stage."a.b"]`` when that table exists.

    Raises:
        ConfigError: no prefix names a table, or two do (``a`` and ``a.b`` both exist).
    """
    found = [n for n in range(1, len(parts)) if ".".join(parts[:n]) in section]
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        names = " and ".join(f"[{top}.{'.'.join(parts[:n])}]" for n in found)
        raise ConfigError(
            f"'{top}.{'.'.join(parts)}' could address {names}; rename one of those tables so that "
            "no table name is another's prefix followed by a dot.",
            file=ORIGIN,
            table=f"{top}.{parts[0]}",
        )
    raise ConfigError(
        f"there is no [{top}.{parts[0]}] in this pipeline.{suggest(parts[0], section)} "
        f"Tables: {', '.join(f'{top}.{n}' for n in section) or 'none'}.",
        file=ORIGIN,
        table=f"{top}.{parts[0]}",
    )


def _default_component(
    registry: Any, table: dict[str, Any], cls: Any, part: str
) -> tuple[dict[str, Any], Any]:
    """The table of a nested component left at its default, for ``--set stage.x.base_kernel.step_size=...``.

    Returns:
        ``({"use": registered name}, its class)`` when ``part`` is a parameter of ``cls`` whose
        default is a registered component, else ``({}, None)``.
    """
    import attrs

    if registry is None:
        return {}, None
    try:
        if cls is None:
            kind = table.get("kind")
            spec = registry.get(table["use"], kinds=(kind,) if kind else None)
            cls = registry.load_class(spec)
        field = attrs.fields_dict(cls).get(part) if attrs.has(cls) else None
        if field is None:
            return {}, None
        default: Any = field.default
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            default = default.factory(*([None] if default.takes_self else []))
        target = f"{type(default).__module__}:{type(default).__qualname__}"
        for spec in registry.components():
            if spec.target == target:
                return {"use": spec.name}, type(default)
    except Exception:  # an unknown component is reported when the pipeline is built
        return {}, None
    return {}, None


def _swap(registry: Any, table: dict[str, Any], where: str, old: Any, notes: list[str]) -> None:
    """After ``--set TABLE.use=NEW``: drop the parameters ``NEW`` does not take, and say so in ``notes``.

    Nothing is dropped when ``NEW`` is not a registered component (building the table then says so).
    """
    import attrs

    from quadriga.pipeline_schema import RESERVED

    new = table["use"]
    if registry is None or new == old or not isinstance(new, str):
        return
    try:
        kind = table.get("kind")
        cls = registry.load_class(registry.get(new, kinds=(kind,) if kind else None))
        takes = {f.name for f in attrs.fields(cls) if f.init}
    except Exception:  # an unknown component is reported when the pipeline is built
        return
    dropped = [k for k in table if k not in RESERVED and k not in takes]
    for key in dropped:
        del table[key]
    note = f"--set {where}.use={new}: [{where}] uses '{new}' instead of '{old}'"
    if dropped:
        note += f"; dropped {', '.join(dropped)}, which '{new}' does not take"
    notes.append(note + ".")
    _log.info(notes[-1])


def _child(node: dict[str, Any], part: str, cls: Any, registry: Any) -> tuple[Any, Any]:
    """What ``--set`` descends into under ``part``: ``(table or the value found there, its class)``.

    An absent table is created (``inputs``: empty; a parameter: its default component's table when
    ``registry`` finds one); a component given by name becomes ``{"use": name}``.
    """
    current = node.get(part)
    if current is None:
        node[part], cls = ({}, None) if part == "inputs" else _default_component(registry, node, cls, part)
    elif isinstance(current, str) and part != "inputs":
        node[part], cls = {"use": current}, None  # a nested component given by name
    else:
        cls = None
    return node[part], cls


def apply_overrides(
    data: dict[str, Any], overrides: Iterable[str], registry: Any = None, *, notes: list[str] | None = None
) -> set[tuple[str, str]]:
    """Apply ``--set`` strings to the raw tables in place; return the ``(table, key)`` pairs touched.

    ``stage.NAME.KEY=VALUE`` sets a parameter; ``stage.NAME.P.KEY=VALUE`` sets ``KEY`` of the nested
    component ``P`` (its default component when the table does not name one, given ``registry``);
    ``pipeline.KEY=VALUE`` sets ``[pipeline] KEY``. ``stage.NAME.use=OTHER`` swaps the component:
    given ``registry``, the table's parameters that ``OTHER`` does not take are dropped and a
    sentence saying so is appended to ``notes`` (and logged). Every error is attributed to
    :data:`ORIGIN`.

    Raises:
        ConfigError: a key outside ``pipeline.``/``task.``/``stage.``, a table that does not exist,
            a key inside a value that is not a table, a non-string description, one key set twice.
    """
    touched: set[tuple[str, str]] = set()
    given: dict[str, str] = {}
    for text in overrides:
        path, value = parse_override(text)
        key = ".".join(path)
        if key in given:
            raise ConfigError(f"'{key}' is set twice ({given[key]} and {text}); give it once.", file=ORIGIN)
        given[key] = text
        if path[0] not in TOP:
            raise ConfigError(
                f"'{'.'.join(path)}' must start with pipeline., task. or stage.{suggest(path[0], TOP)}",
                file=ORIGIN,
            )
        top = data.get(path[0], {})
        if not isinstance(top, dict):
            raise ConfigError(
                f"'{path[0]}' in the pipeline is {top!r}, not a table, so --set {'.'.join(path)} cannot "
                f"set a key in it. Make it a table ([{path[0]}] or [{path[0]}.NAME]).",
                file=ORIGIN,
                table=path[0],
            )
        if path[0] == "pipeline":
            if len(path) != 2:
                raise ConfigError("use --set pipeline.KEY=VALUE (e.g. pipeline.seed=3).", file=ORIGIN)
            if path[1] == "description":
                _check_description(value, ORIGIN)
            data.setdefault("pipeline", {})[path[1]] = value
            touched.add(("pipeline", path[1]))
            continue
        touched |= _set_in_table(top, path, value, registry, notes)
    return touched


def _set_in_table(
    top: dict[str, Any], path: list[str], value: Any, registry: Any, notes: list[str] | None
) -> set[tuple[str, str]]:
    """Apply ``--set task|stage.NAME[.P...].KEY=VALUE`` to ``top`` (``data[path[0]]``); the pairs touched.

    Nested components on the way are made from their defaults (:func:`_child`); setting ``use``
    swaps the component (:func:`_swap`, its notes appended to ``notes``).

    Raises:
        ConfigError: a key too short to name a table and a key, an unknown table, a key inside a value,
            a key of :data:`WRITTEN_BY_EXPANSION`.
    """
    if len(path) < 3:
        raise ConfigError(f"'{'.'.join(path)}' must be {path[0]}.NAME.KEY=VALUE.", file=ORIGIN)
    n = _table_name(top, path[1:], path[0])
    name, keys = ".".join(path[1 : 1 + n]), path[1 + n :]
    where = f"{path[0]}.{name}"
    node = top[name]
    if not isinstance(node, dict):
        raise ConfigError(f"[{where}] is {node!r}, not a table.", file=ORIGIN, table=where)
    cls: Any = None
    for i, part in enumerate(keys[:-1]):
        node, cls = _child(node, part, cls, registry)
        if not isinstance(node, dict):
            raise ConfigError(
                f"'{'.'.join(keys[: i + 1])}' is {node!r}, a value and not a table, so "
                f"--set {'.'.join(path)} cannot set a key inside it.",
                file=ORIGIN,
                table=where,
                key=".".join(keys[: i + 1]),
            )
    if len(keys) == 1 and keys[0] in WRITTEN_BY_EXPANSION:
        raise ConfigError(
            f"'{keys[0]}' is written by the expansion of repeat and matrix (it chooses the seed of "
            f"[{where}]) and cannot be set. Use repeat = N or matrix = {{ ... }} in the table, or "
            "--set pipeline.seed=N for other seeds.",
            file=ORIGIN,
            table=where,
            key=keys[0],
        )
    old = node.get(keys[-1])
    node[keys[-1]] = value
    if keys == ["use"]:
        _swap(registry, node, where, old, notes if notes is not None else [])
    touched = {(where, keys[0])}
    if keys[0] == "inputs" and len(keys) > 1:
        touched.add((where, ".".join(keys[:2])))
    return touched
