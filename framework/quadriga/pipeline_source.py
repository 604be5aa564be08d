"""Reading pipeline sources and applying ``--set`` overrides (before expansion and checks)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from quadriga.errors import ConfigError, suggest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["TOP", "apply_overrides", "parse_override", "read_source"]

TOP = ("pipeline", "task", "stage")


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


def apply_overrides(data: dict[str, Any], overrides: Iterable[str]) -> set[tuple[str, str]]:
    """Apply ``--set`` strings to the raw tables in place; return the ``(table, key)`` pairs touched.

    Raises:
        ConfigError: a key outside ``pipeline.``/``task.``/``stage.``, or a table that does not exist.
    """
    touched: set[tuple[str, str]] = set()
    for text in overrides:
        path, value = parse_override(text)
        if path[0] not in TOP:
            raise ConfigError(
                f"'{'.'.join(path)}' must start with pipeline., task. or stage.{suggest(path[0], TOP)}",
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
