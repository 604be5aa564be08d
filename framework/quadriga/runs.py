"""Running a checked pipeline and keeping everything it computed on disk.

A run writes ``runs/<pipeline>/<UTC timestamp>/`` (or ``--out DIR``):

- ``pipeline.toml``: the resolved configuration (every default filled in);
- ``manifest.json``: Python, torch, quadriga and every plugin distribution with its
  version, the seed, the command line;
- ``status.json``: ``running``/``finished``/``failed``/``interrupted``, per-stage status and the error;
- ``results.json``: the numbers of every finished stage, rewritten after each stage;
- ``metrics.jsonl``: records streamed by long stages (``progress.log``);
- ``<stage>-<figure>.png`` and ``stages/<stage>/artifact.pt`` (tensors only, loaded with
  ``weights_only=True``) for ``--resume``.

Every file is written atomically (temporary file, then rename), so a crash or
Ctrl-C in stage k leaves stages 1..k-1 complete on disk.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import inspect
import json
import math
import os
import platform
import re
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

from quadriga.artifacts import Estimate, Fitted, Metrics, Samples
from quadriga.errors import ConfigError, NonFiniteError, QuadrigaError, StageError
from quadriga.progress import StageProgress, use_progress
from quadriga.seeding import make_generator, seed_everything

__all__ = [
    "Run",
    "RunResult",
    "atomic_path",
    "atomic_write_json",
    "atomic_write_text",
    "execute",
    "new_run_dir",
    "safe_name",
    "stage_dir_name",
]


@contextlib.contextmanager
def atomic_path(path: Path, suffix: str = ".tmp") -> Iterator[str]:
    """Yield a temporary file name next to ``path``; on success it replaces ``path`` atomically.

    The temporary file gets the permissions a plain ``open`` would give; on error it is removed
    and ``path`` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    os.close(fd)
    try:
        yield tmp
        _readable(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file in the same directory, then ``os.replace``)."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)


def _readable(path: str) -> None:
    """Give a temporary file the permissions a plain ``open`` would (mkstemp makes it 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def atomic_write_json(path: Path, data: Any) -> None:
    """Atomically write ``data`` as indented JSON (non-finite floats as strings)."""
    atomic_write_text(path, json.dumps(_jsonable(data), indent=2, sort_keys=False) + "\n")


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "ndim") and hasattr(value, "tolist"):
        return (
            _jsonable(value.tolist())
            if getattr(value, "ndim", 1) <= 1 and _numel(value) <= 64
            else f"<array shape {tuple(value.shape)}>"
        )
    if hasattr(value, "item") and callable(value.item):
        try:
            value = value.item()
        except Exception:
            return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, Path):
        return str(value)
    return str(value)


def _numel(value: Any) -> int:
    n = 1
    for s in getattr(value, "shape", ()):
        n *= int(s)
    return n


def safe_name(name: str) -> str:
    """A directory-safe version of ``name``: letters, digits, ``.``, ``_``, ``-`` only, never ``..``."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "unnamed"
    return cleaned[:80]


def stage_dir_name(name: str) -> str:
    """A directory name for a stage, distinct for distinct names (``mala`` and ``mala_`` differ).

    Letters, digits, ``.``, ``_`` and ``-`` are kept; every other character becomes ``%XX``
    (its UTF-8 bytes), so ``dqn[0]`` is ``dqn%5B0%5D``. A name longer than 100 characters is
    cut and suffixed with 16 hex digits of its SHA-256.
    """
    import hashlib
    from urllib.parse import quote

    encoded = quote(name, safe="-_")
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    if len(encoded) > 100:
        encoded = encoded[:80] + "-" + hashlib.sha256(name.encode()).hexdigest()[:16]
    return encoded


