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

This module holds :func:`build` and :func:`to_pandas`; the rest of the notebook's surface lives
one job per module, on the layer it belongs to, and is re-exported here: registering a class
defined in this process (:mod:`quadriga.registry.local`), reading a saved run
(:mod:`quadriga.rundir.loaded`), the tidy-row schema (:mod:`quadriga.rundir.tidy`), the one-line
reprs (:mod:`quadriga._repr`) and the progress displays (:mod:`quadriga.progress_display`).

Parameters given to :func:`build` are checked exactly as in a pipeline file: an unknown name or
a wrong type is a :class:`~quadriga.errors.ConfigError` naming the parameter and the fix.
Nothing here imports torch until an artifact is loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from quadriga._repr import compact_repr, component_repr
from quadriga.errors import ConfigError
from quadriga.progress_display import JupyterProgress, in_jupyter, progress_display
from quadriga.registry.local import _registry, register
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
            sweep directory (``sweep.json``: every finished run any command put there, with the
            grid values; see :func:`quadriga.summary.sweep_runs` for a run without a grid key that
            other runs have).

    Raises:
        ConfigError: a path that is neither a run nor a sweep directory.
    """
    import pandas as pd  # type: ignore[import-untyped]

    from quadriga.summary import sweep_keys, sweep_runs

    frames: list[dict[str, Any]] = []
    keys: list[str] = []
    if isinstance(source, (str, Path)) and (Path(source) / "sweep.json").is_file():
        sweep_dir = Path(source)
        runs = sweep_runs(sweep_dir)  # every command's runs in the directory, not only the last one's
        keys = sweep_keys(runs)
        for run in runs:  # each status as its run directory records it now
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
