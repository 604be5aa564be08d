"""The Python path: build a component by name, register one defined in a notebook, read a saved run.

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

Parameters given to :func:`build` are checked exactly as in a pipeline file: an unknown name or
a wrong type is a :class:`~quadriga.errors.ConfigError` naming the parameter and the fix.
Nothing here imports torch until an artifact is loaded.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import sys
import time
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from quadriga.errors import ConfigError
from quadriga.stage_names import INFO_KEYS

if TYPE_CHECKING:
    from quadriga.registry import Registry

__all__ = [
    "JupyterProgress",
    "LoadedRun",
    "build",
    "compact_repr",
    "component_repr",
    "in_jupyter",
    "load_run",
    "progress_display",
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


# ----------------------------------------------------------------------------- compact repr
def _short(value: Any, depth: int = 0) -> str:
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype"):
        kind = type(value).__name__
        dtype = str(value.dtype).replace("torch.", "")
        if len(tuple(shape)) == 0:
            return f"{value.item():.4g}" if "float" in dtype else str(value.item())
        return f"{kind}[{', '.join(map(str, tuple(shape)))}] {dtype}"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:37] + "...")
    if isinstance(value, Mapping):
        if depth > 0:
            return f"{{{len(value)} keys}}"
        items = list(value.items())
        body = ", ".join(f"{k}: {_short(v, depth + 1)}" for k, v in items[:6])
        return "{" + body + (f", ... {len(items) - 6} more" if len(items) > 6 else "") + "}"
    if isinstance(value, (list, tuple)):
        if len(value) > 4 or depth > 0:
            return f"{type(value).__name__}[{len(value)}]"
        return "[" + ", ".join(_short(v, depth + 1) for v in value) + "]"
    if attrs.has(type(value)) and _is_component(value):
        return component_repr(value)
    if callable(value) and not isinstance(value, type):
        return f"<{type(value).__name__}>"
    text = repr(value)
    return text if len(text) <= 60 else f"<{type(value).__name__}>"


def compact_repr(obj: Any) -> str:
    """A one-line ``repr`` of an attrs object (an artifact, a component) without tensor contents.

    Tensors and arrays show as ``Tensor[8000, 2] float64``, dicts as their first keys, long lists
    as their length, floats to 4 significant digits.
    """
    if not attrs.has(type(obj)):
        return _short(obj)
    fields = ", ".join(f"{f.name}={_short(getattr(obj, f.name))}" for f in attrs.fields(type(obj)) if f.repr)
    return f"{type(obj).__name__}({fields})"


def _is_component(value: Any) -> bool:
    from quadriga.interfaces import Component

    return isinstance(value, Component)


def component_repr(obj: Any, _depth: int = 0) -> str:
    """A one-line ``repr`` of a component: its public parameters only, tensors as shape and dtype.

    Fields the constructor does not take (state a target computes in ``prepare``, caches) and
    fields whose names start with ``_`` are left out, so
    ``GaussianMixture(weights=None, ..., preset='4-mode-2d', dim=2, ...)`` is what
    ``print(quadriga.build("target", "gaussian-mixture", preset="4-mode-2d"))`` shows; nested
    components are shown the same way. :class:`quadriga.interfaces.Component` uses it as the
    ``repr`` of every attrs component that does not define its own.
    """
    if not attrs.has(type(obj)):
        return _short(obj)
    if _depth > 2:
        return f"{type(obj).__name__}(...)"

    def show(value: Any) -> str:
        return component_repr(value, _depth + 1) if _is_component(value) else _short(value)

    public = (f for f in attrs.fields(type(obj)) if f.init and f.repr and not f.name.startswith("_"))
    fields = ", ".join(f"{f.name}={show(getattr(obj, f.name))}" for f in public)
    return f"{type(obj).__name__}({fields})"


# ----------------------------------------------------------------------------- saved runs
class _LazyArtifacts(Mapping[str, Any]):
    """``{stage: artifact}`` of a saved run, each read from ``stages/<stage>/artifact.pt`` on first use."""

    def __init__(self, run_dir: Path, stages: Mapping[str, Mapping[str, Any]]) -> None:
        self._dir, self._stages = run_dir, stages
        self._cache: dict[str, Any] = {}

    def __getitem__(self, stage: str) -> Any:
        if stage not in self._cache:
            from quadriga.artifacts import ARTIFACT_TYPES
            from quadriga.rundir import RunDir

            if stage not in self._stages:
                raise KeyError(f"no stage '{stage}' in {self._dir}; stages: {', '.join(self._stages)}")
            kind = ARTIFACT_TYPES.get(str(self._stages[stage].get("type")))
            loaded = RunDir(self._dir).load_artifact(stage, kind) if kind is not None else None
            if loaded is None:
                raise KeyError(f"stage '{stage}' of {self._dir} saved no artifact that can be reloaded")
            self._cache[stage] = loaded
        return self._cache[stage]

    def __iter__(self) -> Iterator[str]:
        return iter(self._stages)

    def __len__(self) -> int:
        return len(self._stages)

    def __repr__(self) -> str:
        return f"<artifacts of {len(self)} stages: {', '.join(self._stages)} (loaded on access)>"


@attrs.define(eq=False, repr=False)
class LoadedRun:
    """A saved run read back from its directory (:func:`load_run`).

    Attributes:
        dir: the run directory.
        results: ``results.json`` (``{"pipeline", "seed", "status", "stages": {...}}``).
        pipeline: the resolved ``pipeline.toml`` as a dict.
        manifest: ``manifest.json`` (versions, seeds, command line).
        artifacts: ``{stage: artifact}``, each loaded from disk on first access.
    """

    dir: Path
    results: dict[str, Any]
    pipeline: dict[str, Any]
    manifest: dict[str, Any]
    artifacts: Mapping[str, Any]

    @property
    def status(self) -> str:
        """``finished``, ``failed``, ``interrupted`` (or ``unknown``)."""
        return str(self.results.get("status", "unknown"))

    @property
    def figures(self) -> list[Path]:
        """The figure files the stages saved, in stage order."""
        return [
            self.dir / f for res in self.results.get("stages", {}).values() for f in res.get("figures", [])
        ]

    def to_pandas(self) -> Any:
        """The tidy table of this run (see :func:`to_pandas`)."""
        return to_pandas(self)

    def __repr__(self) -> str:
        """One line per stage: type, component and its headline numbers; no tensors."""
        stages = self.results.get("stages", {})
        head = f"{self.results.get('pipeline')!r}, seed={self.results.get('seed')}, {self.status}"
        lines = [f"LoadedRun({head}, {self.dir})"]
        for name, res in stages.items():
            kind = res.get("type")
            if kind == "Samples":
                acc = res.get("info", {}).get("acceptance_rate")
                what = f"{res.get('num_samples')} x {res.get('dim')}" + (
                    f", acceptance {acc:.4g}" if acc is not None else ""
                )
            elif kind == "Metrics":
                values = res.get("values", {})
                what = f"{len(values)} metrics"
            elif kind == "Estimate":
                what = f"{_short(res.get('value'))} ± {_short(res.get('stderr'))}"
            else:
                what = ", ".join(f"{k}={_short(v)}" for k, v in list(res.get("final", {}).items())[:3])
            lines.append(f"  {name}: {kind} from {res.get('component')} ({what})")
        lines.append("  .artifacts[stage], .to_pandas(), .figures, .pipeline, .manifest")
        return "\n".join(lines)


def _manifest_problem(data: Any) -> str:
    """What is wrong with the content of a ``manifest.json`` (``""`` when nothing)."""
    return "" if isinstance(data, dict) else f"holds {type(data).__name__}, not an object"


def _run_file_checks() -> dict[str, tuple[Callable[[Any], str], str]]:
    """Per run file: (what is wrong with its content, what it should hold).

    The status and results checks are those ``quadriga run --resume`` applies
    (:meth:`quadriga.rundir.RunDir.check_files`).
    """
    from quadriga.rundir.records import _results_problem, _status_problem

    return {
        "results.json": (_results_problem, 'an object with a table of stages, {"stages": {name: {...}}}'),
        "status.json": (_status_problem, "an object with a status and a table of stages, each with a status"),
        "manifest.json": (_manifest_problem, "an object of versions, seeds and the command line"),
    }


def read_run_file(run_dir: Path, name: str, *, key: str) -> dict[str, Any]:
    """The content of ``results.json``, ``status.json`` or ``manifest.json`` in ``run_dir``, checked.

    Args:
        run_dir: the run directory.
        name: ``"results.json"``, ``"status.json"`` or ``"manifest.json"``.
        key: the parameter or flag named in the error (``"path"``, ``"report"``).

    Returns:
        The file's object (``{}`` when the file does not exist).

    Raises:
        ConfigError: the file cannot be read as JSON, or holds something other than what a run
            writes (the same checks as ``quadriga run --resume``), naming the file, what is wrong
            and what to do.
    """
    check, expected = _run_file_checks()[name]
    path = Path(run_dir) / name
    if not path.is_file():
        return {}
    from quadriga.rundir.records import read_checked

    data, problem = read_checked(path, check)
    if problem:
        raise ConfigError(
            f"'{path}' {problem} (expected {expected}). The run directory is damaged; re-run the "
            "pipeline or restore the file from a copy.",
            key=key,
        )
    return dict(data)


def load_run(path: str | Path) -> LoadedRun:
    """Read a run directory written by ``quadriga run`` or :func:`quadriga.api.run`.

    Args:
        path: the run directory (``runs/<pipeline>/<timestamp>``).

    Returns:
        A :class:`LoadedRun`: results, resolved pipeline, manifest, lazily loaded artifacts and
        :meth:`LoadedRun.to_pandas`.

    Raises:
        ConfigError: ``path`` is not a run directory (no ``results.json``); a folder of runs says so;
            ``results.json``, ``manifest.json`` or ``pipeline.toml`` is damaged (:func:`read_run_file`).
    """
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    run_dir = Path(path)
    if not (run_dir / "results.json").is_file():
        children = (
            sorted(c.name for c in run_dir.iterdir() if (c / "results.json").is_file())
            if run_dir.is_dir()
            else []
        )
        hint = f" It holds runs: load one, e.g. load_run('{run_dir / children[-1]}')." if children else ""
        raise ConfigError(f"'{run_dir}' is not a run directory (no results.json).{hint}", key="path")
    results = read_run_file(run_dir, "results.json", key="path")
    manifest = read_run_file(run_dir, "manifest.json", key="path")
    toml = run_dir / "pipeline.toml"
    try:
        pipeline = tomllib.loads(toml.read_text(encoding="utf-8")) if toml.is_file() else {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"'{toml}' cannot be read as TOML ({exc}). The run directory is damaged; re-run the "
            "pipeline or restore the file from a copy.",
            key="path",
        ) from exc
    artifacts = _LazyArtifacts(run_dir, results.get("stages", {}))
    return LoadedRun(run_dir, results, pipeline, manifest, artifacts)


#: the columns of :func:`to_pandas`, in order
COLUMNS = ("pipeline", "run_id", "seed", "stage", "component", "type", "subject", "metric", "value")


def _rows(results: Mapping[str, Any], base: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for stage, res in results.get("stages", {}).items():
        kind = res.get("type")
        items: list[tuple[str, str, Any]] = []
        if kind == "Metrics":
            for key, value in res.get("values", {}).items():
                subject, _, metric = key.rpartition("/")
                items.append((subject or stage, metric, value))
        elif kind == "Estimate":
            items += [(stage, "estimate", res.get("value")), (stage, "estimate_stderr", res.get("stderr"))]
        elif kind == "Samples":
            items += [(stage, "num_samples", res.get("num_samples")), (stage, "dim", res.get("dim"))]
            items += [(stage, k, v) for k, v in res.get("info", {}).items() if k not in INFO_KEYS]
        elif kind == "Fitted":
            items += [(stage, k, v) for k, v in res.get("final", {}).items()]
        for subject, metric, value in items:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            rows.append(
                {
                    **base,
                    "stage": stage,
                    "component": res.get("component"),
                    "type": kind,
                    "subject": subject,
                    "metric": metric,
                    "value": float(value) if math.isfinite(value) else math.nan,
                }
            )
    return rows


def to_pandas(source: Any) -> Any:
    """A tidy :class:`pandas.DataFrame` of numbers (typed ``Any``: pandas is imported on call).

    One row per stage x subject x metric.

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

    frames: list[dict[str, Any]] = []
    keys: list[str] = []
    if isinstance(source, (str, Path)) and (Path(source) / "sweep.json").is_file():
        sweep_dir = Path(source)
        sweep = json.loads((sweep_dir / "sweep.json").read_text(encoding="utf-8"))
        keys = list(sweep.get("grid", {}))
        runs_file = sweep_dir / "runs.json"
        for run in json.loads(runs_file.read_text(encoding="utf-8")) if runs_file.is_file() else []:
            if run.get("status") != "finished":
                continue
            loaded = load_run(sweep_dir / "runs" / run["run_id"])
            base = {"pipeline": loaded.results.get("pipeline"), "run_id": run["run_id"], "seed": run["seed"]}
            frames += [{**row, **run.get("params", {})} for row in _rows(loaded.results, base)]
    else:
        if isinstance(source, (str, Path)):
            source = load_run(source)
        results = source.results
        base = {
            "pipeline": results.get("pipeline"),
            "run_id": Path(source.dir).name,
            "seed": results.get("seed"),
        }
        frames = _rows(results, base)
    return pd.DataFrame(frames, columns=[*COLUMNS, *keys])


