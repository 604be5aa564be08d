"""Running a checked pipeline: a short loop over :func:`run_stage`, everything kept in a :class:`RunDir`.

Each stage gets a ``torch.Generator`` seeded from the root seed and its
:attr:`~quadriga.pipeline.Node.seed_key` on the stage's device; the core calls the one
method its interface declares (``node.interface.method``) with the stage's inputs and the
arguments the interface injects (``generator``, and ``progress`` for learners). The artifact is
checked (:meth:`~quadriga.artifacts.Artifact.non_finite`), saved with its record (status and
summary, :meth:`~quadriga.rundir.RunDir.write_stage_record`); ``status.json`` and ``results.json``
are rewritten by :meth:`~quadriga.rundir.RunDir.sync` (at most about once a second, and always at
the end), so the cost per stage does not grow with the number of stages. A crash or Ctrl-C in
stage k leaves stages 1..k-1 complete on disk.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import os
import platform
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import attrs

from quadriga.artifacts import Samples, is_timing, jsonable
from quadriga.errors import (
    ConfigError,
    DivergenceError,
    NonFiniteError,
    QuadrigaError,
    RunInterrupted,
    StageError,
    TaskError,
    out_of_memory_text,
)
from quadriga.fileio import DirectoryLocked, lock_dir
from quadriga.progress import StageProgress, use_progress
from quadriga.rundir import RESUME_STORE, RunDir, RunStatus, StageStatus
from quadriga.rundir.records import stage_fingerprints
from quadriga.seeding import make_generator, seed_everything
from quadriga.versions import version_of

if TYPE_CHECKING:
    from quadriga.artifacts import Artifact
    from quadriga.interfaces import Task
    from quadriga.pipeline import Node, Pipeline
    from quadriga.registry import Registry

__all__ = ["MANIFEST_LIBRARIES", "Run", "RunResult", "execute", "manifest", "run_stage", "stage_name_fields"]

#: the libraries whose installed versions every manifest records
MANIFEST_LIBRARIES = ("torch", "numpy", "gymnasium", "torchrl", "POT", "goodpoints", "scipy")


@attrs.define(eq=False)
class Run:
    """A run in progress, as lifecycle hooks see it.

    Attributes:
        dir: the run directory.
        pipeline: the :class:`~quadriga.pipeline.Pipeline`.
        seed: the root seed.
        record: the :class:`~quadriga.rundir.RunStatus` written to ``status.json``.
    """

    dir: Path
    pipeline: Pipeline
    seed: int
    record: RunStatus = attrs.field(factory=RunStatus)

    @property
    def status(self) -> str:
        """``running``, ``finished``, ``failed`` or ``interrupted``."""
        return self.record.status

    @property
    def stages(self) -> dict[str, dict[str, Any]]:
        """``{stage: {"status", "seconds", ...}}`` as in ``status.json``."""
        return {n: s.to_json() for n, s in self.record.stages.items()}


@attrs.define(eq=False, repr=False)
class RunResult:
    """What :func:`execute` (and :func:`quadriga.api.run`) returns.

    Attributes:
        dir: the run directory.
        status: ``finished``, ``failed`` or ``interrupted``.
        artifacts: ``{stage: artifact}`` of the stages that finished (or were resumed).
        results: the content of ``results.json``.
        error: the exception that ended the run, or ``None``.
        warnings: messages from lifecycle hooks that raised.
        error_file: the ``error.txt`` this run wrote with the details of ``error``; ``None`` when
            the run did not fail or the file could not be written (a full disk).
    """

    dir: Path
    status: str
    artifacts: dict[str, Any]
    results: dict[str, Any]
    error: BaseException | None = None
    warnings: list[str] = attrs.field(factory=list)
    error_file: Path | None = None

    def __repr__(self) -> str:
        """One line: status, directory, each stage's artifact by shape or count, error, warnings.

        E.g. ``RunResult(status='finished', dir='runs/x', artifacts={draw: Samples[400, 2],
        est: Estimate, check: Metrics[1 values]})`` (no tensor contents).
        """
        names = list(self.artifacts.items())
        shown = ", ".join(f"{n}: {getattr(a, 'label', lambda a=a: type(a).__name__)()}" for n, a in names[:6])
        more = f", ... {len(names) - 6} more" if len(names) > 6 else ""
        extra = f", error={type(self.error).__name__}" if self.error is not None else ""
        extra += f", warnings={len(self.warnings)}" if self.warnings else ""
        return f"RunResult(status={self.status!r}, dir='{self.dir}', artifacts={{{shown}{more}}}{extra})"


def manifest(pipeline: Pipeline, registry: Registry, argv: list[str] | None) -> dict[str, Any]:
    """The provenance of a run: interpreter, libraries, plugins, root and derived seeds, command line.

    Also (:func:`quadriga.provenance.provenance`) which distribution supplied each component, the
    git commit and dirty flag of editable plugins and every installed distribution.
    """
    import quadriga
    from quadriga.provenance import command_line, provenance

    versions: dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "quadriga": quadriga.__version__,
    }
    for lib in MANIFEST_LIBRARIES:  # installed versions, whether or not this pipeline imported them
        versions[lib] = version_of(lib) or None
    plugins = {
        name: {"distribution": info.distribution, "version": info.version, "status": info.status}
        for name, info in registry.plugins.items()
    }
    return {
        "pipeline": pipeline.name,
        "source": pipeline.file,
        "seed": pipeline.seed,
        "seeds": pipeline.seeds(),
        "devices": pipeline.devices(),
        "threads": _threads(),
        "command": command_line(argv),
        "started_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "versions": versions,
        "plugins": plugins,
        **provenance(pipeline, registry),
    }


def _threads() -> dict[str, Any]:
    """The thread counts a run's reductions used.

    Results can differ in their last digits between thread counts (a sweep caps its workers at one
    intra-op thread each), so the manifest says which count produced them.
    """
    import torch

    return {
        "torch_intra_op": torch.get_num_threads(),
        "torch_inter_op": torch.get_num_interop_threads(),
        **{v: os.environ[v] for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS") if v in os.environ},
    }


def run_stage(node: Node, pipeline: Pipeline, values: dict[str, Any], *, progress: StageProgress) -> Artifact:
    """Run one stage and return its checked artifact.

    Raises:
        NonFiniteError: the artifact holds NaN or inf where numbers must be finite.
        StageError: the component raised, or returned something other than its interface's ``output_type``.
    """
    interface = node.interface
    seed = pipeline.seed_of(node)
    device = pipeline.device_of(node)
    seed_everything(seed, device)
    injected = {"generator": make_generator(seed, device), "progress": progress}
    kwargs = {
        arg: values[ref] if isinstance(ref, str) else {r: values[r] for r in ref}
        for arg, ref in node.inputs.items()
    }
    try:
        with use_progress(progress):
            out = node.method()(**kwargs, **{k: injected[k] for k in interface.injected})
        if not isinstance(out, interface.output_type):
            raise StageError(
                node.name,
                f"{node.kind} '{node.use}' returned {type(out).__name__}, "
                f"expected {interface.output_type.__name__}.",
            )
        artifact = cast("Artifact", out)
        info = getattr(artifact, "info", None)
        if isinstance(info, dict):
            info.setdefault("stage", node.name)
            info.setdefault("component", node.use)
            for key, value in stage_name_fields(node).items():
                info.setdefault(key, value)
        bad = artifact.non_finite()
        if bad:
            raise NonFiniteError(node.name, bad[0])
        failed = [h for h in artifact.health() if h.level == "failed"]
        if failed:
            raise DivergenceError(f"{failed[0].quantity}: {failed[0].message}")
    except StageError:
        raise
    except QuadrigaError as exc:
        if exc.exit_code == 1:  # a run-time failure of the component (e.g. DivergenceError): name the stage
            raise StageError(node.name, str(exc)) from exc
        raise
    except KeyboardInterrupt:
        raise
    except SystemExit as exc:  # a component must not end the process: the run is recorded as failed
        raise StageError(
            node.name,
            f"the component called sys.exit({exc.code!r}) (exit code {exc.code!r})",
            details=traceback.format_exc(),
        ) from exc
    except Exception as exc:
        raise StageError(node.name, _failure_text(exc), details=traceback.format_exc()) from exc
    return artifact


def _failure_text(exc: BaseException) -> str:
    """``Type: message`` of a component's exception; an allocation failure in plain words.

    An allocator's "[enforce fail at alloc_cpu.cpp:127] ... you tried to allocate N bytes" passes
    ``--check`` (the size is only allocated when the component runs), so it is said as what to
    change (:func:`quadriga.errors.out_of_memory_text`).
    """
    return out_of_memory_text(exc, "it") or f"{type(exc).__name__}: {exc}"


def stage_name_fields(node: Node) -> dict[str, Any]:
    """``{"source", "point", "replicate"}`` of a stage, as its artifact's ``info`` and ``results.json`` say.

    ``point`` is ``{key: value}`` in matrix order (``{}`` without a matrix), ``replicate`` the index
    or ``None`` (:class:`~quadriga.stage_names.StageName`).
    """
    return {"source": node.source, "point": jsonable(dict(node.point)), "replicate": node.replicate}


def _final_sync(
    rd: RunDir, record: RunStatus, results: dict[str, Any], warnings: list[str]
) -> OSError | None:
    """Write the final ``status.json`` and ``results.json``; a full disk becomes a warning.

    When even this fails, ``status.json`` keeps its last content (``running``); the run directory's
    lock is gone with this process, so :meth:`RunDir.read_status` reads such a run as interrupted.

    Returns:
        The error, or ``None`` when both files were written.
    """
    try:
        rd.sync(record, results, force=True)
    except OSError as exc:
        warnings.append(
            f"could not write status.json and results.json in {rd.path}: {exc.strerror or exc}; "
            "the stage records in stages/ are complete up to the last finished stage"
        )
        return exc
    return None


def _save(rd: RunDir, node: Node, artifact: Artifact) -> bool:
    """Write a stage's artifact as its ``save``/``save_thin`` say; return whether ``stages/`` holds it whole.

    ``save = false`` writes nothing to ``stages/``; ``save_thin = N`` writes every N-th draw of
    ``Samples``. Either way the full artifact is also kept in the run's ``.resume/`` folder
    (:meth:`quadriga.rundir.RunDir.save_resume_copy`) until the run finishes, so ``--resume``
    reloads exactly what later stages had; the return value (``resumable`` in ``status.json``) is
    ``False``. A stage saved in full drops any copy an earlier attempt left there.

    Raises:
        OSError: a file cannot be written (a full disk).
    """
    if not node.save:
        (rd.stage_dir(node.name) / "artifact.pt").unlink(missing_ok=True)  # an earlier attempt's
        rd.save_resume_copy(node.name, artifact)
        return False
    if node.save_thin != 1 and isinstance(artifact, Samples):
        rd.save_artifact(node.name, artifact.thinned(node.save_thin))
        rd.save_resume_copy(node.name, artifact)
        return False
    rd.drop_resume_copy(node.name)
    return rd.save_artifact(node.name, artifact)


@contextlib.contextmanager
def _stage_warnings(stage: str, out: list[str]) -> Iterator[None]:
    """Turn the ``UserWarning``s a stage emits into run warnings, one line each: ``stage S: message``.

    Such warnings come from the component or the statistics it calls (an R-hat above its
    threshold, say); as run warnings they are printed once, after the results, naming the stage,
    instead of as a raw ``path:line: UserWarning`` with its source line. Every one is kept, also
    when a worker process runs many stages (Python's default filter shows a warning once per
    place). Other categories (deprecations, numerical ``RuntimeWarning``) are passed on unchanged.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        try:
            yield
        finally:
            for w in caught:
                if issubclass(w.category, UserWarning):
                    line = f"stage {stage}: {' '.join(str(w.message).split())}"
                    if line not in out:
                        out.append(line)
                else:
                    warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def _input_names(node: Node) -> list[str]:
    """The node names a stage takes as inputs (``inputs`` values, lists flattened)."""
    names: list[str] = []
    for value in node.inputs.values():
        names += [str(v) for v in value] if isinstance(value, list) else [str(value)]
    return names