def new_run_dir(root: Path, pipeline_name: str) -> Path:
    """Create ``root/<pipeline>/<UTC timestamp>`` (a suffix is added if it exists) and return it."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    base = Path(root) / safe_name(pipeline_name)
    for i in range(1000):
        candidate = base / (stamp if i == 0 else f"{stamp}-{i}")
        try:
            candidate.mkdir(parents=True, exist_ok=False)
            return candidate
        except FileExistsError:
            continue
    raise QuadrigaError(f"could not create a run directory under {base}")


@attrs.define(eq=False)
class Run:
    """A run in progress, as lifecycle hooks see it.

    Attributes:
        dir: the run directory.
        pipeline: the :class:`~quadriga.pipeline.Pipeline`.
        seed: the root seed.
        status: ``running``, ``finished``, ``failed`` or ``interrupted``.
        stages: ``{stage: {"status", "seconds", ...}}``.
    """

    dir: Path
    pipeline: Any
    seed: int
    status: str = "running"
    stages: dict[str, dict[str, Any]] = attrs.field(factory=dict)


@attrs.define(eq=False)
class RunResult:
    """What :func:`execute` (and :func:`quadriga.api.run`) returns.

    Attributes:
        dir: the run directory.
        status: ``finished``, ``failed`` or ``interrupted``.
        artifacts: ``{stage: artifact}`` of the stages that finished (or were resumed).
        results: the content of ``results.json``.
        error: the exception that ended the run, or ``None``.
        warnings: messages from lifecycle hooks that raised.
    """

    dir: Path
    status: str
    artifacts: dict[str, Any]
    results: dict[str, Any]
    error: BaseException | None = None
    warnings: list[str] = attrs.field(factory=list)


def _is_finite(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, (int, bool)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if hasattr(value, "is_floating_point"):
        import torch

        return bool(torch.isfinite(value).all()) if value.is_floating_point() else True
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        import numpy as np

        return bool(np.isfinite(value).all()) if np.issubdtype(value.dtype, np.floating) else True
    return True


def check_finite(stage: str, artifact: Any) -> None:
    """Raise :class:`NonFiniteError` if the artifact holds NaN or inf where numbers must be finite."""
    if isinstance(artifact, Samples):
        if not _is_finite(artifact.x):
            raise NonFiniteError(stage, "Samples.x")
    elif isinstance(artifact, Estimate):
        for name in ("value", "stderr"):
            if not _is_finite(getattr(artifact, name)):
                raise NonFiniteError(stage, f"Estimate.{name}")
    elif isinstance(artifact, Metrics):
        for key, value in artifact.values.items():
            if not _is_finite(value):
                raise NonFiniteError(stage, f"metric '{key}'")


TIMING_KEYS = ("seconds", "wall_time", "elapsed", "time_s")


def _timeless(info: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in info.items() if k not in TIMING_KEYS}


def summarize(artifact: Any) -> dict[str, Any]:
    """The JSON-ready numbers of an artifact, as stored in ``results.json``.

    Wall-clock timings (info keys in :data:`TIMING_KEYS`) are left out so that the same
    config and seed give an identical ``results.json``; they go to ``status.json``.
    """
    if isinstance(artifact, Samples):
        return {
            "type": "Samples",
            "num_samples": artifact.num_samples,
            "dim": artifact.dim,
            "info": _jsonable(_timeless(artifact.info)),
        }
    if isinstance(artifact, Estimate):
        out = {"type": "Estimate", "value": _jsonable(artifact.value), "stderr": _jsonable(artifact.stderr)}
        if artifact.interval is not None:
            out["interval"] = _jsonable(list(artifact.interval))
        out["info"] = _jsonable(_timeless(artifact.info))
        return out
    if isinstance(artifact, Fitted):
        history = {k: _jsonable(v[-1]) for k, v in artifact.history.items() if isinstance(v, list) and v}
        return {"type": "Fitted", "info": _jsonable(_timeless(artifact.info)), "final": history}
    if isinstance(artifact, Metrics):
        return {
            "type": "Metrics",
            "values": _jsonable(artifact.values),
            "tables": _jsonable(artifact.tables),
            "info": _jsonable(_timeless(artifact.info)),
        }
    return {"type": type(artifact).__name__}


def _save_artifact(stage_dir: Path, artifact: Any) -> bool:
    """Save what is needed to resume without recomputing; return whether it can be reloaded."""
    import torch

    def tensor(v: Any) -> Any:
        return v if v is None or isinstance(v, torch.Tensor) else None

    if isinstance(artifact, Samples) and isinstance(artifact.x, torch.Tensor):
        payload = {
            "type": "Samples",
            "x": artifact.x,
            "log_weights": tensor(artifact.log_weights),
            "chains": tensor(artifact.chains),
            "info": json.dumps(_jsonable(artifact.info)),
        }
    elif (
        isinstance(artifact, Estimate)
        and artifact.predict is None
        and (isinstance(artifact.value, (int, float, torch.Tensor)))
    ):
        payload = {
            "type": "Estimate",
            "value": torch.as_tensor(artifact.value),
            "stderr": None if artifact.stderr is None else torch.as_tensor(artifact.stderr),
            "info": json.dumps(_jsonable(artifact.info)),
        }
    elif isinstance(artifact, Metrics):
        payload = {
            "type": "Metrics",
            "values": json.dumps(_jsonable(artifact.values)),
            "tables": json.dumps(_jsonable(artifact.tables)),
            "info": json.dumps(_jsonable(artifact.info)),
        }
    else:
        if isinstance(artifact, Fitted) and isinstance(artifact.model, torch.nn.Module):
            stage_dir.mkdir(parents=True, exist_ok=True)
            _atomic_torch_save(artifact.model.state_dict(), stage_dir / "model.pt")
        return False
    stage_dir.mkdir(parents=True, exist_ok=True)
    _atomic_torch_save(payload, stage_dir / "artifact.pt")
    return True


def _atomic_torch_save(obj: Any, path: Path) -> None:
    import torch

    with atomic_path(path) as tmp:
        torch.save(obj, tmp)


def _load_artifact(stage_dir: Path) -> Any:
    import torch

    path = stage_dir / "artifact.pt"
    if not path.is_file():
        return None
    payload = torch.load(path, weights_only=True)
    kind = payload["type"]
    if kind == "Samples":
        return Samples(
            x=payload["x"],
            log_weights=payload["log_weights"],
            chains=payload["chains"],
            info=json.loads(payload["info"]),
        )
    if kind == "Estimate":
        value = payload["value"]
        value = value.item() if value.ndim == 0 else value
        stderr = payload["stderr"]
        if stderr is not None and stderr.ndim == 0:
            stderr = stderr.item()
        return Estimate(value=value, stderr=stderr, info=json.loads(payload["info"]))
    if kind == "Metrics":
        return Metrics(
            values=json.loads(payload["values"]),
            tables=json.loads(payload["tables"]),
            info=json.loads(payload["info"]),
        )
    return None


def _saved_pipeline_name(run_dir: Path) -> str | None:
    path = Path(run_dir) / "manifest.json"
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text()).get("pipeline")
    except (OSError, ValueError):
        return None


def resume_plan(run_dir: Path) -> tuple[list[str], list[str]]:
    """Stages of an earlier run that ``--resume`` reloads, and finished ones it must re-run.

    Returns:
        ``(reloaded, rerun)``: finished stages whose artifact was saved (samples, estimates, metrics),
        and finished stages whose artifact cannot be reloaded (trained models): these run again.
    """
    path = Path(run_dir) / "status.json"
    if not path.is_file():
        return [], []
    stages = json.loads(path.read_text()).get("stages", {})
    done = {n: s for n, s in stages.items() if s.get("status") == "finished"}
    reloaded = [n for n, s in done.items() if s.get("resumable", True)]
    return reloaded, [n for n in done if n not in reloaded]


def manifest(pipeline: Any, registry: Any, argv: list[str] | None) -> dict[str, Any]:
    """The provenance of a run: interpreter, libraries, plugin distributions, seed, command line."""
    import quadriga

    versions: dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "quadriga": quadriga.__version__,
    }
    for lib in ("torch", "numpy"):
        mod = sys.modules.get(lib)
        versions[lib] = getattr(mod, "__version__", None) if mod else None
    plugins = {
        name: {"distribution": info["distribution"], "version": info["version"], "status": info["status"]}
        for name, info in registry.plugins.items()
    }
    return {
        "pipeline": pipeline.name,
        "source": pipeline.file,
        "seed": pipeline.seed,
        "seeds": pipeline.seeds(),
        "command": argv if argv is not None else sys.argv,
        "started_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "versions": versions,
        "plugins": plugins,
    }


def _stage_inputs(node: Any, values: dict[str, Any]) -> dict[str, Any]:
    kwargs = {}
    for arg, ref in node.inputs.items():
        kwargs[arg] = values[ref] if isinstance(ref, str) else {r: values[r] for r in ref}
    return kwargs


def _save_figures(run_dir: Path, stage: str, artifact: Any) -> list[str]:
    saved = []
    figures = getattr(artifact, "figures", None) or {}
    for name, fig in figures.items():
        path = run_dir / f"{safe_name(stage)}-{safe_name(name)}.png"
        with atomic_path(path, suffix=".png") as tmp:
            fig.savefig(tmp, dpi=120, bbox_inches="tight")
        saved.append(path.name)
    return saved


def execute(
    pipeline: Any,
    registry: Any,
    *,
    out: Path | None = None,
    runs_root: Path = Path("runs"),
    resume: Path | None = None,
    argv: list[str] | None = None,
    display: Callable[[str], Any] | None = None,
) -> RunResult:
    """Run a checked pipeline, saving each stage as it finishes.

    Args:
        pipeline: a :class:`~quadriga.pipeline.Pipeline` from :func:`~quadriga.pipeline.load_pipeline`.
        registry: the registry (for lifecycle hooks and the manifest).
        out: the run directory to use (created); default ``runs_root/<pipeline>/<UTC timestamp>``.
        runs_root: the root of default run directories.
        resume: an earlier run directory: its finished stages are reloaded, the others re-run there.
        argv: the command line recorded in the manifest.
        display: a factory ``display(stage_name) -> context manager yielding on_update`` for
            progress bars (the CLI passes a rich one); ``None`` shows nothing.

    Returns:
        A :class:`RunResult`. Stage failures do not raise: they are recorded and the
        result's ``status`` is ``failed`` (``error`` holds the exception).

    Raises:
        KeyboardInterrupt: after marking the run ``interrupted`` and saving what finished.
    """
    if resume is not None:
        run_dir = Path(resume)
        if not (run_dir / "status.json").is_file():
            raise ConfigError(f"'{run_dir}' is not a run directory (no status.json).", key="--resume")
        saved = _saved_pipeline_name(run_dir)
        if saved is not None and saved != pipeline.name:
            raise ConfigError(
                f"'{run_dir}' is a run of pipeline '{saved}', not '{pipeline.name}'. Resume it with "
                f"`quadriga run {saved} --resume {run_dir}`.",
                key="--resume",
            )
        previous = json.loads((run_dir / "status.json").read_text())
        results = (
            json.loads((run_dir / "results.json").read_text()) if (run_dir / "results.json").is_file() else {}
        )
    else:
        if out is not None:
            run_dir = Path(out)
            if (run_dir / "status.json").exists() or (run_dir / "results.json").exists():
                raise ConfigError(
                    f"'{run_dir}' already holds a run. Continue it with --resume {run_dir}, or "
                    "choose another --out directory.",
                    key="--out",
                )
            run_dir.mkdir(parents=True, exist_ok=True)
        else:
            run_dir = new_run_dir(runs_root, pipeline.name)
        previous, results = {}, {}
    import tomli_w

    atomic_write_text(run_dir / "pipeline.toml", tomli_w.dumps(pipeline.resolved()))
    atomic_write_json(run_dir / "manifest.json", manifest(pipeline, registry, argv))
    run = Run(run_dir, pipeline, pipeline.seed)
    done_before = {n for n, s in previous.get("stages", {}).items() if s.get("status") == "finished"}
    results = {"pipeline": pipeline.name, "seed": pipeline.seed, "stages": dict(results.get("stages", {}))}
    warnings = registry.call_hook("quadriga_run_start", run=run)
    values: dict[str, Any] = {}
    for name, node in pipeline.tasks.items():
        node.component.prepare(generator=make_generator(pipeline.seed_of(node)))
        values[name] = node.component
    artifacts: dict[str, Any] = {}
    error: BaseException | None = None
    metrics_path = run_dir / "metrics.jsonl"

    def write_status() -> None:
        payload = {"status": run.status, "stages": run.stages}
        if error is not None:
            payload["error"] = f"{type(error).__name__}: {error}"
        atomic_write_json(run_dir / "status.json", payload)

    def append_metrics(record: dict[str, Any]) -> None:
        with open(metrics_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(_jsonable(record)) + "\n")

    write_status()
    try:
        for name, node in pipeline.stages.items():
            stage_dir = run_dir / "stages" / stage_dir_name(name)
            if name in done_before:
                loaded = _load_artifact(stage_dir)
                if loaded is not None:
                    values[name] = artifacts[name] = loaded
                    run.stages[name] = dict(previous["stages"][name], resumed=True)
                    write_status()
                    continue
            run.stages[name] = {"status": "running", "component": node.use, "kind": node.kind}
            write_status()
            seed = pipeline.seed_of(node)
            seed_everything(seed)
            generator = make_generator(seed)
            kwargs = _stage_inputs(node, values)
            start = time.perf_counter()
            try:
                with display(name) if display is not None else contextlib.nullcontext() as on_update:
                    progress = StageProgress(name, on_log=append_metrics, on_update=on_update)
                    with use_progress(progress):
                        if node.kind == "learner":
                            artifact = node.method()(**kwargs, generator=generator, progress=progress)
                        elif (
                            node.kind == "evaluator"
                            and "generator" not in inspect.signature(node.method()).parameters
                        ):
                            artifact = node.method()(**kwargs)
                        else:
                            artifact = node.method()(**kwargs, generator=generator)
                expected = type(node.component).output_type
                if type(artifact).__name__ != expected and not any(
                    c.__name__ == expected for c in type(artifact).__mro__
                ):
                    raise StageError(
                        name,
                        f"{node.kind} '{node.use}' returned {type(artifact).__name__}, expected {expected}.",
                    )
                info = getattr(artifact, "info", None)
                if isinstance(info, dict):
                    info.setdefault("stage", name)
                    info.setdefault("component", node.use)
                check_finite(name, artifact)
            except (QuadrigaError, KeyboardInterrupt):
                raise
            except Exception as exc:
                stage_error = StageError(name, f"{type(exc).__name__}: {exc}")
                stage_error.__cause__ = exc
                stage_error.details = traceback.format_exc()  # type: ignore[attr-defined]
                raise stage_error from exc
            seconds = time.perf_counter() - start
            values[name] = artifacts[name] = artifact
            figures = _save_figures(run_dir, name, artifact)
            resumable = _save_artifact(stage_dir, artifact)
            summary = summarize(artifact)
            summary.update(component=node.use, kind=node.kind, figures=figures)
            results["stages"][name] = summary
            atomic_write_json(run_dir / "results.json", results)
            run.stages[name] = {
                "status": "finished",
                "component": node.use,
                "kind": node.kind,
                "seconds": round(seconds, 3),
                "resumable": resumable,
                "timings": {
                    k: _jsonable(v)
                    for k, v in (getattr(artifact, "info", None) or {}).items()
                    if k in TIMING_KEYS
                },
            }
            write_status()
            warnings += registry.call_hook(
                "quadriga_stage_end", run=run, stage=name, artifact=artifact, seconds=seconds
            )
        run.status = "finished"
    except KeyboardInterrupt as exc:
        run.status, error = "interrupted", exc
        exc.run_dir = run_dir  # type: ignore[attr-defined]
        _mark_current(run, "interrupted")
        write_status()
        warnings += registry.call_hook("quadriga_run_end", run=run, status=run.status, error=exc)
        raise
    except (QuadrigaError, Exception) as exc:
        run.status, error = "failed", exc
        _mark_current(run, "failed", exc)
        details = getattr(exc, "details", None) or traceback.format_exc()
        atomic_write_text(run_dir / "error.txt", details)
    results["status"] = run.status
    atomic_write_json(run_dir / "results.json", results)
    write_status()
    warnings += registry.call_hook("quadriga_run_end", run=run, status=run.status, error=error)
    return RunResult(run_dir, run.status, artifacts, results, error, warnings)


def _mark_current(run: Run, status: str, exc: BaseException | None = None) -> None:
    for stage in run.stages.values():
        if stage.get("status") == "running":
            stage["status"] = status
            if exc is not None:
                stage["error"] = f"{type(exc).__name__}: {exc}"