def in_jupyter() -> bool:
    """Whether this process is a Jupyter kernel (notebook, JupyterLab, VS Code, Colab).

    A terminal IPython session is not: it gets the terminal's bars. IPython is never imported
    here; a process that has not imported it is not a kernel.
    """
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if callable(get) else None
    if shell is None:
        return False
    return type(shell).__name__ == "ZMQInteractiveShell" or "google.colab" in str(type(shell))


def _ipython_show(bundle: dict[str, str]) -> Any:
    """Display a MIME bundle in the cell's output; return a handle whose ``update`` redraws it."""
    import importlib

    display = importlib.import_module("IPython.display").display
    return display(bundle, raw=True, display_id=True)


#: how the bars' HTML is wrapped (the same ``<pre>`` block rich uses for its Jupyter output)
_HTML = (
    '<pre style="white-space:pre;overflow-x:auto;line-height:normal;'
    "font-family:Menlo,'DejaVu Sans Mono',consolas,'Courier New',monospace\">{code}</pre>"
)


class JupyterProgress:
    """Progress bars for :func:`quadriga.api.run` in a notebook: one table, one row per stage.

    The table is drawn by rich's progress columns (stage, bar, count, elapsed, remaining) and
    shown as one HTML output (with a plain-text twin) updated in place through an IPython display
    handle, so it needs neither a terminal nor ipywidgets. It is an ``execute(display=...)``
    factory: ``display(stage)`` is a context manager yielding the stage's ``on_update``.

    Args:
        show: ``show(bundle) -> handle`` displays a MIME bundle (``{"text/plain": ..., "text/html":
            ...}``) and returns a handle with ``update(bundle, raw=True)``; default IPython's
            ``display(bundle, raw=True, display_id=True)``.
        min_refresh: seconds between two redraws while a stage runs (the state at the end of each
            stage is always drawn).
        width: columns of the table.
        clock: a monotonic clock in seconds (tests pass a fake one).
    """

    def __init__(
        self,
        *,
        show: Callable[[dict[str, str]], Any] | None = None,
        min_refresh: float = 0.2,
        width: int = 100,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._show = show or _ipython_show
        self._handle: Any = None
        self.min_refresh, self.width, self.clock = min_refresh, width, clock
        self._last = -math.inf
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(file=io.StringIO()),
            disable=True,
            auto_refresh=False,
        )

    def render(self) -> dict[str, str]:
        """The table now, as a MIME bundle (``text/plain`` and ``text/html``)."""
        from rich.console import Console

        con = Console(
            record=True, file=io.StringIO(), width=self.width, force_terminal=True, color_system="truecolor"
        )
        con.print(self.progress.make_tasks_table(self.progress.tasks))
        html = con.export_html(inline_styles=True, code_format=_HTML, clear=False)
        return {"text/plain": con.export_text().rstrip("\n"), "text/html": html}

    def refresh(self, force: bool = False) -> None:
        """Redraw the table if ``min_refresh`` seconds have passed (or ``force``)."""
        now = self.clock()
        if not force and now - self._last < self.min_refresh:
            return
        self._last = now
        bundle = self.render()
        if self._handle is None:
            self._handle = self._show(bundle)
        elif hasattr(self._handle, "update"):
            self._handle.update(bundle, raw=True)

    @contextlib.contextmanager
    def __call__(self, stage: str) -> Iterator[Callable[[float, float | None, str | None], None]]:
        """A context manager for one stage, yielding its ``on_update(completed, total, description)``."""
        task = self.progress.add_task(stage, total=None)

        def on_update(completed: float, total: float | None, description: str | None) -> None:
            label = stage if not description or description == stage else f"{stage}: {description}"
            self.progress.update(task, completed=completed, total=total, description=label)
            self.refresh()

        try:
            yield on_update
        except BaseException:
            self.progress.update(task, description=f"{stage} (stopped)")
            self.progress.stop_task(task)
            self.refresh(force=True)
            raise
        done = self.progress.tasks[task]
        total = done.total if done.total is not None else max(done.completed, 1)
        self.progress.update(task, total=total, completed=total, description=f"{stage} (done)")
        self.progress.stop_task(task)
        self.refresh(force=True)


def progress_display(progress: bool | None) -> contextlib.AbstractContextManager[Any]:
    """The progress display :func:`quadriga.api.run` passes to the runner, as a context manager.

    Args:
        progress: ``None`` (default of ``run``): bars in Jupyter (:class:`JupyterProgress`), nothing
            elsewhere; ``True``: bars in Jupyter, else rich's bars on a terminal's stderr, else
            plain progress lines on stderr (as ``quadriga run`` prints to a log); ``False``: nothing.

    Returns:
        A context manager yielding ``display`` for ``execute(display=...)`` (``None`` for nothing).
    """
    if progress is False or (progress is None and not in_jupyter()):
        return contextlib.nullcontext(None)
    if in_jupyter():
        return contextlib.nullcontext(JupyterProgress())
    from rich.console import Console

    from quadriga.cli.run import rich_progress

    con = Console(stderr=True, highlight=False)
    return rich_progress(con, con.is_terminal, lines=not con.is_terminal)
