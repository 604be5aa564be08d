"""The status records of a run directory: ``status.json`` as :class:`RunStatus` and :class:`StageStatus`.

Also :class:`ResumePlan` (what ``--resume`` reloads) and the checks that name what is wrong with a
damaged ``status.json`` or ``results.json``, with :func:`read_checked` applying one to a file (for
``--resume``, ``quadriga report`` and ``quadriga.load_run`` alike). Writing the files is
:class:`quadriga.rundir.RunDir`'s.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

STATES = ("running", "finished", "failed", "interrupted")


@attrs.define
class StageStatus:
    """One stage's entry in ``status.json``.

    Attributes:
        status: ``running``, ``finished``, ``failed`` or ``interrupted``.
        component: the registered name; kind: its registry kind.
        seconds: wall-clock seconds of the stage (finished stages).
        resumable: whether ``stages/<stage>/artifact.pt`` holds its whole artifact, so that
            ``--resume`` and ``quadriga.load_run`` can rebuild it from there; ``False`` for a
            stage saved thinned (``save_thin = N``) or not at all (``save = false``), a trained
            torch model, or a field that cannot be saved. Until the run finishes, a thinned or
            unsaved stage keeps its full copy in ``.resume/``, which ``--resume`` reloads
            (:meth:`quadriga.rundir.RunDir.resume_plan`).
        resumed: reloaded from an earlier attempt rather than run.
        error: ``"Type: message"`` of a failed stage.
        timings: wall-clock figures the component reported (info keys and metrics named as timings).
        config: :func:`stage_fingerprints` digest of the settings it ran with (finished stages).
    """

    status: str
    component: str = ""
    kind: str = ""
    seconds: float | None = None
    resumable: bool = True
    resumed: bool = False
    error: str | None = None
    timings: dict[str, Any] = attrs.field(factory=dict)
    config: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object (unset optional fields left out)."""
        out: dict[str, Any] = {"status": self.status, "component": self.component, "kind": self.kind}
        if self.seconds is not None:
            out.update(seconds=self.seconds, resumable=self.resumable, timings=self.timings)
        if self.resumed:
            out["resumed"] = True
        if self.error is not None:
            out["error"] = self.error
        if self.config is not None:
            out["config"] = self.config
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StageStatus:
        """Read one entry (unknown keys ignored)."""
        names = {f.name for f in attrs.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@attrs.define
class RunStatus:
    """The content of ``status.json``: the run's state, each stage's :class:`StageStatus`, the error."""

    status: str = "running"
    stages: dict[str, StageStatus] = attrs.field(factory=dict)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object."""
        out: dict[str, Any] = {
            "status": self.status,
            "stages": {n: s.to_json() for n, s in self.stages.items()},
        }
        if self.error is not None:
            out["error"] = self.error
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunStatus:
        """Read ``status.json`` content."""
        stages = {n: StageStatus.from_json(s) for n, s in data.get("stages", {}).items()}
        return cls(data.get("status", "running"), stages, data.get("error"))

    def mark_running_as(self, status: str, error: BaseException | None = None) -> None:
        """Give every stage still ``running`` the final ``status`` (and the error)."""
        for stage in self.stages.values():
            if stage.status == "running":
                stage.status = status
                if error is not None:
                    stage.error = f"{type(error).__name__}: {error}"


@attrs.define
class ResumePlan:
    """What ``--resume`` does with an earlier run's finished stages.

    Attributes:
        reloaded: finished stages whose artifact was saved in full, in ``stages/`` or (for a stage
            saved thinned or not at all) as its copy in ``.resume/``: reloaded, not run.
        rerun: finished stages whose artifact cannot be reloaded and that a stage still to run
            needs: run again.
        kept: finished stages whose artifact cannot be reloaded but that no stage still to run
            needs: their results on disk are kept and they are not run.
        reasons: ``{stage: why its artifact cannot be reloaded}`` for the ``rerun`` and ``kept``
            stages (``"save_thin = 10"``, ``"save = false"``, ``"a trained torch model"``, ...).
        changed: finished stages whose settings (or an input's) in ``pipeline.toml`` differ from
            those they ran with (:func:`stage_fingerprints`): run again, and listed in ``rerun`` too.
        from_copy: the ``reloaded`` stages read from their full copy in ``.resume/`` (saved
            thinned or not at all in ``stages/``).
    """

    reloaded: list[str]
    rerun: list[str]
    kept: list[str] = attrs.field(factory=list)
    reasons: dict[str, str] = attrs.field(factory=dict)
    changed: list[str] = attrs.field(factory=list)
    from_copy: list[str] = attrs.field(factory=list)

    def __iter__(self) -> Iterator[list[str]]:
        """Unpack as ``reloaded, rerun = result``."""
        return iter((self.reloaded, self.rerun))

    def describe(self) -> str:
        """One line: what is reloaded, kept and re-run, each re-run or kept stage with its reason."""
        whole = [n for n in self.reloaded if n not in self.from_copy]
        parts = [] if self.from_copy and not whole else [f"reloading {', '.join(whole) or 'no stage'}"]
        if self.from_copy:
            copy, it = ("its full copy", "it") if len(self.from_copy) == 1 else ("their full copies", "them")
            parts.append(
                f"reloading {', '.join(self.from_copy)} from {copy} in .resume/ "
                f"(stages/ holds {it} thinned or not at all)"
            )
        if self.kept:
            parts.append(
                "keeping the results of "
                + ", ".join(f"{n} ({self.reasons.get(n, 'not reloadable')})" for n in self.kept)
                + " (no stage left to run needs their artifacts)"
            )
        if self.changed:
            parts.append(
                f"re-running {', '.join(self.changed)}: their settings in pipeline.toml (or an input's) "
                "changed since they ran"
            )
        needed = [n for n in self.rerun if n not in self.changed]
        if needed:
            parts.append(
                "re-running "
                + ", ".join(f"{n} ({self.reasons.get(n, 'not reloadable')})" for n in needed)
                + ", whose artifacts a stage left to run needs"
            )
        return "; ".join(parts)


def stage_fingerprints(resolved: Mapping[str, Any]) -> dict[str, str]:
    """A digest per stage of everything its numbers depend on in a resolved pipeline.

    A stage's digest covers its own table (component, parameters, inputs, ``save``...), the root
    seed and default device, the tables of the tasks it reads and the digests of the stages it
    reads, so a change upstream changes every stage downstream. ``--resume`` runs a finished
    stage again when its recorded digest differs from the one of the edited ``pipeline.toml``.

    Args:
        resolved: the pipeline as saved in ``pipeline.toml`` (``[pipeline]``, ``[task.*]``, ``[stage.*]``).

    Returns:
        ``{stage name: 16 hex digits}``; a stage whose inputs form a cycle, or name nothing
        known, digests what it has.
    """
    head = resolved.get("pipeline", {})
    common = {k: head.get(k) for k in ("seed", "device")}
    tasks, stages = resolved.get("task", {}) or {}, resolved.get("stage", {}) or {}
    out: dict[str, str] = {}

    def digest(name: str, seen: tuple[str, ...]) -> str:
        if name in out:
            return out[name]
        table = stages.get(name, {})
        upstream = {}
        inputs = table.get("inputs", {}) if isinstance(table, dict) else {}
        for value in inputs.values() if isinstance(inputs, dict) else ():
            for source in value if isinstance(value, list) else [value]:
                source = str(source)
                if source in tasks:
                    upstream[source] = tasks[source]
                elif source in stages and source not in seen:
                    upstream[source] = digest(source, (*seen, source))
        text = json.dumps([common, table, upstream], sort_keys=True, default=str)
        out[name] = hashlib.sha256(text.encode()).hexdigest()[:16]
        return out[name]

    for name in stages:
        digest(name, (name,))
    return out


def read_checked(path: Path, check: Callable[[Any], str]) -> tuple[Any, str]:
    """Read the JSON file ``path`` and check its content with ``check``.

    Returns:
        ``(data, problem)``: ``problem`` is ``""`` when the file parses and ``check(data)`` finds
        nothing wrong, else a phrase for an error message (``"cannot be read as JSON (...)"`` or
        what ``check`` says); ``data`` is ``None`` when the file does not parse. Never raises.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return None, f"cannot be read as JSON ({type(exc).__name__}: {exc})"
    return data, check(data)


def _status_problem(data: Any) -> str:
    """What is wrong with the content of a ``status.json`` (``""`` when nothing)."""
    if not isinstance(data, dict):
        return f"holds {type(data).__name__}, not an object"
    if data.get("status", "running") not in STATES:
        return f"has status {data.get('status')!r}, not one of {', '.join(STATES)}"
    stages = data.get("stages", {})
    if not isinstance(stages, dict):
        return f"has 'stages' of type {type(stages).__name__}, not an object"
    for name, stage in stages.items():
        if not isinstance(stage, dict) or not isinstance(stage.get("status"), str):
            return f"has stage '{name}' = {stage!r}, not an object with a status"
    return ""


def _results_problem(data: Any) -> str:
    """What is wrong with the content of a ``results.json`` (``""`` when nothing)."""
    if not isinstance(data, dict):
        return f"holds {type(data).__name__}, not an object"
    stages = data.get("stages", {})
    if not isinstance(stages, dict) or not all(isinstance(v, dict) for v in stages.values()):
        return "has 'stages' that is not an object of objects"
    return ""
