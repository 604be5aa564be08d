"""Running pipelines from Python (claims, notebooks, tests).

``quadriga.api.run("srmc-vs-mala", overrides=["stage.srmc.alpha=2"], seed=3)``
does what ``quadriga run`` does, without a terminal display by default (progress bars in
Jupyter; ``progress=True`` or ``False`` to choose).
``quadriga.build``, ``quadriga.register``, ``quadriga.load_run`` and ``quadriga.to_pandas``
(:mod:`quadriga.notebook`) build a component by name, register a class defined in a notebook,
and read a saved run back with its artifacts and a tidy table; this module does not import them
(the notebook helpers sit above the run, not below it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from quadriga.pipeline import Pipeline, load_pipeline
from quadriga.progress_display import progress_display
from quadriga.registry import Registry, get_registry
from quadriga.runs import RunResult, execute

__all__ = ["check", "load_resumed", "run"]

#: how errors in the ``overrides`` argument are attributed here (the command line says ``--set``)
API_ORIGIN = "overrides=[...]"


def _overrides(overrides: str | Iterable[str] | Mapping[str, Any]) -> list[str]:
    """``overrides`` as a list of ``KEY=VALUE`` strings.

    A single string is one override; a mapping ``{"stage.mala.step_size": 0.1}`` gives one
    override per key, its Python value written as TOML (``True`` as ``true``, a dict as an inline
    table, a string quoted).

    Raises:
        ConfigError: ``overrides`` is neither a string, a mapping nor an iterable of strings; a
            mapping's value has no TOML form (``None``, an object).
    """
    from quadriga.errors import ConfigError

    if isinstance(overrides, str):
        return [overrides]
    if isinstance(overrides, Mapping):
        return [f"{key}={_toml_text(value, str(key))}" for key, value in overrides.items()]
    if isinstance(overrides, bytes) or not isinstance(overrides, Iterable):
        raise ConfigError(
            f"overrides must be a list of 'KEY=VALUE' strings such as "
            f"['stage.mala.step_size=0.1'], got {overrides!r}.",
            key="overrides",
        )
    items = list(overrides)
    for item in items:
        if not isinstance(item, str):
            raise ConfigError(
                f"overrides must hold 'KEY=VALUE' strings such as 'stage.mala.step_size=0.1'; "
                f"got {item!r} ({type(item).__name__}).",
                key="overrides",
            )
    return items


def _toml_text(value: Any, key: str) -> str:
    """``value`` as TOML text for an override (inline tables and arrays, quoted strings).

    Raises:
        ConfigError: ``None`` or a value TOML cannot hold (key ``overrides``, naming ``key``).
    """
    import tomli_w

    from quadriga.errors import ConfigError

    if isinstance(value, Mapping):
        items = ", ".join(f"{json.dumps(str(k))} = {_toml_text(v, f'{key}.{k}')}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_text(v, key) for v in value) + "]"
    try:
        return tomli_w.dumps({"v": value}).partition("=")[2].strip()
    except TypeError:
        raise ConfigError(
            f"overrides['{key}'] = {value!r} has no TOML form; give a number, bool, string, list "
            "or dict (leave a key out to keep its default).",
            key="overrides",
        ) from None


def _check_progress(progress: Any) -> None:
    """Refuse a ``progress`` that is not ``True``, ``False`` or ``None``.

    Raises:
        ConfigError: any other value (``"yes"``, ``2``).
    """
    from quadriga.errors import ConfigError

    if progress is not None and not isinstance(progress, bool):
        raise ConfigError(
            f"progress must be True, False or None (bars in Jupyter only), got {progress!r}.",
            key="progress",
        )


def _load(
    source: str | Path | Mapping[str, Any],
    registry: Registry,
    overrides: Iterable[str],
    seed: int | None,
) -> Pipeline:
    """:func:`load_pipeline`, with errors in ``overrides`` attributed to the argument, not to ``--set``."""
    from quadriga.errors import ConfigError
    from quadriga.pipeline_source import ORIGIN

    try:
        return load_pipeline(source, registry, overrides=overrides, seed=seed)
    except ConfigError as exc:
        if exc.file != ORIGIN:
            raise
        reason = exc.reason.replace("--set ", "")
        raise type(exc)(reason, file=API_ORIGIN, table=exc.table, key=exc.key) from None


def load_resumed(
    source: str | Path | Mapping[str, Any] | None,
    run_dir: Path,
    registry: Registry,
    *,
    overrides: Iterable[str] = (),
    seed: int | None = None,
) -> Pipeline:
    """The pipeline of an earlier run, from its saved ``pipeline.toml``, for ``--resume``.

    The saved configuration is built once; ``source`` (``None``: the run's own) is only read for
    its name, which must be the run's.

    Raises:
        ConfigError: ``run_dir`` is not a run directory, overrides or a seed were given (a resumed run
            keeps its configuration), ``source`` names another pipeline than the run's, or a value
            in ``pipeline.toml`` no longer matches the matrix point in its table's name (the
            resumed stage would keep the old label).
    """
    from quadriga.errors import ConfigError
    from quadriga.pipeline_source import read_source
    from quadriga.rundir import RunDir

    saved = RunDir(Path(run_dir)).saved_pipeline()
    if saved is None:
        raise ConfigError(f"'{run_dir}' is not a run directory (no pipeline.toml).", key="--resume")
    if list(overrides) or seed is not None:
        raise ConfigError(
            "--resume continues a run with the configuration saved in its pipeline.toml; --set and "
            "--seed cannot change it. Start a new run to use other settings.",
            key="--resume",
        )
    pipeline = load_pipeline(saved, registry)  # a damaged file is reported here, in its own words
    _refuse_relabelled(RunDir(Path(run_dir)).read_pipeline(key="--resume"), saved)
    same_file = source is None or (
        isinstance(source, (str, Path)) and Path(source).resolve() == saved.resolve()
    )
    if not same_file and source is not None:  # only its name is needed: read it, build nothing
        data, file = read_source(source, registry)
        default = Path(file).stem if file.endswith(".toml") else "pipeline"  # as load_pipeline names it
        requested = data.get("pipeline", {}).get("name", default)
        if requested != pipeline.name:
            raise ConfigError(
                f"'{run_dir}' is a run of pipeline '{pipeline.name}', not '{requested}'. Resume it with "
                f"`quadriga run {pipeline.name} --resume {run_dir}`.",
                key="--resume",
            )
    return pipeline


def _refuse_relabelled(resolved: Mapping[str, Any], file: Path) -> None:
    """Refuse to resume a run whose ``pipeline.toml`` changed a matrix value behind a stage's name.

    A resumed stage keeps its name, and its name is its matrix point: ``mala[step_size=0.1]``
    edited to ``step_size = 0.2`` would run with 0.2 and report under the old label.

    Raises:
        ConfigError: naming the file, the table, the key, both values and the fix.
    """
    from quadriga.errors import ConfigError
    from quadriga.expansion import point_mismatches

    for section in ("task", "stage"):
        tables = resolved.get(section)
        for name, table in tables.items() if isinstance(tables, Mapping) else ():
            for key, named, actual in point_mismatches(name, table) if isinstance(table, Mapping) else ():
                raise ConfigError(
                    f'{file}, [{section}."{name}"]: {key} is {actual!r}, but the name, a point of '
                    f"its matrix, says {key}={named!r}; a resumed {section} keeps its name, so its "
                    f"results would carry the old label. Set {key} back to {named!r}, or change "
                    "the matrix in the pipeline file and start a new run.",
                    key="--resume",
                )


def check(
    source: str | Path | Mapping[str, Any],
    *,
    overrides: str | Iterable[str] | Mapping[str, Any] = (),
    seed: int | None = None,
    registry: Registry | None = None,
) -> Pipeline:
    """Load and check a pipeline without running it.

    Args:
        source: a registered pipeline name, a path to a TOML file, or a dict with the TOML structure.
        overrides: ``--set`` strings, e.g. ``["stage.srmc.alpha=2"]``; a single string is one
            override; or a dict ``{"stage.srmc.alpha": 2}``.
        seed: replaces the pipeline's root seed.
        registry: defaults to the process-wide one.

    Returns:
        The checked :class:`~quadriga.pipeline.Pipeline`.

    Raises:
        ConfigError: anything wrong with the pipeline (file, table and key named); ``overrides``
            not a string or a list of strings.
    """
    return load_pipeline(source, registry or get_registry(), overrides=_overrides(overrides), seed=seed)


def run(
    source: str | Path | Mapping[str, Any],
    *,
    overrides: str | Iterable[str] | Mapping[str, Any] = (),
    seed: int | None = None,
    out: str | Path | None = None,
    runs_root: str | Path = "runs",
    resume: str | Path | None = None,
    registry: Registry | None = None,
    raise_on_failure: bool = True,
    progress: bool | None = None,
) -> RunResult:
    """Check and run a pipeline; return its artifacts and results.

    Args:
        source: a registered pipeline name, a path, or a dict with the TOML structure.
        overrides: ``--set`` strings (a single string is one override), or a dict
            ``{"stage.mala.step_size": 0.1}`` (values written as TOML).
        seed: replaces the root seed.
        out: the run directory (default ``runs_root/<pipeline>/<UTC timestamp>``).
        runs_root: root of default run directories.
        resume: an earlier run directory whose unfinished stages are re-run.
        registry: defaults to the process-wide one.
        raise_on_failure: raise the stage's error when the run fails (default) instead
            of returning a result with ``status == "failed"``.
        progress: progress bars: ``None`` (default) shows them in Jupyter only (a table updated in
            the cell's output; in a notebook run by nbclient or papermill one line at the end,
            ``run NAME: 3 stages in 41 s``), ``True`` also elsewhere (bars on a terminal, else progress lines
            on stderr), ``False`` never (see :func:`quadriga.progress_display.progress_display`).

    Returns:
        :class:`~quadriga.runs.RunResult` with ``.dir``, ``.status``, ``.artifacts``, ``.results``.

    Raises:
        ConfigError: the pipeline is invalid (nothing ran); an error in ``overrides`` is attributed
            to ``overrides=[...]`` (the command line's own errors say ``--set``); ``overrides`` is
            not a string or a list of strings; ``progress`` is not ``True``, ``False`` or ``None``.
        StageError: a stage failed and ``raise_on_failure`` is true (finished stages stay on disk).
    """
    overrides = _overrides(overrides)
    _check_progress(progress)
    registry = registry or get_registry()
    if resume is not None:
        pipeline = load_resumed(source, Path(resume), registry, overrides=overrides, seed=seed)
    else:
        pipeline = _load(source, registry, overrides, seed)
    with progress_display(progress, f"run {pipeline.name}") as display:
        result = execute(
            pipeline,
            registry,
            out=Path(out) if out is not None else None,
            runs_root=Path(runs_root),
            resume=Path(resume) if resume is not None else None,
            display=display,
        )
    if result.status == "failed" and raise_on_failure and result.error is not None:
        raise result.error
    return result
