"""Building components from configuration with cattrs, strictly.

``build_component`` resolves a registered name, imports its class and structures
the parameters with a :class:`cattrs.Converter` that forbids extra keys and does
not coerce types (``"0.1"`` is not a float, ``1.5`` is not an int). A field typed
with an interface (``base_kernel: Sampler``) accepts ``"mala"`` or
``{ use = "mala", step_size = 0.1 }`` and is built through the same registry, so
composition by name works at every level. Every error is a
:class:`~quadriga.errors.ConfigError` naming the file, table and key, and an
unknown key lists the valid parameters with their types.
"""

from __future__ import annotations

import contextvars
import math
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import attrs
import cattrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError

from quadriga.errors import ConfigError, QuadrigaError, out_of_memory_text, suggest
from quadriga.interfaces import KIND_BASES, Component
from quadriga.params import describe_params

if TYPE_CHECKING:
    from quadriga.registry import Registry, Spec

__all__ = [
    "CONVERTER",
    "Built",
    "as_component",
    "build",
    "build_component",
    "component_config",
    "kinds_for_base",
    "valid_params_text",
]


def kinds_for_base(base: type) -> tuple[str, ...]:
    """The registry kinds whose base class is ``base`` or a subclass of it."""
    kinds = tuple(k for k, b in KIND_BASES.items() if issubclass(b, base))
    return kinds or tuple(KIND_BASES)


def valid_params_text(cls: type) -> str:
    """``"step_size: float = 0.1, num_chains: int = 4"`` for the error messages."""
    rows = describe_params(cls)
    if not rows:
        return "it takes no parameters"
    return "valid parameters: " + ", ".join(f"{r['name']}: {r['type']} = {r['default']}" for r in rows)


def _parses_as(text: str, tp: type) -> bool:
    """Whether ``text`` written without quotes would be a TOML value of type ``tp``."""
    try:
        value = tomllib.loads(f"v = {text.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        return False
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, tp) and not (tp is int and isinstance(value, bool))


def _strict(tp: type) -> Any:
    def hook(value: Any, _: Any) -> Any:
        ok = {
            int: isinstance(value, int) and not isinstance(value, bool),
            float: isinstance(value, (int, float)) and not isinstance(value, bool),
            bool: isinstance(value, bool),
            str: isinstance(value, str),
        }[tp]
        if ok and tp is float and value != value:
            raise ConfigError("NaN is never a valid setting; give a number.")
        if not ok:
            hint = ""
            if isinstance(value, str) and tp in (int, float, bool) and _parses_as(value, tp):
                hint = " (write it without quotes)"
            elif isinstance(value, str) and tp is bool and value.strip().lower() in ("true", "false"):
                hint = f" (TOML's booleans are lower case: write {value.strip().lower()})"
            raise TypeError(f"expected {tp.__name__}, got {type(value).__name__} {value!r}{hint}")
        return float(value) if tp is float else value

    return hook


@attrs.frozen
class Built:
    """What :func:`build` returns: the component, the registry entry it was built from, its config.

    Attributes:
        component: the component instance.
        spec: the registry's spec (``.kind``, ``.name``, ``.distribution``, ``.target``).
        config: the resolved parameters, every default filled in, nested components as
            ``{"use": name, ...}`` tables (TOML-ready).
    """

    component: Any
    spec: Spec
    config: dict[str, Any]


@attrs.define
class _Context:
    registry: Registry
    file: str | None
    table: str
    table_keys: tuple[str, ...] = ()  # the table's own keys (``inputs``): suggested when close
    names: dict[int, str] = attrs.field(factory=dict)  # id(nested component) -> registered name
    keep: list[Any] = attrs.field(factory=list)  # keeps nested components alive while the ids are used


_CONTEXT: contextvars.ContextVar[_Context] = contextvars.ContextVar("quadriga_build")


def _is_component_type(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, Component) and t is not Component and not attrs.has(t)


