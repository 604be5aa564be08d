"""Reading a saved run back: :func:`load_run`, :class:`LoadedRun` and :func:`read_run_file`.

Every reader of a run directory outside the runner (the notebook, ``quadriga report``, the sweep
table, ``quadriga compare``) goes through here or through :class:`~quadriga.rundir.RunDir`; the
files are checked as ``quadriga run --resume`` checks them, and a damaged file is a
:class:`~quadriga.errors.ConfigError` naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from quadriga.artifacts import artifact_class
from quadriga.errors import ConfigError
from quadriga.rundir import RunDir
from quadriga.rundir.records import _results_problem, _status_problem, read_checked
from quadriga.rundir.tidy import COLUMNS, tidy_rows

__all__ = ["RUN_FILES", "LoadedRun", "is_run", "load_run", "read_pipeline_file", "read_run_file"]

#: the file that makes a directory a run directory (written at the start of every run)
RUN_FILES = ("results.json", "status.json", "manifest.json", "pipeline.toml", "metrics.jsonl")


def is_run(path: str | Path) -> bool:
    """Whether ``path`` is a run directory (it holds ``results.json``)."""
    return (Path(path) / "results.json").is_file()


class _LazyArtifacts(Mapping[str, Any]):
    """``{stage: artifact}`` of a saved run, each read from ``stages/<stage>/artifact.pt`` on first use."""

    def __init__(self, run_dir: Path, stages: Mapping[str, Mapping[str, Any]]) -> None:
        self._dir, self._stages = run_dir, stages
        self._cache: dict[str, Any] = {}

    def __getitem__(self, stage: str) -> Any:
        if stage not in self._cache:
            if stage not in self._stages:
                raise KeyError(f"no stage '{stage}' in {self._dir}; stages: {', '.join(self._stages)}")
            summary = self._stages[stage]
            kind = artifact_class(summary) if summary.get("type") else None
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
        """``finished``, ``failed``, ``interrupted``, ``running`` (or ``unknown``), as read now.

        From ``status.json`` through :meth:`RunDir.read_status` (a ``running`` run whose process is
        gone is ``interrupted``); ``results.json``'s status when there is no ``status.json``.
        """
        if (self.dir / "status.json").is_file():
            return RunDir(self.dir).read_status().status
        return str(self.results.get("status", "unknown"))

    @property
    def figures(self) -> list[Path]:
        """The figure files the stages saved, in stage order."""
        return [
            self.dir / f for res in self.results.get("stages", {}).values() for f in res.get("figures", [])
        ]

    def rows(self) -> list[dict[str, Any]]:
        """The tidy rows of this run (:func:`quadriga.rundir.tidy.tidy_rows`, columns :data:`COLUMNS`)."""
        base = {
            "pipeline": self.results.get("pipeline"),
            "run_id": self.dir.name,
            "seed": self.results.get("seed"),
        }
        return tidy_rows(self.results, base)

    def to_pandas(self) -> Any:
        """The tidy table of this run as a :class:`pandas.DataFrame` (pandas is imported on call)."""
        import pandas as pd  # type: ignore[import-untyped]

        return pd.DataFrame(self.rows(), columns=list(COLUMNS))

    def __repr__(self) -> str:
        """One line per stage: type, component, :meth:`~quadriga.artifacts.Artifact.headline`."""
        stages = self.results.get("stages", {})
        head = f"{self.results.get('pipeline')!r}, seed={self.results.get('seed')}, {self.status}"
        lines = [f"LoadedRun({head}, {self.dir})"]
        for name, res in stages.items():
            what = artifact_class(res).headline(res)
            lines.append(f"  {name}: {res.get('type')} from {res.get('component')} ({what})")
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
    return {
        "results.json": (_results_problem, 'an object with a table of stages, {"stages": {name: {...}}}'),
        "status.json": (_status_problem, "an object with a status and a table of stages, each with a status"),
        "manifest.json": (_manifest_problem, "an object of versions, seeds and the command line"),
    }


def read_run_file(run_dir: Path, name: str, *, key: str | None = None) -> dict[str, Any]:
    """The content of ``results.json``, ``status.json`` or ``manifest.json`` in ``run_dir``, checked.

    Args:
        run_dir: the run directory.
        name: ``"results.json"``, ``"status.json"`` or ``"manifest.json"``.
        key: the parameter or flag named in the error (``"path"``), or None: the file alone is named.

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
    run_dir = Path(path)
    if not is_run(run_dir):
        children = sorted(c.name for c in run_dir.iterdir() if is_run(c)) if run_dir.is_dir() else []
        hint = f" It holds runs: load one, e.g. load_run('{run_dir / children[-1]}')." if children else ""
        raise ConfigError(f"'{run_dir}' is not a run directory (no results.json).{hint}", key="path")
    results = read_run_file(run_dir, "results.json", key="path")
    manifest = read_run_file(run_dir, "manifest.json", key="path")
    pipeline = read_pipeline_file(run_dir, key="path")
    artifacts = _LazyArtifacts(run_dir, results.get("stages", {}))
    return LoadedRun(run_dir, results, pipeline, manifest, artifacts)


def read_pipeline_file(run_dir: Path, *, key: str) -> dict[str, Any]:
    """The resolved configuration a run saved (``pipeline.toml``) as a dict (``{}`` when absent).

    Raises:
        ConfigError: the file is not TOML (naming it and ``key``).
    """
    return RunDir(Path(run_dir)).read_pipeline(key=key)
