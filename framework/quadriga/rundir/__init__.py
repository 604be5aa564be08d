"""The run directory: the one module that reads and writes it.

A run writes ``runs/<pipeline>/<UTC timestamp>/`` (or ``--out DIR``):

- ``pipeline.toml``: the resolved, expanded configuration (every default filled in);
- ``manifest.json``: Python, torch, quadriga and every plugin distribution with its
  version, the root seed and every derived task and stage seed, the command line;
- ``status.json``: a :class:`RunStatus` (``running``/``finished``/``failed``/``interrupted``,
  per-stage :class:`StageStatus` with seconds and timings, the error);
- ``results.json``: the :meth:`~quadriga.artifacts.Artifact.summary` of every finished stage
  (no wall-clock figures: two identical runs give identical files);
- ``metrics.jsonl``: records streamed by long stages (``progress.log``);
- ``<stage>-<figure>.png`` and ``stages/<stage>/artifact.pt`` (see
  :meth:`~quadriga.artifacts.Artifact.save`) for ``--resume``; ``error.txt`` on failure;
- ``.resume/<stage>/artifact.pt`` (:data:`RESUME_STORE`), while the run is unfinished: the full
  artifact of each stage saved thinned (``save_thin = N``) or not at all (``save = false``), so
  ``--resume`` hands later stages exactly what they would have had. A finished run removes it.

Each finished stage also writes ``stages/<stage>/record.json`` (its :class:`StageStatus` and
summary), a constant cost per stage. ``status.json`` and ``results.json`` hold every stage, so
rewriting them after each stage would make a run quadratic in its number of stages: :meth:`RunDir.sync`
rewrites them at most every :data:`SYNC_SECONDS` (and never spending more than a tenth of the run
on it), and always at the start, at the end, on failure and on Ctrl-C. After a hard kill they may
lag by that long; :meth:`RunDir.read_status` and :meth:`RunDir.read_results` merge the stage
records back in, so every finished stage is still on disk and ``--resume`` reloads it.

Stage directories are named by :func:`~quadriga.fileio.stage_dir_name` (distinct names,
distinct directories); nothing is written through a symbolic link inside the directory.

Modules: :mod:`quadriga.rundir.records` (the status records), :mod:`quadriga.rundir.paths`
(creating directories); :class:`RunDir` here reads and writes the files.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quadriga.errors import ConfigError
from quadriga.fileio import (
    LOCK,
    append_jsonl,
    atomic_path,
    atomic_write_json,
    atomic_write_text,
    held_elsewhere,
    refuse_symlinks,
    run_alive,
    safe_name,
    stage_dir_name,
)
from quadriga.rundir.paths import make_dir, new_run_dir
from quadriga.rundir.records import (
    ResumePlan,
    RunStatus,
    StageStatus,
    _results_problem,
    _status_problem,
    read_checked,
    stage_fingerprints,
)

if TYPE_CHECKING:
    from quadriga.artifacts import Artifact

__all__ = [
    "GONE",
    "RESUME_STORE",
    "SYNC_SECONDS",
    "ResumePlan",
    "RunDir",
    "RunStatus",
    "StageStatus",
    "make_dir",
    "new_run_dir",
    "refuse_other_files",
]

#: the longest ``status.json`` and ``results.json`` lag behind the stages during a run (seconds)
SYNC_SECONDS = 1.0
#: the folder of full copies of thinned or unsaved stages, kept until the run finishes
RESUME_STORE = ".resume"
#: the file beside a finished stage's artifact holding its status and summary
RECORD = "record.json"
#: the error of a run read as interrupted because its process is gone (:meth:`RunDir.read_status`)
GONE = (
    "the process running it ended without recording why (killed, SIGKILL, os._exit or a crash); "
    "resume it with --resume"
)


class RunDir:
    """A run directory: every read and write of its files goes through here.

    Create one with :meth:`create` (a new run) or :meth:`open` (an earlier run, for resume).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._synced_at: float | None = None
        self._sync_cost = 0.0
        # whether .resume/ may exist: False only for a directory this object created (empty then),
        # until a copy is saved there; spares each saved stage a look for a copy to drop
        self._resume_store = True
        # the stages whose record.json this object wrote; None when the directory may hold records
        # it did not write (one opened for resume), so that clearing a record must look on disk
        self._written: set[str] | None = None

    @classmethod
    def create(cls, out: Path | None, runs_root: Path, pipeline_name: str) -> RunDir:
        """A new run directory: ``out`` (which must not hold a run) or a timestamped one under ``runs_root``.

        Raises:
            ConfigError: ``out`` already holds a run, or a file a run writes (``pipeline.toml``: perhaps
                the source pipeline itself), or is (or lies under) a symbolic link.
        """
        if out is None:
            return cls._new(new_run_dir(runs_root, pipeline_name))
        path = Path(out)
        refuse_symlinks(path)
        if not os.path.lexists(path):  # nothing there to refuse
            make_dir(path, "--out")
            return cls._new(path)
        if (path / "status.json").exists() or (path / "results.json").exists():
            raise ConfigError(
                f"'{path}' already holds a run. Continue it with --resume {path}, or choose another "
                "--out directory.",
                key="--out",
            )
        taken = [p.name for p in cls(path).record_files()] + (
            ["stages"] if (path / "stages").exists() else []
        )
        if taken:
            raise ConfigError(
                f"'{path}' already holds {', '.join(taken)}, which the run would overwrite (the pipeline "
                "file itself, if it is there). Choose a new or empty --out directory.",
                key="--out",
            )
        refuse_other_files(
            path, "a run to continue", "a run", ", or continue a run of yours with --resume DIR"
        )
        make_dir(path, "--out")
        return cls._new(path)

    @classmethod
    def _new(cls, path: Path) -> RunDir:
        """A :class:`RunDir` of a directory just made (or found empty): it has no ``.resume/`` yet."""
        rd = cls(path)
        rd._resume_store = False
        rd._written = set()
        return rd

    @classmethod
    def open(cls, path: Path, pipeline_name: str | None = None) -> RunDir:
        """An earlier run directory, checked to be one (and of ``pipeline_name`` when given).

        Raises:
            ConfigError: no ``status.json``, a damaged ``status.json`` or ``results.json``, a run of
                another pipeline, a run another process is running, or a symbolic link anywhere in it.
        """
        rd = cls(path)
        refuse_symlinks(rd.path)
        if not (rd.path / "status.json").is_file():
            raise ConfigError(f"'{rd.path}' is not a run directory (no status.json).", key="--resume")
        if held_elsewhere(rd.path):
            raise ConfigError(
                f"'{rd.path}' is being run by another quadriga process; wait for it to finish before "
                "resuming it.",
                key="--resume",
            )
        rd.check_files()
        for root, dirs, files in os.walk(rd.path):
            for name in dirs + files:
                if os.path.islink(os.path.join(root, name)):
                    raise ConfigError(
                        f"'{os.path.join(root, name)}' is a symbolic link; quadriga does not write through "
                        "links inside a run directory. Replace it with a real directory or file.",
                        key="--resume",
                    )
        saved = rd.read_manifest().get("pipeline")
        if pipeline_name is not None and saved is not None and saved != pipeline_name:
            raise ConfigError(
                f"'{rd.path}' is a run of pipeline '{saved}', not '{pipeline_name}'. Resume it with "
                f"`quadriga run {saved} --resume {rd.path}`.",
                key="--resume",
            )
        return rd

    def check_files(self) -> None:
        """Check that ``status.json`` and ``results.json`` (when present) are readable and well-formed.

        Raises:
            ConfigError: naming the file, what is wrong, and what to do (``--resume`` at fault).
        """
        for name, check in (("status.json", _status_problem), ("results.json", _results_problem)):
            path = self.path / name
            if not path.is_file():
                continue
            _, problem = read_checked(path, check)
            if problem:
                raise ConfigError(
                    f"'{path}' {problem}. The run directory is damaged; start a new run (the artifacts "
                    "of finished stages are in its stages/ folder).",
                    key="--resume",
                )

    # ---- files
    def _file(self, name: str) -> Path:
        path = self.path / name
        refuse_symlinks(path, self.path)
        return path

    def _read_json(self, name: str) -> dict[str, Any]:
        path = self.path / name
        if not path.is_file():
            return {}
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def _records(self) -> list[dict[str, Any]]:
        """The ``record.json`` of every finished stage (unreadable ones skipped)."""
        root = self.path / "stages"
        if not root.is_dir():
            return []
        out = []
        for path in sorted(root.glob(f"*/{RECORD}")):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(data, dict) and isinstance(data.get("stage"), str):
                out.append(data)
        return out

    def read_status(self) -> RunStatus:
        """The :class:`RunStatus` in ``status.json`` (an empty one when there is none).

        A ``running`` record whose process is gone (:func:`~quadriga.fileio.run_alive` is false: it
        was killed, or ended itself with ``os._exit``) is read as ``interrupted``, with its running
        stages, and the error :data:`GONE`. Stages whose ``record.json`` says finished but
        ``status.json`` does not (it lags by up to :data:`SYNC_SECONDS` after a hard kill) are read
        from their record.
        """
        data = self._read_json("status.json")
        status = RunStatus.from_json(data if isinstance(data, dict) and not _status_problem(data) else {})
        if status.status == "running" and run_alive(self.path) is False:
            status.mark_running_as("interrupted")  # its process is gone: it was killed
            status.status = "interrupted"
            status.error = status.error or GONE
        self._merge_records(status)
        return status

    def _merge_records(self, status: RunStatus) -> None:
        """Put in ``status`` each stage whose ``record.json`` says finished but ``status`` does not."""
        for rec in self._records():
            known = status.stages.get(rec["stage"])
            if known is None or known.status != "finished":
                status.stages[rec["stage"]] = StageStatus.from_json(rec.get("status", {}))

    def recorded_status(self) -> str | None:
        """The ``status`` written in ``status.json``; ``None`` when there is none or it is damaged."""
        data = self._read_json("status.json")
        if _status_problem(data) or not isinstance(data.get("status"), str):
            return None
        return str(data["status"])

    def mark_ended(self, state: str, error: str) -> None:
        """Record a run that ended abnormally (``failed``, ``interrupted``) in ``status.json``.

        The finished stages are kept (those ``status.json`` had not caught up with too, from their
        ``record.json``) and none stays ``running``; a final status the run wrote itself on the way
        out (``failed``, ``interrupted``, ``finished``) is kept as it is. A write that fails (a full
        disk) is skipped: the caller reports the error anyway.
        """
        if self.recorded_status() in ("failed", "interrupted", "finished"):
            return
        data = self._read_json("status.json")  # as written: its process is gone, nothing to infer
        status = RunStatus.from_json(data if isinstance(data, dict) and not _status_problem(data) else {})
        self._merge_records(status)
        status.mark_running_as(state)
        status.status, status.error = state, error
        try:
            self.write_status(status)
        except OSError:
            pass

    def write_status(self, status: RunStatus) -> None:
        """Atomically rewrite ``status.json``."""
        atomic_write_json(self._file("status.json"), status.to_json(), checked=True)

    def read_results(self) -> dict[str, Any]:
        """``results.json`` as a dict (empty when there is none).

        Summaries of finished stages it lacks (it lags after a hard kill) are read from their
        ``record.json``.
        """
        results = self._read_json("results.json")
        if not isinstance(results, dict) or _results_problem(results):
            results = {}
        records = self._records()
        if records:
            stages = results.setdefault("stages", {})
            for rec in records:
                if rec["stage"] not in stages and isinstance(rec.get("summary"), dict):
                    stages[rec["stage"]] = rec["summary"]
        return results

    def write_results(self, results: dict[str, Any]) -> None:
        """Atomically rewrite ``results.json``."""
        atomic_write_json(self._file("results.json"), results, checked=True)

    def sync(self, status: RunStatus, results: dict[str, Any], *, force: bool = False) -> bool:
        """Rewrite ``status.json`` and ``results.json`` when due; return whether they were written.

        Due when ``force`` is given, on the first call, or once :data:`SYNC_SECONDS` have passed
        since the last write and at least ten times as long as that write took (so the rewrites,
        whose cost grows with the number of stages, take at most a tenth of the run: its cost
        stays linear in the number of stages). The stage records (:meth:`write_stage_record`)
        hold what a skipped rewrite would have added.
        """
        now = time.perf_counter()
        if not force and self._synced_at is not None:
            if now - self._synced_at < max(SYNC_SECONDS, 10 * self._sync_cost):
                return False
        self.write_results(results)
        self.write_status(status)
        self._synced_at = time.perf_counter()
        self._sync_cost = self._synced_at - now
        return True

    def write_stage_record(self, stage: str, status: StageStatus, summary: dict[str, Any]) -> None:
        """Atomically write ``stages/<stage>/record.json``: the finished stage's status and summary.

        The stage's directory is made when it is missing (a stage saved with ``save = false``).
        """
        if self._written is not None:
            self._written.add(stage)
        atomic_write_json(
            self._file(f"stages/{stage_dir_name(stage)}/{RECORD}"),
            {"stage": stage, "status": status.to_json(), "summary": summary},
            checked=True,  # _file refused links from the run directory down to the file
        )

    def clear_stage_record(self, stage: str) -> None:
        """Remove a stage's ``record.json`` before it runs again (a rerun that fails leaves none).

        In a directory this object created, only the records it wrote can exist: for any other
        stage there is nothing to remove and nothing is looked up.
        """
        if self._written is not None and stage not in self._written:
            return
        path = self._file(f"stages/{stage_dir_name(stage)}/{RECORD}")  # no link from the run down
        path.unlink(missing_ok=True)

    def read_manifest(self) -> dict[str, Any]:
        """``manifest.json`` as a dict (empty when there is none or it is not an object)."""
        data = self._read_json("manifest.json")
        return data if isinstance(data, dict) else {}

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        """Atomically write ``manifest.json``."""
        atomic_write_json(self._file("manifest.json"), manifest, checked=True)

    def saved_pipeline(self) -> Path | None:
        """The path of the run's resolved ``pipeline.toml`` (for ``--resume``), or ``None`` when absent."""
        path = self.path / "pipeline.toml"
        return path if path.is_file() else None

    def read_pipeline(self, *, key: str = "path") -> dict[str, Any]:
        """The resolved configuration in ``pipeline.toml`` as a dict (``{}`` when absent).

        Raises:
            ConfigError: the file is not TOML, naming it and ``key``.
        """
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib

        toml = self.path / "pipeline.toml"
        try:
            return tomllib.loads(toml.read_text(encoding="utf-8")) if toml.is_file() else {}
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(
                f"'{toml}' cannot be read as TOML ({exc}). The run directory is damaged; re-run the "
                "pipeline or restore the file from a copy.",
                key=key,
            ) from exc

    def read_pipeline_text(self) -> str:
        """The text of ``pipeline.toml`` as saved (``""`` when absent), for reports."""
        path = self.saved_pipeline()
        return path.read_text(encoding="utf-8") if path is not None else ""

    def resumable(self) -> bool:
        """Whether an attempt saved its configuration (``pipeline.toml`` and ``manifest.json``)."""
        return self.saved_pipeline() is not None and (self.path / "manifest.json").is_file()

    def record_files(self) -> list[Path]:
        """The run's record files that exist: manifest, pipeline, results, status and error text."""
        names = ("manifest.json", "pipeline.toml", "results.json", "status.json", "error.txt")
        return [self.path / n for n in names if (self.path / n).is_file()]

    def write_pipeline(self, resolved: dict[str, Any]) -> None:
        """Write the resolved, expanded configuration to ``pipeline.toml``."""
        import tomli_w

        atomic_write_text(self._file("pipeline.toml"), tomli_w.dumps(resolved), checked=True)

    def write_error(self, text: str) -> None:
        """Write the traceback of a failure to ``error.txt``."""
        atomic_write_text(self._file("error.txt"), text, checked=True)

    def append_metrics(self, record: dict[str, Any]) -> None:
        """Append one record to ``metrics.jsonl``."""
        append_jsonl(self._file("metrics.jsonl"), record)

    # ---- stages
    def stage_dir(self, stage: str) -> Path:
        """``stages/<stage_dir_name(stage)>`` (not created)."""
        path = self.path / "stages" / stage_dir_name(stage)
        refuse_symlinks(path, self.path)
        return path

    def save_artifact(self, stage: str, artifact: Any) -> bool:
        """Save a stage's artifact for resume; return whether it can be reloaded."""
        directory = self.stage_dir(stage)
        directory.mkdir(parents=True, exist_ok=True)
        return bool(artifact.save(directory))

    def resume_copy_dir(self, stage: str) -> Path:
        """``.resume/<stage_dir_name(stage)>``: where a thinned or unsaved stage keeps its full artifact."""
        path = self.path / RESUME_STORE / stage_dir_name(stage)
        refuse_symlinks(path, self.path)
        return path

    def save_resume_copy(self, stage: str, artifact: Any) -> bool:
        """Keep the full artifact of a stage saved thinned or not at all, until the run finishes.

        Written atomically to ``.resume/<stage>/artifact.pt`` (:data:`RESUME_STORE`). An artifact
        that cannot be reloaded (a trained torch model, a field that cannot be saved) leaves no
        copy.

        Returns:
            Whether the copy was written (and :meth:`load_artifact` with ``copy=True`` reads it).

        Raises:
            OSError: the disk is full or the folder cannot be written.
        """
        directory = self.resume_copy_dir(stage)
        self._resume_store = True
        directory.mkdir(parents=True, exist_ok=True)
        if artifact.save(directory):
            return True
        self.drop_resume_copy(stage)
        return False

    def has_resume_copy(self, stage: str) -> bool:
        """Whether ``.resume/<stage>/artifact.pt`` exists (a full copy of a thinned or unsaved stage)."""
        return (self.resume_copy_dir(stage) / "artifact.pt").is_file()

    def drop_resume_copy(self, stage: str) -> None:
        """Remove a stage's full copy from ``.resume/`` (its artifact is now saved in full in ``stages/``)."""
        if not self._resume_store:  # a new run that has kept no copy
            return
        directory = self.resume_copy_dir(stage)
        if directory.is_dir():
            shutil.rmtree(directory)

    def remove_resume_store(self) -> None:
        """Remove ``.resume/`` (every full copy), once the run has finished.

        A finished run's disk use is then that of its ``stages/`` files alone.

        Raises:
            OSError: a file in it cannot be removed.
            ConfigError: ``.resume`` is a symbolic link (it is left alone).
        """
        if not self._resume_store:  # a new run that has kept no copy
            return
        path = self.path / RESUME_STORE
        refuse_symlinks(path, self.path)
        if path.is_dir():
            shutil.rmtree(path)

    def load_artifact(
        self, stage: str, output_type: type[Artifact], notes: list[str] | None = None, *, copy: bool = False
    ) -> Artifact | None:
        """The artifact saved for ``stage``, checked to be a valid ``output_type``, or ``None``.

        ``copy`` reads the stage's full copy in ``.resume/`` (:meth:`save_resume_copy`) instead of
        ``stages/<stage>/artifact.pt``. ``None`` when none was saved, or when the saved file is
        damaged or its contents invalid (truncated, wrong shapes, NaN): the stage then runs again,
        and ``notes`` gets one line naming the file and the cause.

        Raises:
            QuadrigaError: the saved artifact is of another type.
        """
        from quadriga.errors import QuadrigaError

        loader: Any = output_type
        directory = self.resume_copy_dir(stage) if copy else self.stage_dir(stage)
        path = directory / "artifact.pt"
        try:
            artifact = loader.load(directory)
        except QuadrigaError:
            raise
        except Exception as exc:  # a truncated zip, a damaged pickle: the library's own words
            first = (str(exc).splitlines() or [""])[0].split(". ")[0][:100]
            reason = f"cannot be read ({type(exc).__name__}: {first})"
            artifact, bad = None, reason
        else:
            problems = artifact.problems() if artifact is not None else []
            bad = f"holds an invalid {output_type.__name__} ({problems[0]})" if problems else ""
            artifact = None if problems else artifact
        if bad and notes is not None:
            notes.append(f"stage '{stage}': its saved {path} {bad}; the stage runs again")
        return artifact

    def save_figures(self, stage: str, artifact: Any) -> list[str]:
        """Save ``artifact.figures`` as ``<stage>-<name>.png``; return the file names."""
        saved = []
        for name, fig in (getattr(artifact, "figures", None) or {}).items():
            path = self._file(f"{stage_dir_name(stage)}-{safe_name(name)}.png")
            with atomic_path(path, suffix=".png") as tmp:
                fig.savefig(tmp, dpi=120, bbox_inches="tight")
            saved.append(path.name)
            _release(fig)
        return saved

    def resume_plan(self) -> ResumePlan:
        """Which finished stages ``--resume`` reloads, keeps without running, and runs again.

        A finished stage whose artifact was saved in full is reloaded; so is one saved thinned or
        not at all (``save_thin = N``, ``save = false``) whose full copy the unfinished run kept in
        ``.resume/`` (:meth:`save_resume_copy`; listed in ``from_copy`` too). One whose artifact
        cannot be reloaded (such a stage without its copy, a trained torch model, a field that
        cannot be saved, a missing ``artifact.pt``) is run again only when a stage that will run
        needs it, directly or through other such stages; otherwise its results stay as recorded
        and it is not run. The
        stages' inputs come from the saved ``pipeline.toml``; without one, every such stage is
        run again. A finished stage whose settings in ``pipeline.toml`` (or an input's) were edited
        since it ran (:func:`~quadriga.rundir.records.stage_fingerprints` against the digest in
        ``status.json``) runs again, and so does every stage downstream of it.
        """
        done = {n: s for n, s in self.read_status().stages.items() if s.status == "finished"}
        saved = self.read_pipeline(key="--resume")
        tables = saved.get("stage", {})
        reasons = {n: self._not_reloadable(n, s, tables.get(n, {})) for n, s in done.items()}
        reasons = {n: r for n, r in reasons.items() if r}
        copies = [n for n in done if n not in reasons and self._thinned_or_unsaved(tables.get(n, {}))]
        if not tables:
            return ResumePlan([n for n in done if n not in reasons], list(reasons), [], reasons)
        now = stage_fingerprints(saved)
        changed = [n for n, s in done.items() if s.config is not None and now.get(n, s.config) != s.config]
        for name in changed:
            reasons[name] = "its settings in pipeline.toml changed since it ran"
        copies = [n for n in copies if n not in reasons]
        consumers: dict[str, list[str]] = {n: [] for n in tables}
        for name, table in tables.items():
            inputs = table.get("inputs", {}) if isinstance(table, dict) else {}
            for value in inputs.values() if isinstance(inputs, dict) else ():
                for source in value if isinstance(value, list) else [value]:
                    consumers.setdefault(str(source), []).append(name)
        # unfinished and changed stages run; then what they need
        to_run = {n for n in tables if n not in done} | set(changed)
        grew = True
        while grew:
            grew = False
            for name in reasons:
                if name not in to_run and any(c in to_run for c in consumers.get(name, [])):
                    to_run.add(name)
                    grew = True
        order = list(tables) + [n for n in done if n not in tables]
        return ResumePlan(
            [n for n in order if n in done and n not in reasons],
            [n for n in order if n in reasons and n in to_run],
            [n for n in order if n in reasons and n not in to_run],
            reasons,
            [n for n in order if n in changed],
            [n for n in order if n in copies],
        )

    @staticmethod
    def _thinned_or_unsaved(table: Any) -> bool:
        """Whether a stage's table says ``save = false`` or ``save_thin`` other than 1."""
        return isinstance(table, dict) and (table.get("save") is False or table.get("save_thin", 1) != 1)

    def _not_reloadable(self, stage: str, status: StageStatus, table: Any) -> str:
        """Why a finished stage's artifact cannot be reloaded, ``""`` when it can."""
        table = table if isinstance(table, dict) else {}
        directory = self.stage_dir(stage)
        if self._thinned_or_unsaved(table) and self.has_resume_copy(stage):
            return ""
        if table.get("save") is False:
            return "save = false"
        if table.get("save_thin", 1) != 1:
            return f"save_thin = {table['save_thin']}: only every {table['save_thin']}-th draw is on disk"
        if not status.resumable:
            if (directory / "model.pt").is_file():
                return "a trained torch model: model.pt is kept for inspection, not reloaded"
            return "its artifact holds values that cannot be saved"
        if not (directory / "artifact.pt").is_file():
            return "its artifact.pt is missing"
        return ""


