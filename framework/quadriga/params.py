"""Declaring a component's hyperparameters.

Components are attrs classes whose fields are their hyperparameters; ``param``
is :func:`attrs.field` with the one-line documentation that ``quadriga info``
shows stored in the field's metadata::

    @attrs.define(kw_only=True)
    class MALA(Sampler):
        step_size: float = param(0.1, doc="Langevin step size h (units of x squared)",
                                 validator=attrs.validators.gt(0))
"""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["STANDARD_NAMES", "describe_params", "param", "standard_name"]

_NOTHING = attrs.NOTHING

#: One word per hyperparameter: the standard name of a concept -> the synonyms a component must
#: not use for it (the conformance check ``param-names`` flags them). Counts are ``num_<noun>``,
#: as ``num_samples``, ``num_steps`` and ``num_chains`` already are; ``learning_rate`` is the
#: optimizer's step size, as in CleanRL, Keras and optax; ``num_epochs`` counts passes over the
#: training data; ``hidden_sizes`` is the list of hidden-layer widths of a network.
STANDARD_NAMES: dict[str, tuple[str, ...]] = {
    "learning_rate": ("lr", "learningrate", "step_lr"),
    "num_epochs": ("epochs", "n_epochs", "nepochs", "max_epochs", "passes", "num_passes", "n_passes"),
    "hidden_sizes": ("hidden", "hidden_dims", "hidden_dim", "hidden_size", "hidden_layers", "hidden_units"),
    "num_samples": ("n_samples", "nsamples"),
    "num_steps": ("n_steps", "nsteps"),
    "num_chains": ("n_chains", "nchains"),
    "batch_size": ("batchsize", "bs"),
}
_SYNONYMS = {synonym: standard for standard, synonyms in STANDARD_NAMES.items() for synonym in synonyms}


def standard_name(name: str) -> str | None:
    """The standard word for a hyperparameter named ``name`` when ``name`` is a known synonym.

    ``lr`` inside a compound name counts too (``dual_lr`` -> ``dual_learning_rate``, ``lr_grid`` ->
    ``learning_rate_grid``); the other synonyms only as whole names (``hidden_sizes`` is standard).

    Returns:
        The standard name, or ``None`` when ``name`` is not a known synonym (standard names included).
    """
    if name in _SYNONYMS:
        return _SYNONYMS[name]
    words = name.split("_")
    if "lr" in words:
        return "_".join("learning_rate" if word == "lr" else word for word in words)
    return None


def param(
    default: Any = _NOTHING,
    *,
    doc: str = "",
    validator: Any = None,
    factory: Any = None,
    converter: Any = None,
    toml_type: str | None = None,
    infinite: bool = False,
) -> Any:
    """Declare one hyperparameter of a component.

    Args:
        default: the default value; omit it for a required parameter.
        doc: a one-line description with units, shown by ``quadriga info``.
        validator: an attrs validator (or list of them) run when the component is built.
        factory: a zero-argument callable producing the default (for lists and dicts).
        converter: an attrs converter.
        toml_type: the type a pipeline file gives, as ``quadriga info`` shows it (e.g.
            ``"list[list[float]] | None"``), for a field annotated ``Any`` because it holds
            something else once built (a tensor made from a nested list); it checks nothing.
        infinite: whether ``inf``/``-inf`` is a meaningful value here (a threshold meaning "no
            limit"); without it a pipeline's infinite value is refused when the component is built.
            NaN is never accepted.

    Returns:
        An :func:`attrs.field` to be assigned in the class body.
    """
    kwargs: dict[str, Any] = {"metadata": {"doc": doc}}
    if toml_type is not None:
        kwargs["metadata"]["toml_type"] = toml_type
    if infinite:
        kwargs["metadata"]["infinite"] = True
    if factory is not None:
        kwargs["factory"] = factory
    elif default is not _NOTHING:
        kwargs["default"] = default
    if validator is not None:
        kwargs["validator"] = validator
    if converter is not None:
        kwargs["converter"] = converter
    return attrs.field(**kwargs)


def _type_name(tp: Any) -> str:
    if tp is None:
        return "any"
    if isinstance(tp, str):
        return tp
    name = getattr(tp, "__name__", None)
    if name and not getattr(tp, "__args__", None):
        return name
    return str(tp).replace("typing.", "")


def describe_params(cls: type) -> list[dict[str, str]]:
    """List the hyperparameters of an attrs component class.

    Args:
        cls: an attrs class.

    Returns:
        One dict per field, in declaration order, with keys ``name``, ``type`` (the
        field's ``toml_type`` when :func:`param` was given one, else its annotation),
        ``default`` (``"required"`` when there is none) and ``doc``.

    Raises:
        TypeError: if ``cls`` is not an attrs class.
    """
    try:
        attrs.resolve_types(cls)
    except Exception:  # unresolved forward references: fall back to the strings
        pass
    rows = []
    for f in attrs.fields(cls):
        if not f.init or f.name.startswith("_"):
            continue
        if f.default is _NOTHING:
            default = "required"
        elif isinstance(f.default, attrs.Factory):  # type: ignore[arg-type]
            try:
                default = repr(f.default.factory())
            except Exception:
                default = "(computed)"
        else:
            default = repr(f.default)
        rows.append(
            {
                "name": f.name,
                "type": f.metadata.get("toml_type") or _type_name(f.type),
                "default": default,
                "doc": f.metadata.get("doc", ""),
            }
        )
    return rows
