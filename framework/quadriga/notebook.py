"""The Python path: build a component by name, register one defined in a notebook, tidy a run.

Everything a pipeline does by name works from Python too::

    import quadriga

    gmm = quadriga.build("target", "gaussian-mixture", preset="4-mode-2d")
    mala = quadriga.build("sampler", "mala", step_size=0.1)
    samples = mala.sample(gmm, generator=torch.Generator().manual_seed(0))

    run = quadriga.load_run("runs/gmm-mcmc-baselines/20261201T122438Z")
    run                      # one line per stage, no tensors
    run.artifacts["mala"]    # the saved Samples, loaded on first access
    df = run.to_pandas()     # columns stage, component, subject, metric, value, ...

and a component written in a notebook cell is used by name once registered::

    @attrs.define(kw_only=True)
    class MySampler(quadriga.Sampler):
        step_size: float = quadriga.param(0.1, doc="step size")
        def sample(self, target, *, generator): ...

    quadriga.register("sampler", "my-sampler", MySampler, summary="my first sampler")
    quadriga.api.run({"pipeline": {...}, "stage": {"mine": {"use": "my-sampler", ...}}})

In Jupyter, :func:`quadriga.api.run` shows a table of progress bars in the cell's output
(:class:`JupyterProgress`; ``progress=False`` turns it off, ``progress=True`` asks for bars or
progress lines outside Jupyter too).

This module holds :func:`build`, :func:`register` and :func:`to_pandas`; the rest of the
notebook's surface lives one job per module, on the layer it belongs to, and is re-exported
here: reading a saved run (:mod:`quadriga.rundir.loaded`), the tidy-row schema
(:mod:`quadriga.rundir.tidy`), the one-line reprs (:mod:`quadriga._repr`) and the progress
displays (:mod:`quadriga.progress_display`).

Parameters given to :func:`build` are checked exactly as in a pipeline file: an unknown name or
a wrong type is a :class:`~quadriga.errors.ConfigError` naming the parameter and the fix.
Nothing here imports torch until an artifact is loaded.
"""

from __future__ import annotations

import json
import types
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from quadriga._repr import compact_repr, component_repr
from quadriga.errors import ConfigError
from quadriga.progress_display import JupyterProgress, in_jupyter, progress_display
from quadriga.rundir.loaded import LoadedRun, load_run, read_run_file
from quadriga.rundir.tidy import COLUMNS, tidy_rows

if TYPE_CHECKING:
    from quadriga.registry import Registry

__all__ = [
    "COLUMNS",
    "JupyterProgress",
    "LoadedRun",
    "build",
    "compact_repr",
    "component_repr",
    "in_jupyter",
    "load_run",
    "progress_display",
    "read_run_file",
    "register",
    "to_pandas",
]

#: the plugin name that components registered from Python carry (``quadriga list`` shows it)
NOTEBOOK_PLUGIN = "notebook"

#: classes registered by :func:`register`; targets are ``"quadriga.notebook:registered.<attr>"``
registered = types.SimpleNamespace()


def _registry(registry: Registry | None) -> Registry:
    from quadriga.registry import get_registry

    return registry if registry is not None else get_registry()


def build(kind: str, name: str, /, *, registry: Registry | None = None, **params: Any) -> Any:
    """Build the registered component ``name`` of ``kind`` with ``params``, as a pipeline table would.

    Args:
        kind: ``sampler``, ``learner``, ``estimator``, ``evaluator``, ``target``, ``dataset`` or
            ``environment``.
        name: the registered name, e.g. ``"mala"``.
        registry: defaults to the process-wide one.
        **params: the component's parameters (TOML-like values; nested components as
            ``{"use": name, ...}`` dicts).

    Returns:
        The component instance (a target or dataset still needs ``prepare(generator=...)`` when it
        draws random data, as the runner does).

    Raises:
        ConfigError: unknown kind or name (with close matches), unknown parameter (with the valid
            ones), a value of the wrong type or rejected by a validator.
    """
    from quadriga.components import build as build_built
    from quadriga.errors import suggest
    from quadriga.registry import KINDS

    if not isinstance(kind, str) or kind not in KINDS:
        hint = suggest(kind, KINDS) if isinstance(kind, str) else ""
        raise ConfigError(
            f"unknown kind {kind!r}; use one of {', '.join(KINDS)}.{hint}",
            key="kind",
        )
    if not isinstance(name, str) or not name:
        raise ConfigError(
            f"quadriga.build({kind!r}, {name!r}): name must be a registered name (a non-empty "
            f"string such as 'mala'); `quadriga list --kind {kind}` lists them.",
            key="name",
        )
    table = f"quadriga.build({kind!r}, {name!r})"
    return build_built(_registry(registry), name, params, kinds=(kind,), table=table).component