def _nested(value: Any, tp: type) -> Any:
    if isinstance(value, Component):
        return value
    if isinstance(value, str):
        value = {"use": value}
    if not isinstance(value, Mapping) or "use" not in value:
        raise TypeError(
            f"expected a component name or a table with 'use' (e.g. {{ use = \"name\" }}), got {value!r}"
        )
    params = dict(value)
    use = params.pop("use")
    kind = params.pop("kind", None)
    ctx = _CONTEXT.get()
    obj, spec = _structure(ctx, use, params, kinds=(kind,) if kind else kinds_for_base(tp))
    ctx.names[id(obj)] = spec.name
    ctx.keep.append(obj)
    return obj


def as_component(base: type) -> attrs.Converter:
    """An attrs converter for a parameter that is itself a component (``base_kernel: Sampler``).

    From a pipeline file the converter has nothing to do: the field's type makes :data:`CONVERTER`
    build ``"mala"`` or ``{ use = "mala", step_size = 0.1 }`` through the registry. This converter
    gives the same three spellings when the class is constructed in Python::

        base_kernel: Sampler = param(factory=_default_kernel, doc="...", converter=as_component(Sampler))

        SRMC(base_kernel="mala")
        SRMC(base_kernel={"use": "mala", "step_size": 0.05})
        SRMC(base_kernel=MALA(step_size=0.05))

    Args:
        base: the interface or task class the parameter accepts (``Sampler``, ``Target``, ...); the
            name is looked up among the registry kinds derived from it.

    Raises:
        ConfigError: (when the converter runs) an unknown name, a bad nested parameter or a value
            that is none of the three, with the key ``field.nested_key``.
    """

    def convert(value: Any, field: attrs.Attribute) -> Any:
        if isinstance(value, Component) or value is None:
            return value
        ctx = _CONTEXT.get(None)
        if ctx is not None:  # structuring a pipeline table: build with its context
            return _nested(value, base)
        if isinstance(value, str):
            value = {"use": value}
        if not isinstance(value, Mapping) or "use" not in value:
            raise ConfigError(
                f"{field.name} must be a registered {base.__name__} name, a table with 'use' "
                f"(e.g. {{'use': 'name'}}) or a built {base.__name__}, got {value!r}.",
                key=field.name,
            )
        from quadriga.registry import get_registry  # the process-wide registry, when built from Python

        params = dict(value)
        use = params.pop("use")
        kind = params.pop("kind", None)
        try:
            built = build(get_registry(), use, params, kinds=(kind,) if kind else kinds_for_base(base))
        except ConfigError as exc:
            raise ConfigError(exc.reason, key=f"{field.name}.{exc.key}" if exc.key else field.name) from None
        return built.component

    return attrs.Converter(convert, takes_field=True)


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True)
    for tp in (int, float, bool, str):
        conv.register_structure_hook(tp, _strict(tp))
    conv.register_structure_hook_func(_is_component_type, _nested)
    conv.register_structure_hook(Any, lambda v, _: v)
    return conv


#: the one converter that structures every component (configured once; hooks read the build context).
CONVERTER = _make_converter()


def _structure(
    ctx: _Context, use: Any, params: Mapping[str, Any], *, kinds: tuple[str, ...], key_prefix: str = ""
) -> tuple[Any, Any]:
    if not isinstance(use, str):
        raise ConfigError(
            f"'use' must be a component name (a string), got {use!r}.",
            file=ctx.file,
            table=ctx.table,
            key="use",
        )
    try:
        spec = ctx.registry.get(use, kinds)
    except ConfigError as exc:
        raise ConfigError(exc.reason, file=ctx.file, table=ctx.table, key=key_prefix + "use") from None
    except QuadrigaError as exc:
        raise ConfigError(str(exc), file=ctx.file, table=ctx.table, key=key_prefix + "use") from None
    cls = ctx.registry.load_class(spec)
    base = KIND_BASES[spec.kind]
    if not (isinstance(cls, type) and issubclass(cls, base) and attrs.has(cls)):
        raise QuadrigaError(
            f"{spec.kind} '{spec.name}' from '{spec.distribution}' ({spec.target}) is not an "
            f"attrs class derived from quadriga.interfaces.{base.__name__}; "
            "report this to the plugin's authors."
        )
    errors = _Errors(ctx.file, ctx.table, ctx.table_keys)  # used only at the top level (no prefix)
    _refuse_infinite(cls, params, ctx, key_prefix)
    try:
        obj = CONVERTER.structure(dict(params), cls)
    except ClassValidationError as exc:
        raise errors.translate(exc, cls, key_prefix) from None
    except (TypeError, ValueError, ConfigError, MemoryError) as exc:
        raise errors.value_error(exc, cls, key_prefix) from None
    except RuntimeError as exc:  # torch's allocator: "can't allocate memory: you tried to allocate N bytes"
        if _out_of_memory(exc, cls) is None:
            raise
        raise errors.value_error(exc, cls, key_prefix) from None
    return obj, spec


