"""Non-finite settings: NaN is refused for every float parameter of every installed component, and
``inf`` wherever the component does not declare a meaning for it (``param(..., infinite=True)``)."""

from __future__ import annotations

import math
import typing

import attrs
import pytest

from quadriga.components import build
from quadriga.errors import ConfigError
from quadriga.interfaces import KIND_BASES
from quadriga.registry import Registry


def _float_fields():
    """``(kind, name, field, infinite allowed)`` for every float field with a default, every component."""
    registry = Registry(use_env=False)
    out = []
    for spec in sorted((s for s in registry.specs() if s.kind in KIND_BASES), key=lambda s: (s.kind, s.name)):
        try:
            cls = registry.load_class(spec)
        except Exception:  # an optional extra that is not installed: its own tests cover it
            continue
        if not attrs.has(cls) or any(f.default is attrs.NOTHING for f in attrs.fields(cls)):
            continue  # a required parameter would be the first error
        try:
            hints = typing.get_type_hints(cls)
        except NameError:  # an annotation only importable under TYPE_CHECKING: read the strings
            names = {"float": float, "float | None": float | None}
            hints = {f.name: names.get(f.type) for f in attrs.fields(cls)}
        for field in attrs.fields(cls):
            if hints.get(field.name) in (float, float | None) and field.default is not attrs.NOTHING:
                out.append((spec.kind, spec.name, field.name, field.metadata.get("infinite", False)))
    return registry, out


REGISTRY, FIELDS = _float_fields()


def test_the_class_is_not_empty():
    assert len(FIELDS) >= 50, len(FIELDS)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
def test_every_float_parameter_refuses_what_it_gives_no_meaning(value):
    accepted = []
    for kind, name, key, infinite in FIELDS:
        try:
            build(REGISTRY, name, {key: value}, kinds=(kind,), file="p.toml", table=f"stage.{name}")
        except ConfigError as exc:
            assert exc.key == key and exc.file == "p.toml", (name, key, exc)
            continue
        except Exception as exc:  # refused later, by the component's own code: still refused
            pytest.fail(f"{kind} {name}.{key} = {value}: not a ConfigError but {exc!r}")
        if math.isnan(value) or not infinite:
            accepted.append(f"{kind} {name}.{key}")
    assert not accepted, accepted