def register(
    kind: str,
    name: str,
    cls: type,
    *,
    summary: str = "",
    paper: str = "",
    tags: Iterable[str] = (),
    registry: Registry | None = None,
) -> None:
    """Register a component class defined in this process (a notebook cell, a script) under ``name``.

    Afterwards ``name`` works everywhere a plugin's component does in this process: :func:`build`,
    pipelines run by :func:`quadriga.api.run`, ``quadriga.testing.check_component``. Registering the
    same kind and name again replaces the earlier class (re-running a cell). Processes started
    later (``quadriga sweep`` workers, the command line) do not see it: for those, put the class in
    a plugin (``quadriga new plugin NAME``).

    Args:
        kind: the component kind (``sampler``, ``learner``, ...).
        name: lowercase words joined by dashes, e.g. ``"my-sampler"``.
        cls: an attrs class implementing the kind's interface (``quadriga.Sampler``, ...).
        summary: one line for ``quadriga list``.
        paper: the reference for ``quadriga info``.
        tags: capability tags from :data:`quadriga.tags.TAGS` (``("mcmc", "needs-score")``), for
            ``quadriga list --where``.
        registry: defaults to the process-wide one.

    Raises:
        ConfigError: ``cls`` is not a class deriving from the kind's interface, or not an attrs class;
            ``name`` is already taken by an installed plugin's component of the same kind (the
            error names its distribution; pick another name).
        QuadrigaError: unknown kind, malformed name or a tag outside the vocabulary.
        DuplicateComponentError: (when used) a plugin registers the same kind and name.
    """
    from quadriga.interfaces import KIND_BASES
    from quadriga.registry import PluginRegistrar, PluginStatus

    if not isinstance(cls, type) or not attrs.has(cls):
        raise ConfigError(
            f"register({kind!r}, {name!r}, ...) needs an attrs class (decorate it with @attrs.define), "
            f"got {cls!r}.",
            key="cls",
        )
    base = KIND_BASES.get(kind)
    if base is not None and not issubclass(cls, base):
        raise ConfigError(
            f"register({kind!r}, {name!r}, {cls.__name__}): {cls.__name__} does not derive from the "
            f"interface of a {kind}: write class {cls.__name__}(quadriga.{base.__name__}).",
            key="cls",
        )
    reg = _registry(registry)
    reg.load()
    attr = f"{kind}__{name}"
    # re-running a cell replaces the earlier registration instead of colliding with it
    key = (kind, name)
    table = reg._table  # the registry's one table of specs; only notebook entries are removed here
    taken = [s for s in table.get(key, []) if s.plugin != NOTEBOOK_PLUGIN]
    if taken:
        owner = taken[0].distribution or taken[0].plugin
        raise ConfigError(
            f"register({kind!r}, {name!r}, ...): the installed distribution {owner!r} already has a "
            f"{kind} named {name!r}; register this class under another name, e.g. "
            f"'my-{name}'.",
            key="name",
        )
    setattr(registered, attr, cls)
    if key in table:
        table[key] = [s for s in table[key] if s.plugin != NOTEBOOK_PLUGIN]
        if not table[key]:
            del table[key]
    reg.plugins.setdefault(
        NOTEBOOK_PLUGIN, PluginStatus(NOTEBOOK_PLUGIN, NOTEBOOK_PLUGIN, entry_point=__name__)
    )
    PluginRegistrar(reg, NOTEBOOK_PLUGIN, NOTEBOOK_PLUGIN).add(
        kind, name, f"{__name__}:registered.{attr}", summary=summary, paper=paper, tags=tags
    )


def to_pandas(source: Any) -> Any:
    """A tidy :class:`pandas.DataFrame` of numbers (typed ``Any``: pandas is imported on call).

    One row per stage x subject x metric, in the schema the sweep table shares
    (:mod:`quadriga.rundir.tidy`).

    Columns: ``pipeline, run_id, seed, stage, component, type, subject, metric, value`` and, for a
    sweep, one column per swept key. An evaluator's ``"mala[0]/tv"`` is subject ``mala[0]``, metric
    ``tv``; a sampler's diagnostics (``acceptance_rate``, evaluation counts) and an estimate's value
    and standard error are rows with the stage as subject.

    Args:
        source: a :class:`LoadedRun`, a :class:`~quadriga.runs.RunResult`, a run directory or a
            sweep directory (``sweep.json``: every finished run, with the grid values).

    Raises:
        ConfigError: a path that is neither a run nor a sweep directory.
    """
    import pandas as pd  # type: ignore[import-untyped]

    from quadriga.summary import sweep_runs

    frames: list[dict[str, Any]] = []
    keys: list[str] = []
    if isinstance(source, (str, Path)) and (Path(source) / "sweep.json").is_file():
        sweep_dir = Path(source)
        sweep = json.loads((sweep_dir / "sweep.json").read_text(encoding="utf-8"))
        keys = list(sweep.get("grid", {}))
        for run in sweep_runs(sweep_dir):  # each status as its run directory records it now
            if run.get("status") != "finished":
                continue
            loaded = load_run(sweep_dir / "runs" / run["run_id"])
            base = {"pipeline": loaded.results.get("pipeline"), "run_id": run["run_id"], "seed": run["seed"]}
            frames += [{**row, **run.get("params", {})} for row in tidy_rows(loaded.results, base)]
    else:
        if isinstance(source, (str, Path)):
            source = load_run(source)
        results = source.results
        base = {
            "pipeline": results.get("pipeline"),
            "run_id": Path(source.dir).name,
            "seed": results.get("seed"),
        }
        frames = tidy_rows(results, base)
    return pd.DataFrame(frames, columns=[*COLUMNS, *keys])