def _refuse_infinite(cls: type, params: Mapping[str, Any], ctx: _Context, prefix: str) -> None:
    """Refuse ``inf``/``-inf`` given for a parameter that does not declare a meaning for it.

    A component gives infinity a meaning with ``param(..., infinite=True)`` (a clipping threshold
    that means "no clipping"); anywhere else an infinite learning rate, step size or guidance weight
    is a typo that would only fail later, inside the run.

    Raises:
        ConfigError: naming the key, the value and how to declare the meaning.
    """
    for field in attrs.fields(cls):
        value = params.get(field.name)
        if (
            isinstance(value, float)
            and value in (math.inf, -math.inf)
            and not field.metadata.get("infinite", False)
        ):
            raise ConfigError(
                f"{field.name} = {value} is not a setting this component gives a meaning to; give a "
                "finite number (a component that means something by infinity declares "
                "param(..., infinite=True)).",
                file=ctx.file,
                table=ctx.table,
                key=prefix + field.name,
            )


def _out_of_memory(exc: BaseException, cls: type) -> str | None:
    """A plain message when building ``cls`` ran out of memory (the allocator's words otherwise)."""
    return out_of_memory_text(exc, f"building {_label(cls)}")


class _Errors:
    def __init__(self, file: str | None, table: str, table_keys: tuple[str, ...] = ()) -> None:
        self.file, self.table, self.table_keys = file, table, table_keys

    def value_error(self, exc: Exception, cls: type, prefix: str) -> ConfigError:
        if isinstance(exc, ConfigError):  # a quadriga validator: it names its key
            key = prefix + exc.key if exc.key else None
            return ConfigError(exc.reason, file=self.file, table=self.table, key=key)
        memory = _out_of_memory(exc, cls)
        if memory is not None:
            return ConfigError(memory, file=self.file, table=self.table)
        msg = _message(exc)
        return ConfigError(
            f"invalid value: {msg}. {valid_params_text(cls)}.", file=self.file, table=self.table
        )

    def translate(self, exc: BaseException, cls: type, prefix: str) -> ConfigError:
        for err, path in _walk(exc, []):
            if isinstance(err, ConfigError):
                inner = [str(p) for p in path] + ([err.key] if err.key else [])
                return ConfigError(err.reason, file=self.file, table=self.table, key=prefix + ".".join(inner))
            if isinstance(err, ForbiddenExtraKeysError):
                names = [f.name for f in attrs.fields(cls)]
                bad = sorted(err.extra_fields)[0]
                key: str | None = prefix + ".".join(str(p) for p in [*path, bad])
                own = self.table_keys if not path and not prefix else ()
                hint = suggest(bad, [*names, *own])
                if any(f"'{k}'" in hint for k in own):
                    section = self.table.split(".", 1)[0] or "table"
                    hint += f" ({section} keys: {', '.join(own)})"
                return ConfigError(
                    f"unknown parameter '{bad}' for {_label(cls)}.{hint} {valid_params_text(cls)}.",
                    file=self.file,
                    table=self.table,
                    key=key,
                )
            key = prefix + ".".join(str(p) for p in path) if path else None
            memory = _out_of_memory(err, cls)
            if memory is not None:
                return ConfigError(memory, file=self.file, table=self.table, key=key)
            msg = _message(err)
            typ = ""
            if path and isinstance(path[0], str):
                field = attrs.fields_dict(cls).get(path[0])
                if field is not None:
                    typ = f" (expected {describe_type(field.type)})"
            if typ and "expected" in msg:
                typ = ""
            return ConfigError(f"invalid value{typ}: {msg}.", file=self.file, table=self.table, key=key)
        return ConfigError(str(exc), file=self.file, table=self.table)


