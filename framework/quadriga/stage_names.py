"""The grammar of expanded task and stage names, with one owner: ``NAME[k=v,...][i]``.

``repeat`` and ``matrix`` (:mod:`quadriga.expansion`) turn one ``[stage.NAME]`` table into
several, named

- ``NAME`` (a plain table),
- ``NAME[i]`` (replicate ``i`` of ``repeat``),
- ``NAME[k=v]`` or ``NAME[k1=a,k2=b]`` (one point of a ``matrix``, keys in matrix order),
- ``NAME[k=v,...][i]`` (replicate ``i`` of one point).

:func:`format_stage_name` writes these names and :func:`parse_stage_name` reads them back into a
:class:`StageName` ``(source, point, replicate)``; the two are inverse on every name the expansion
writes (``format_stage_name(parse_stage_name(s)) == s``), as gymnasium's ``get_env_id`` and
``parse_env_id`` are for environment ids and kedro's ``transcoding.py`` is for dataset names. Nothing
else in the core or the plugins splits a name by hand: the runner also records ``source``,
``point`` and ``replicate`` in each artifact's ``info`` and in ``results.json``.

A value in a point is written as ``true``/``false`` for a boolean, ``repr`` for a number, the
bare text for a string of letters, digits and ``_.+-``, and compact JSON (sorted keys) for
anything else (a quoted string, a list, a table). Reading back, a bare token is a boolean, an
integer or a float when it is written exactly as one would be, else a string; so the string
``"1"`` and the integer ``1`` are one name, and the expansion refuses a matrix that holds both.
Nothing here imports torch.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import attrs

from quadriga.errors import ConfigError

__all__ = [
    "INFO_KEYS",
    "KEY_RE",
    "MAX_NAME",
    "NAME_RE",
    "WRITTEN_BY_EXPANSION",
    "StageName",
    "format_point",
    "format_stage_name",
    "name_problem",
    "parse_stage_name",
    "replicate_base",
    "replicate_groups",
    "replicate_index",
    "split_subject_key",
]

#: the reserved keys that expansion writes into an expanded table (its source table, its replicate
#: index; :class:`StageName`'s ``source`` and ``replicate``): they choose the table's seed, so no
#: one else may set them
WRITTEN_BY_EXPANSION = ("source", "replicate")

#: the most characters a task, stage or pipeline name may have (it names files and directories)
MAX_NAME = 64
#: a task, stage or pipeline name as written in a file: a letter, then letters, digits, ``_.-``
NAME_RE = re.compile(rf"^[A-Za-z][A-Za-z0-9_.-]{{0,{MAX_NAME - 1}}}$")


def name_problem(name: object) -> str:
    """What keeps ``name`` from matching :data:`NAME_RE`, as a sentence; ``""`` when it matches.

    A name of the right characters but more than :data:`MAX_NAME` of them is told its length and
    the limit (not the character rule it meets).
    """
    if isinstance(name, str) and NAME_RE.match(name):
        return ""
    if isinstance(name, str) and len(name) > MAX_NAME and NAME_RE.match(name[:MAX_NAME]):
        tail = name[MAX_NAME:]
        if all(c.isascii() and (c.isalnum() or c in "_.-") for c in tail):
            return f"the name is {len(name)} characters long; a name has at most {MAX_NAME}. Shorten it."
    return (
        f"the name must start with a letter and use only letters, digits, '.', '_' and '-' "
        f"(at most {MAX_NAME} characters)."
    )


#: a matrix key: a parameter name, or a dotted path to a nested component's parameter
KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
#: the keys the runner adds to each artifact's ``info`` and each stage's entry in ``results.json``
INFO_KEYS = ("source", "point", "replicate")

_SOURCE = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_INDEX = re.compile(r"\[([0-9]+)\]")
_PLAIN = re.compile(r"[A-Za-z0-9_.+-]+")
_DECODER = json.JSONDecoder()

Point = tuple[tuple[str, Any], ...]


def _as_point(point: Mapping[str, Any] | Point) -> Point:
    """A point given as a mapping or as pairs, as ``((key, value), ...)``."""
    return tuple(point.items()) if isinstance(point, Mapping) else tuple(point)


@attrs.frozen
class StageName:
    """An expanded task or stage name, as its parts.

    Attributes:
        source: the table it was expanded from (``"mala"`` for ``mala[step_size=0.1][2]``).
        point: the matrix point as ``((key, value), ...)`` in matrix order (``()`` without a matrix).
        replicate: the replicate index ``i`` of ``repeat``, else ``None``.

    ``str(name)`` is :func:`format_stage_name`. Values that are lists or tables make the name
    unhashable (``point`` holds them as they are).
    """

    source: str
    point: Point = attrs.field(default=(), converter=_as_point)
    replicate: int | None = None

    @property
    def base(self) -> StageName:
        """The same name without its replicate index: one configuration (``mala[step_size=0.1]``)."""
        return attrs.evolve(self, replicate=None)

    def point_dict(self) -> dict[str, Any]:
        """``{key: value}`` of the point, in matrix order (``{}`` without a matrix)."""
        return dict(self.point)

    def __str__(self) -> str:
        """:func:`format_stage_name` of this name."""
        return format_stage_name(self)


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str) and _PLAIN.fullmatch(value):
        return value
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def format_point(point: Mapping[str, Any] | Point) -> str:
    """``{"step_size": 0.1, "schedule": "theory"}`` -> ``"step_size=0.1,schedule=theory"``.

    Args:
        point: a matrix point as a mapping or as ``((key, value), ...)``.

    Raises:
        TypeError: a value JSON cannot write (TOML dates and times).
    """
    items = point.items() if isinstance(point, Mapping) else point
    return ",".join(f"{k}={_format_value(v)}" for k, v in items)


def format_stage_name(name: StageName) -> str:
    """Write a name: ``StageName("mala", (("step_size", 0.1),), 2)`` -> ``"mala[step_size=0.1][2]"``.

    The inverse of :func:`parse_stage_name` on every name :mod:`quadriga.expansion` writes.
    """
    out = name.source
    if name.point:
        out += f"[{format_point(name.point)}]"
    if name.replicate is not None:
        out += f"[{name.replicate}]"
    return out


def _read_plain(token: str) -> Any:
    """A bare token as the value it is written from: bool, int or float when canonical, else a string."""
    if token in ("true", "false"):
        return token == "true"
    try:
        number: Any = int(token)
    except ValueError:
        try:
            number = float(token)
        except ValueError:
            return token
    return number if repr(number) == token else token


def _parse_point(text: str, start: int, bad: Any) -> tuple[Point, int]:
    """Read ``k=v,...`` from ``text[start:]`` up to its ``]``; return the point and the index after it."""
    items: list[tuple[str, Any]] = []
    pos = start
    while True:
        key = _KEY.match(text, pos)
        if key is None or not text.startswith("=", key.end()):
            raise bad(f"expected key=value at position {pos}")
        if any(k == key.group() for k, _ in items):
            raise bad(f"the key '{key.group()}' appears twice")
        pos = key.end() + 1
        if text[pos : pos + 1] in ('"', "[", "{"):
            try:
                value, pos = _DECODER.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                raise bad(f"the value of '{key.group()}' is not valid JSON ({exc.msg})") from None
        else:
            plain = _PLAIN.match(text, pos)
            if plain is None:
                raise bad(f"the value of '{key.group()}' is missing or holds characters that need quoting")
            value, pos = _read_plain(plain.group()), plain.end()
        items.append((key.group(), value))
        if text.startswith("]", pos):
            return tuple(items), pos + 1
        if not text.startswith(",", pos):
            raise bad(f"expected ',' or ']' at position {pos}")
        pos += 1


def parse_stage_name(text: str) -> StageName:
    """Read ``NAME``, ``NAME[i]``, ``NAME[k=v,...]`` or ``NAME[k=v,...][i]`` into a :class:`StageName`.

    Args:
        text: a task or stage name, as in a pipeline, ``results.json`` or an evaluator's
            ``"subject/metric"`` key (without the ``/metric``).

    Returns:
        ``parse_stage_name("mala[step_size=0.1][2]") == StageName("mala", (("step_size", 0.1),), 2)``.

    Raises:
        ConfigError: ``text`` is not such a name; the message quotes it and says what is wrong.
    """

    def bad(why: str) -> ConfigError:
        return ConfigError(
            f"{text!r} is not a stage name ({why}); a stage name reads NAME, NAME[i], NAME[k=v,...] "
            "or NAME[k=v,...][i]."
        )

    if not isinstance(text, str):
        raise ConfigError(f"a stage name must be a string, got {type(text).__name__} {text!r}.")
    source = _SOURCE.match(text)
    if source is None:
        raise bad("it must start with a letter, then letters, digits, '.', '_' or '-', at most 64")
    pos, replicate = source.end(), None
    point: Point = ()
    if text.startswith("[", pos) and not _INDEX.match(text, pos):
        point, pos = _parse_point(text, pos + 1, bad)
    index = _INDEX.match(text, pos)
    if index is not None:
        replicate, pos = int(index.group(1)), index.end()
    if pos != len(text):
        raise bad(f"unexpected {text[pos:]!r} after {text[:pos]!r}")
    return StageName(source.group(), point, replicate)


def replicate_base(name: str) -> str:
    """The name before its replicate index: ``"mala[step_size=0.1][2]"`` -> ``"mala[step_size=0.1]"``.

    A name without a replicate index, or one that is not an expanded name (a subject named in
    Python), is returned unchanged. Evaluators that pool replicates group subjects by this base
    (one configuration), never by component name.
    """
    try:
        parsed = parse_stage_name(name)
    except ConfigError:
        return name
    return name[: name.rindex("[")] if parsed.replicate is not None else name


def replicate_index(name: str) -> int | None:
    """The replicate index of a name: ``"mala[step_size=0.1][2]"`` -> ``2``.

    ``None`` for a name without one, and for a name that is not an expanded name (a subject
    named in Python); :func:`parse_stage_name` is the strict reader.
    """
    try:
        return parse_stage_name(name).replicate
    except ConfigError:
        return None


def split_subject_key(key: str, stages: Any = ()) -> tuple[str, str]:
    """The subject and the metric of an evaluator's ``"subject/metric"`` key.

    A metric name may itself hold a ``/`` (``"fit/flowrl/mean_reward"``: subject ``fit``, metric
    ``flowrl/mean_reward``), and a subject named in Python may too, so the split is not read off
    the text alone: the subject is the longest part before a ``/`` that is one of ``stages`` (the
    run's stage names); when none is, everything before the last ``/``.

    Args:
        key: the key, e.g. ``"mala[0]/energy_distance"``.
        stages: the names a subject can be (any container of strings; empty: none known).

    Returns:
        ``(subject, metric)``; ``("", key)`` for a key without ``/`` (a metric of the stage itself).
    """
    key = str(key)
    cuts = [i for i, c in enumerate(key) if c == "/"]
    for i in reversed(cuts):
        if key[:i] in stages:
            return key[:i], key[i + 1 :]
    subject, _, metric = key.rpartition("/")
    return subject, metric


def replicate_groups(subjects: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Group ``{stage name: artifact}`` by :func:`replicate_base`, keeping the input order.

    Returns:
        ``{base: {stage name: artifact}}``; ``{"dqn": {"dqn[0]": a0, "dqn[1]": a1}, "pg": {"pg": b}}``.
    """
    groups: dict[str, dict[str, Any]] = {}
    for name, value in subjects.items():
        groups.setdefault(replicate_base(name), {})[name] = value
    return groups
