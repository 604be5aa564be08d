"""The pipeline schema: the ``[pipeline]`` table and the reserved keys of a task or stage table.

Both are attrs classes structured by the one component converter
(:data:`quadriga.components.CONVERTER`, extra keys forbidden), so a pipeline table is checked the
way a component's parameters are. A ``[task.NAME]`` or ``[stage.NAME]`` table holds the reserved
keys of :class:`TaskTable` / :class:`StageTable` plus ``repeat`` and ``matrix`` (consumed by
:mod:`quadriga.expansion`); every other key is a parameter of the component named by ``use``.
:data:`RESERVED` is the one set of reserved keys that expansion, overrides and the node builder
read. Every error is a :class:`~quadriga.errors.ConfigError` naming the table and key (the caller
adds the file). Nothing here imports torch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError

from quadriga.components import CONVERTER
from quadriga.errors import ConfigError, suggest
from quadriga.interfaces import INTERFACES, TASK_KINDS
from quadriga.stage_names import NAME_RE, WRITTEN_BY_EXPANSION, name_problem

__all__ = [
    "DEVICE_RE",
    "EXPANSION_KEYS",
    "NAME_RE",
    "NOT_VARIED",
    "RESERVED",
    "PipelineMeta",
    "StageTable",
    "TaskTable",
    "split_table",
    "structure",
    "table_keys",
]

# NAME_RE (a pipeline, task or stage name as written) is quadriga.stage_names', re-exported here
#: the devices a pipeline or stage may name
DEVICE_RE = re.compile(r"^(cpu|mps|cuda(:\d+)?)$")
_DEVICES = 'device must be "cpu", "cuda", "cuda:N" or "mps", got {!r}.'


def _fail(message: str, key: str) -> ConfigError:
    return ConfigError(message, key=key)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_device(_: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None and (not isinstance(value, str) or not DEVICE_RE.match(value)):
        raise _fail(_DEVICES.format(value), attribute.name)


def _check_name(_: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None and (not isinstance(value, str) or not NAME_RE.match(value)):
        raise _fail(f"{name_problem(value)} It becomes a directory name.", attribute.name)


def _check_seed(_: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not _is_int(value):
        raise _fail(f"the seed must be an integer, got {value!r}.", attribute.name)


def _check_description(_: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, str):
        raise _fail(f"the description must be a string (text in quotes), got {value!r}.", attribute.name)


@attrs.frozen(kw_only=True)
class PipelineMeta:
    """The ``[pipeline]`` table.

    Attributes:
        name: the pipeline's name (letters, digits, ``.``, ``_``, ``-``; it names the run
            directory), or ``None`` to take the file's stem.
        seed: the root seed (an integer).
        description: free text.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"mps"``; a stage's own ``device`` overrides it.
    """

    fix: ClassVar[str] = "[pipeline] takes name, seed, description and device."

    name: Any = attrs.field(default=None, validator=_check_name)
    seed: Any = attrs.field(default=0, validator=_check_seed)
    description: Any = attrs.field(default="", validator=_check_description)
    device: Any = attrs.field(default="cpu", validator=_check_device)


def _check_use(_: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is None:
        raise _fail("missing 'use' (the registered component to build, e.g. use = \"mala\").", "use")


def _check_kind(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    allowed = type(instance).kinds
    if value is not None and value not in allowed:
        raise _fail(
            f"kind '{value}' is not allowed in [{type(instance).section}.*]; use one of "
            f"{', '.join(allowed)}.{suggest(str(value), allowed)}",
            "kind",
        )


def _check_source(_: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None and (not isinstance(value, str) or not NAME_RE.match(value)):
        raise _fail(f"'source' must name the table this one was expanded from, got {value!r}.", "source")


def _check_replicate(_: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None and (not _is_int(value) or value < 0):
        raise _fail(f"'replicate' must be an integer >= 0, got {value!r}.", "replicate")


@attrs.frozen(kw_only=True)
class TaskTable:
    """The reserved keys of a ``[task.NAME]`` table (after expansion).

    Attributes:
        use: the registered component name.
        kind: its registry kind, to choose between components of one name (one of :attr:`kinds`).
        source: the table this one was expanded from (``None``: not expanded).
        replicate: the replicate index of a repeated table, else ``None``.
        device: the device of its generator (``None``: the pipeline's).
    """

    section: ClassVar[str] = "task"
    kinds: ClassVar[tuple[str, ...]] = tuple(TASK_KINDS)
    #: keys that belong elsewhere, with the fix (shown instead of "unknown key")
    misplaced: ClassVar[dict[str, str]] = {
        "inputs": "tasks take no inputs; move this table to [stage.NAME].",
        "save": "tasks are not saved; 'save' belongs in a [stage.NAME] table.",
        "save_thin": "tasks are not saved; 'save_thin' belongs in a [stage.NAME] table.",
    }

    use: Any = attrs.field(default=None, validator=_check_use)
    kind: Any = attrs.field(default=None, validator=_check_kind)
    source: Any = attrs.field(default=None, validator=_check_source)
    replicate: Any = attrs.field(default=None, validator=_check_replicate)
    device: Any = attrs.field(default=None, validator=_check_device)


def _check_inputs(_: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, Mapping):
        raise _fail('inputs must be a table, e.g. inputs = { target = "gmm" }.', "inputs")
    for arg, ref in value.items():
        if not (
            isinstance(ref, str) or (isinstance(ref, list) and ref and all(isinstance(r, str) for r in ref))
        ):
            raise _fail(
                f"input '{arg}' must name a task or stage, or a list of them; got {ref!r}.", f"inputs.{arg}"
            )


def _check_save(_: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, bool):
        raise _fail(f"save must be true or false, got {value!r}.", "save")


def _check_thin(_: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not _is_int(value) or value < 1:
        raise _fail(
            f"save_thin must be an integer >= 1 (keep every N-th draw on disk), got {value!r}.", "save_thin"
        )


@attrs.frozen(kw_only=True)
class StageTable(TaskTable):
    """The reserved keys of a ``[stage.NAME]`` table (after expansion): a task table's, and these.

    Attributes:
        inputs: ``{argument: node name or list of node names}``.
        save: whether the run writes the stage's artifact to disk.
        save_thin: keep every ``save_thin``-th draw of a sampler's ``Samples`` on disk.
    """

    section: ClassVar[str] = "stage"
    kinds: ClassVar[tuple[str, ...]] = tuple(INTERFACES)
    misplaced: ClassVar[dict[str, str]] = {}

    inputs: Any = attrs.field(factory=dict, validator=_check_inputs)
    save: Any = attrs.field(default=True, validator=_check_save)
    save_thin: Any = attrs.field(default=1, validator=_check_thin)


#: keys consumed by expansion (``repeat = N``, ``matrix = {...}``)
EXPANSION_KEYS = frozenset({"repeat", "matrix"})
#: the one set of reserved keys of a task or stage table; every other key is a component parameter
RESERVED = frozenset(attrs.fields_dict(StageTable)) | EXPANSION_KEYS
#: reserved keys a ``matrix`` may not vary (it may vary ``use``, ``inputs.ARG`` and ``device``)
NOT_VARIED = RESERVED - {"use", "inputs", "device"}


def table_keys(cls: type[TaskTable]) -> tuple[str, ...]:
    """The reserved keys a ``[task.*]`` (``TaskTable``) or ``[stage.*]`` table may hold.

    In declaration order followed by the expansion keys, without ``source`` and ``replicate``
    (which expansion writes); used to suggest ``inputs`` for ``input``.
    """
    return (*(k for k in attrs.fields_dict(cls) if k not in WRITTEN_BY_EXPANSION), *sorted(EXPANSION_KEYS))


def split_table(table: Mapping[str, Any], cls: type[TaskTable]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(reserved keys, component parameters)`` of a table; keys misplaced in ``cls`` count as reserved."""
    reserved = {k: v for k, v in table.items() if k in RESERVED or k in cls.misplaced}
    return reserved, {k: v for k, v in table.items() if k not in reserved}


def structure(data: Mapping[str, Any], cls: type[Any], table: str) -> Any:
    """Structure ``data`` into ``cls`` with the component converter, translating every error.

    Args:
        data: the table's reserved keys (for :class:`PipelineMeta`: the whole ``[pipeline]`` table).
        cls: :class:`PipelineMeta`, :class:`TaskTable` or :class:`StageTable`.
        table: the table's name for the error (``"pipeline"``, ``"stage.mala"``).

    Raises:
        ConfigError: an unknown or misplaced key (with close matches and the fix), or a value a
            validator refuses, naming ``table`` and the key.
    """
    try:
        return CONVERTER.structure(dict(data), cls)
    except ClassValidationError as exc:
        raise _translate(exc, cls, table) from None


def _translate(exc: ClassValidationError, cls: type[Any], table: str) -> ConfigError:
    first = exc.exceptions[0]
    if isinstance(first, ConfigError):
        return ConfigError(first.reason, table=table, key=first.key)
    if isinstance(first, ForbiddenExtraKeysError):
        bad = sorted(first.extra_fields)[0]
        misplaced = getattr(cls, "misplaced", {})
        if bad in misplaced:
            return ConfigError(misplaced[bad], table=table, key=bad)
        names = [f.name for f in attrs.fields(cls)]
        return ConfigError(
            f"unknown key.{suggest(bad, names)} {getattr(cls, 'fix', '')}".rstrip(), table=table, key=bad
        )
    return ConfigError(str(first), table=table)