def refuse_other_files(path: Path, own: str, kind: str, advice: str = "", flag: str = "--out") -> None:
    """Refuse an output directory ``path`` that holds files (it is not the command's own output).

    Call it only once ``path`` is known not to be the command's own output (a run to continue, a
    sweep to resume, an earlier report to replace): what is there then is someone else's, and the
    command's files would be mixed with it. A ``path`` that does not exist, is empty (a lock file
    aside) or is not a directory passes (:func:`make_dir` reports a file).

    Args:
        path: the directory given with ``flag``.
        own: what ``path`` is not, in words (``"a run to continue"``).
        kind: what the command would put there (``"a run"``).
        advice: appended to the fix (``", or continue a run of yours with --resume DIR"``).
        flag: the option at fault.

    Raises:
        ConfigError: ``path`` holds entries; the first three are named, with the fix.
    """
    other = _other_entries(Path(path))
    if other:
        shown = ", ".join(other[:3]) + (f" and {len(other) - 3} more" if len(other) > 3 else "")
        raise ConfigError(
            f"'{path}' is not empty (it holds {shown}) and is not {own}; {kind} there would mix its "
            f"files with these. Choose a new or empty {flag} directory{advice}.",
            key=flag,
        )


def _other_entries(path: Path) -> list[str]:
    """The names in the directory ``path`` a new run there would sit beside, sorted (``.lock`` aside).

    Empty when ``path`` does not exist, is not a directory (:func:`make_dir` reports that) or
    cannot be listed. The lock file is left out: a sweep worker takes the run directory's lock
    before the run starts in it.
    """
    try:
        return sorted(e.name for e in path.iterdir() if e.name != LOCK)
    except OSError:
        return []


def _release(fig: Any) -> None:
    """Detach a saved figure from pyplot's registry, so a run's memory does not grow with its stages.

    The figure object stays usable (it can be saved again); only pyplot stops holding it.
    """
    import sys

    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close(fig)