def _timings(artifact: Any) -> dict[str, Any]:
    out = {k: jsonable(v) for k, v in (getattr(artifact, "info", None) or {}).items() if is_timing(k)}
    out.update({k: jsonable(v) for k, v in (getattr(artifact, "values", None) or {}).items() if is_timing(k)})
    return out


def _streamer(rd: RunDir, registry: Registry, run: Run, stage: str, warnings: list[str]) -> Callable:
    """``on_log`` of a stage: append the record to ``metrics.jsonl``, then call ``quadriga_step_metrics``."""

    def on_log(record: dict[str, Any]) -> None:
        rd.append_metrics(record)
        warnings.extend(registry.call_hook("quadriga_step_metrics", run=run, stage=stage, record=record))

    return on_log


def execute(
    pipeline: Pipeline,
    registry: Registry,
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
        RunInterrupted: (a ``KeyboardInterrupt``) after marking the run ``interrupted`` and saving
            what finished; its ``run_dir`` is the run directory.
        ConfigError: ``out`` holds a run, ``resume`` is not a run of this pipeline (or is damaged, or
            another process is running it), a symlink in the way.
    """
    if resume is not None:
        rd = RunDir.open(resume, pipeline.name)
    else:
        rd = RunDir.create(out, runs_root, pipeline.name)
    try:
        with lock_dir(rd.path):
            return _execute(pipeline, registry, rd, resume is not None, argv, display)
    except DirectoryLocked as exc:
        raise ConfigError(str(exc), key="--resume" if resume is not None else "--out") from None


def _execute(
    pipeline: Pipeline,
    registry: Registry,
    rd: RunDir,
    resuming: bool,
    argv: list[str] | None,
    display: Callable[[str], Any] | None,
) -> RunResult:
    """The body of :func:`execute`, with the run directory made (or opened) and locked."""
    if resuming:
        previous, old = rd.read_status(), rd.read_results()
        plan = rd.resume_plan()
        reload, kept, copies = set(plan.reloaded), set(plan.kept), set(plan.from_copy)
    else:
        previous, old, reload, kept, copies = RunStatus(), {}, set(), set(), set()
    fingerprints = _write_provenance(pipeline, registry, rd, resuming, argv)
    run = Run(rd.path, pipeline, pipeline.seed)
    # the finished stages of an earlier attempt stay recorded until they are reloaded or re-run,
    # so a resume that crashes early loses nothing
    run.record.stages = {
        n: previous.stages[n]
        for n in pipeline.stages
        if n in previous.stages and previous.stages[n].status == "finished"
    }
    results: dict[str, Any] = {
        "pipeline": pipeline.name,
        "seed": pipeline.seed,
        "stages": dict(old.get("stages", {})),
    }
    warnings = registry.call_hook("quadriga_run_start", run=run)
    values: dict[str, Any] = {}
    artifacts: dict[str, Any] = {}
    error: BaseException | None = None
    error_file: Path | None = None
    rd.sync(run.record, results, force=True)
    try:
        values.update(_prepared_tasks(pipeline))  # a failure here is recorded like a stage's
        for name, node in pipeline.stages.items():
            if name in kept:  # its results are on disk and nothing left to run needs its artifact
                run.record.stages[name] = attrs.evolve(previous.stages[name], resumed=True)
                rd.sync(run.record, results)
                continue
            loaded = (
                rd.load_artifact(name, node.output_type, warnings, copy=name in copies)
                if name in reload
                else None
            )
            if loaded is not None:
                values[name] = artifacts[name] = loaded
                run.record.stages[name] = attrs.evolve(previous.stages[name], resumed=True)
                rd.sync(run.record, results)
                continue
            missing = [s for s in _input_names(node) if s in kept]
            if missing:
                raise QuadrigaError(
                    f"stage '{name}' could not be reloaded and must run, but its input "
                    f"{', '.join(repr(m) for m in missing)} was not saved in full; start a new run."
                )
            artifact, seconds = _run_timed(
                node, pipeline, rd, registry, run, values, results, warnings, display
            )
            values[name] = artifacts[name] = artifact
            try:
                _record_stage(
                    rd, registry, run, node, artifact, seconds, results, warnings, fingerprints.get(name)
                )
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                where = f" writing {exc.filename}" if exc.filename else ""
                raise StageError(
                    name,
                    f"it ran, but its result could not be saved: No space left on device{where} (the "
                    "partial file is removed). Free space on that disk, then resume.",
                ) from exc
        run.record.status = "finished"
    except KeyboardInterrupt as exc:
        interrupted = RunInterrupted(rd.path, exit_code=getattr(exc, "exit_code", 130))  # 143: SIGTERM
        run.record.status, error = "interrupted", interrupted
        run.record.mark_running_as("interrupted")
        results["status"] = run.status
        _final_sync(rd, run.record, results, warnings)
        warnings += registry.call_hook("quadriga_run_end", run=run, status=run.status, error=interrupted)
        raise interrupted from exc
    except Exception as exc:
        error = exc
        error_file = _record_failure(rd, run, exc, warnings)
    except BaseException as exc:  # SystemExit and the like outside a stage: recorded, then passed on
        run.record.status, run.record.error = "failed", f"{type(exc).__name__}: {exc}"
        run.record.mark_running_as("failed", exc)
        results["status"] = run.status
        _final_sync(rd, run.record, results, warnings)
        raise
    order = {n: i for i, n in enumerate(pipeline.stages)}  # pipeline order, also for merged records
    results["stages"] = dict(sorted(results["stages"].items(), key=lambda kv: order.get(kv[0], len(order))))
    results["status"] = run.status
    if run.status == "finished":
        _remove_resume_store(rd, warnings)
    sync_error = _final_sync(rd, run.record, results, warnings)
    if sync_error is not None and error is None:  # finished, but its record could not be written
        run.record.status, error = "failed", sync_error
    warnings += registry.call_hook("quadriga_run_end", run=run, status=run.status, error=error)
    return RunResult(rd.path, run.status, artifacts, results, error, warnings, error_file)


def _remove_resume_store(rd: RunDir, warnings: list[str]) -> None:
    """Remove the full copies of thinned and unsaved stages once every stage has finished.

    Nothing is left to run, so no resume needs them; a finished run then takes the disk space its
    ``save``/``save_thin`` settings ask for. A removal that fails becomes a warning.
    """
    try:
        rd.remove_resume_store()
    except (OSError, ConfigError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        warnings.append(f"could not remove the full copies in {rd.path / RESUME_STORE}: {why}")


def _write_provenance(
    pipeline: Pipeline, registry: Registry, rd: RunDir, resuming: bool, argv: list[str] | None
) -> dict[str, Any]:
    """Write the resolved ``pipeline.toml`` and the manifest; returns each stage's config fingerprint.

    A resumed run keeps the provenance of its first attempt and appends this one to its
    ``resumes`` list. The fingerprints are recorded per finished stage and checked by ``--resume``.
    """
    resolved = pipeline.resolved()
    rd.write_pipeline(resolved)
    fingerprints = stage_fingerprints(resolved)
    record = manifest(pipeline, registry, argv)
    if resuming:
        first = rd.read_manifest()
        if first:
            resumes = [*first.get("resumes", []), record]
            record = {**first, "resumes": resumes}
    rd.write_manifest(record)
    return fingerprints


def _prepared_tasks(pipeline: Pipeline) -> dict[str, Any]:
    """Prepare every task of ``pipeline`` with its generator (its node's seed and device); name -> task.

    Raises:
        ConfigError: ``prepare`` refused a parameter; names the pipeline file, ``[task.NAME]``
            and the key the task gave.
        TaskError: ``prepare`` raised anything else (an allocation failure said in plain words).
    """
    values: dict[str, Any] = {}
    for name, node in pipeline.tasks.items():
        task = cast("Task", node.component)
        try:
            task.prepare(generator=make_generator(pipeline.seed_of(node), pipeline.device_of(node)))
        except ConfigError as exc:
            if exc.file or exc.table:
                raise
            raise ConfigError(exc.reason, file=pipeline.file, table=node.table, key=exc.key) from exc
        except QuadrigaError:
            raise
        except Exception as exc:
            raise TaskError(node.table, _failure_text(exc), details=traceback.format_exc()) from exc
        values[name] = node.component
    return values


def _run_timed(
    node: Node,
    pipeline: Pipeline,
    rd: RunDir,
    registry: Registry,
    run: Run,
    values: dict[str, Any],
    results: dict[str, Any],
    warnings: list[str],
    display: Callable[[str], Any] | None,
) -> tuple[Artifact, float]:
    """Mark stage ``node`` running and run it under its progress display; returns ``(artifact, seconds)``.

    Its log records stream to the run directory and its Python warnings are collected into
    ``warnings`` as it runs.

    Raises:
        StageError: the stage's component raised (from :func:`run_stage`).
    """
    name = node.name
    run.record.stages[name] = StageStatus("running", node.use, node.kind)
    rd.clear_stage_record(name)
    rd.sync(run.record, results)
    start = time.perf_counter()
    with display(name) if display is not None else contextlib.nullcontext() as on_update:
        progress = StageProgress(
            name, on_log=_streamer(rd, registry, run, name, warnings), on_update=on_update
        )
        with _stage_warnings(name, warnings):
            artifact = run_stage(node, pipeline, values, progress=progress)
    return artifact, time.perf_counter() - start


def _record_stage(
    rd: RunDir,
    registry: Registry,
    run: Run,
    node: Node,
    artifact: Artifact,
    seconds: float,
    results: dict[str, Any],
    warnings: list[str],
    config: Any,
) -> None:
    """Save a finished stage: its summary (with figures and health notes), artifact and status record.

    Health notes are added to ``warnings``, as are the warnings the ``quadriga_stage_end`` hooks
    return; ``config`` is the stage's fingerprint (:func:`stage_fingerprints`).
    """
    name = node.name
    summary = artifact.summary()
    summary.update(component=node.use, kind=node.kind, **stage_name_fields(node))
    summary["figures"] = rd.save_figures(name, artifact)
    notes = [h.as_dict() for h in artifact.health()]
    if notes:
        summary["health"] = notes
        warnings.extend(f"stage '{name}': {n['quantity']}: {n['message']}" for n in notes)
    resumable = _save(rd, node, artifact)
    results["stages"][name] = summary
    run.record.stages[name] = StageStatus(
        "finished",
        node.use,
        node.kind,
        round(seconds, 3),
        resumable,
        timings=_timings(artifact),
        config=config,
    )
    rd.write_stage_record(name, run.record.stages[name], summary)
    rd.sync(run.record, results)
    warnings.extend(
        registry.call_hook("quadriga_stage_end", run=run, stage=name, artifact=artifact, seconds=seconds)
    )


def _record_failure(rd: RunDir, run: Run, exc: Exception, warnings: list[str]) -> Path | None:
    """Mark the run (and its running stage) failed by ``exc`` and write ``error.txt``; return its path.

    ``error.txt`` holds a :class:`StageError`'s or :class:`TaskError`'s details, else the
    traceback; if it cannot be written (disk full) a warning says so, ``None`` is returned and the
    status still says failed.
    """
    run.record.status = "failed"
    run.record.error = f"{type(exc).__name__}: {exc}"
    run.record.mark_running_as("failed", exc)
    try:
        details = exc.details if isinstance(exc, (StageError, TaskError)) else None
        rd.write_error(details or traceback.format_exc())
    except OSError as write_exc:
        warnings.append(f"could not write error.txt: {write_exc.strerror or write_exc}")
        return None
    return rd.path / "error.txt"