def _message(exc: BaseException) -> str:
    """The human part of an exception (attrs validators put the message first in ``args``)."""
    if exc.args and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


def describe_type(tp: Any) -> str:
    """A short readable name of a type annotation."""
    name = getattr(tp, "__name__", None)
    if name and not getattr(tp, "__args__", None):
        return name
    return str(tp).replace("typing.", "")


def _label(cls: type) -> str:
    return cls.__name__


def _walk(exc: BaseException, path: list[Any]) -> Any:
    if isinstance(exc, ForbiddenExtraKeysError) or not isinstance(
        exc, (ClassValidationError, IterableValidationError)
    ):
        yield exc, path
        return
    with_notes, without = exc.group_exceptions()
    for err, note in with_notes:
        step = getattr(note, "name", None)
        if step is None:
            step = getattr(note, "index", "?")
        yield from _walk(err, [*path, step])
    for err in without:
        yield from _walk(err, path)


def build(
    registry: Registry,
    use: str,
    params: Mapping[str, Any],
    *,
    kinds: tuple[str, ...],
    file: str | None = None,
    table: str = "",
    table_keys: tuple[str, ...] = (),
) -> Built:
    """Build a registered component from its name and parameters.

    Args:
        registry: the :class:`~quadriga.registry.Registry`.
        use: the registered name.
        params: the parameters (TOML values).
        kinds: the kinds the name may be (``("sampler", "learner", ...)``).
        file: the pipeline file, for error messages.
        table: the table, e.g. ``"stage.srmc"``, for error messages.
        table_keys: the table's own (reserved) keys, e.g. ``("use", "inputs", ...)``: an unknown
            parameter close to one of them is answered with it ("Did you mean 'inputs'?").

    Returns:
        :class:`Built`: the component, its registry spec and its resolved configuration.

    Raises:
        ConfigError: unknown name (with close matches), unknown parameter (with the
            valid ones), wrong type, or a validator's complaint.
    """
    ctx = _Context(registry, file, table, tuple(table_keys))
    token = _CONTEXT.set(ctx)
    try:
        obj, spec = _structure(ctx, use, params, kinds=kinds)
        config = _config(obj, registry, ctx.names)
    finally:
        _CONTEXT.reset(token)
    return Built(obj, spec, config)


def build_component(
    registry: Registry,
    use: str,
    params: Mapping[str, Any],
    *,
    kinds: tuple[str, ...],
    file: str | None = None,
    table: str = "",
) -> Any:
    """:func:`build`, returning the component only."""
    return build(registry, use, params, kinds=kinds, file=file, table=table).component


def _registered_name(registry: Registry | None, value: Any) -> str | None:
    """The registered name of a component built in Python (e.g. a default), found by its class path."""
    if registry is None:
        return None
    cls = type(value)
    spec = registry.component_of(f"{cls.__module__}:{cls.__qualname__}")
    return spec.name if spec is not None else None


def component_config(obj: Any, registry: Registry | None = None) -> dict[str, Any]:
    """The resolved configuration of a component: its parameters, nested components as tables.

    Nested components are named through ``registry`` by their class (prefer :attr:`Built.config`,
    which knows the names used when building).

    Returns:
        ``{param: value}`` with every default filled in; nested components become ``{"use": name, ...}``.
    """
    return _config(obj, registry, {})


def _config(obj: Any, registry: Registry | None, names: Mapping[int, str]) -> dict[str, Any]:
    def unstructure(value: Any) -> Any:
        cls = type(value)
        if isinstance(value, Component) and attrs.has(cls):
            out: dict[str, Any] = {}
            name = names.get(id(value)) or _registered_name(registry, value)
            if name is not None:
                out["use"] = name
            for f in attrs.fields(cls):
                if f.init and not f.name.startswith("_"):
                    out[f.name] = unstructure(getattr(value, f.name))
            return out
        if isinstance(value, Mapping):
            return {k: unstructure(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [unstructure(v) for v in value]
        return value

    out = unstructure(obj)
    out.pop("use", None)
    return _toml_safe(out)


def _toml_safe(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _toml_safe(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_toml_safe(v) for v in value if v is not None]
    if hasattr(value, "tolist"):
        return value.tolist()
    return value
