"""Sweeps: the Cartesian product of parameter grids and seeds, each a normal run.

``quadriga sweep NAME --seeds 0:10 --grid stage.srmc.alpha=0.5,1,2`` runs every
combination in its own run directory under the sweep directory, on local worker
processes (default), Ray tasks or submitit jobs (SLURM), then writes one tidy table, a summary with
means, standard errors and 95% intervals (Student t), and a figure.

A run that fails, or whose worker is killed, is recorded as failed and the sweep
goes on; running the same sweep again (same output directory) skips the runs
that finished. The local backend keeps one long-lived process per worker (torch
is imported once per worker, not per run) and replaces a worker that dies, which
:class:`concurrent.futures.ProcessPoolExecutor` cannot do: there one dead worker
breaks the whole pool and every pending run with it.

Modules: :mod:`quadriga.sweep.grid` (seeds, grids and the run plan), :mod:`quadriga.sweep.execute`
(one run), :mod:`quadriga.sweep.backends` (local workers, Ray), :mod:`quadriga.sweep.submitit_backend`
(SLURM or submitit's local executor); :func:`run_sweep` here ties them
together and aggregates through :mod:`quadriga.summary`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from quadriga.errors import ConfigError
from quadriga.fileio import refuse_symlinks
from quadriga.provenance import command_line
from quadriga.rundir import make_dir, refuse_other_files
from quadriga.runs import atomic_write_json, safe_name
from quadriga.sweep.backends import BACKENDS, _run_local, _run_ray, cap_threads, worker_threads
from quadriga.sweep.execute import _status_of, execute_one
from quadriga.sweep.grid import MAX_RUNS, MAX_SEEDS, RunSpec, parse_grid, parse_seeds, plan

__all__ = [
    "MAX_RUNS",
    "MAX_SEEDS",
    "RunSpec",
    "SweepPlan",
    "SweepResult",
    "cap_threads",
    "default_sweep_dir",
    "execute_one",
    "parse_grid",
    "parse_seeds",
    "plan",
    "run_sweep",
    "worker_threads",
]


@attrs.define
class SweepPlan:
    """What a sweep is about to do, for a header printed before the first run ends.

    Attributes:
        dir: the sweep directory.
        total: runs in the sweep (grid points times seeds).
        reused: ids of the runs that already finished in ``dir`` (not run again).
        todo: runs to run now.
        backend: ``"local"``, ``"ray"`` or ``"submitit"``.
        parallel: runs at once: local worker processes, Ray tasks, or submitit jobs.
        executor: where the runs go, in words (``"worker processes"``, ``"a SLURM job array"``,
            ``"submitit's local executor (no srun here, so not a SLURM cluster)"``, ...).
        earlier: ids of the runs that earlier commands finished in ``dir`` outside this command's
            grid and seeds; the table and summary include them.
        resumed: how many of the ``todo`` runs resume an earlier attempt's finished stages.
    """

    dir: Path
    total: int
    reused: list[str]
    todo: int
    backend: str
    parallel: int
    executor: str
    earlier: list[str] = attrs.field(factory=list)
    resumed: int = 0


@attrs.define
class SweepResult:
    """What :func:`run_sweep` returns.

    Attributes:
        dir: the sweep directory.
        runs: one dict per run of this command: ``run_id``, ``seed``, ``params``, ``status``,
            ``error``, ``skipped``.
        rows: the tidy table (one dict per run x stage x metric) of every finished run in ``dir``:
            this command's and those earlier commands finished there
            (:func:`quadriga.summary.sweep_rows`).
        summary: rows grouped by settings with ``mean``, ``stderr``, ``ci_low``, ``ci_high``, ``n``.
        keys: the grid keys of ``rows`` (this command's and any earlier command's).
        table_path: ``results.parquet`` or ``results.csv``.
        figure_path: the PNG, or ``None`` when there was nothing to plot.
    """

    dir: Path
    runs: list[dict[str, Any]]
    rows: list[dict[str, Any]]
    summary: list[dict[str, Any]]
    table_path: Path | None
    figure_path: Path | None
    keys: list[str] = attrs.field(factory=list)


def default_sweep_dir(
    source: str, fixed: Sequence[str], name: str | None = None, content: bytes | None = None
) -> Path:
    """``sweeps/<pipeline name>-<hash of the pipeline source (and its text) and the --set values>``.

    The seeds and the grid are not part of the name, so a sweep that grows (``--seeds 0:3`` after
    ``--seeds 0:2``, another ``--grid`` value) lands in the same directory and skips the runs that
    already finished; another pipeline or other ``--set`` values get another directory.

    Args:
        source: the registered pipeline name or the TOML file's resolved path.
        fixed: the ``--set`` strings applied to every run (their order counts).
        name: the pipeline's ``[pipeline] name`` (the name its standalone runs get under ``runs/``);
            default: the source's file stem.
        content: a TOML file's bytes: an edited file then gets another directory instead of
            mixing runs of its old and new settings in one summary.
    """
    key: list[Any] = [str(source), list(fixed)]
    if content is not None:  # a file: its text too, so an edited pipeline gets a directory of its own
        key.append(hashlib.sha256(content).hexdigest())
    digest = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:8]
    return Path("sweeps") / f"{safe_name(name or Path(str(source)).stem)}-{digest}"


def _legacy_sweep_dir(
    source: str, seeds: Sequence[int], grids: Sequence[tuple[str, list[Any]]], fixed: Sequence[str]
) -> Path:
    """The default directory before growing sweeps shared one: its hash also held the seeds and grid.

    A re-run of exactly such a sweep resumes there rather than starting over.
    """
    digest = hashlib.sha256(
        json.dumps([str(source), list(seeds), [[k, v] for k, v in grids], list(fixed)], default=str).encode()
    ).hexdigest()[:8]
    return Path("sweeps") / f"{safe_name(Path(str(source)).stem)}-{digest}"


def _known_runs(sweep_dir: Path) -> dict[str, dict[str, Any]]:
    """``{run_id: {"seed", "overrides"}}`` of every run an earlier sweep in ``sweep_dir`` planned.

    Read from ``sweep.json``'s ``known_runs`` (every invocation's runs), or its ``runs`` when it was
    written before that key existed; empty when there is no readable ``sweep.json``.
    """
    try:
        earlier = json.loads((sweep_dir / "sweep.json").read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(earlier, dict):
        return {}
    known = earlier.get("known_runs")
    if isinstance(known, dict):
        return {str(k): v for k, v in known.items() if isinstance(v, dict)}
    runs = earlier.get("runs")
    return {
        str(r["run_id"]): {"seed": r.get("seed"), "overrides": list(r.get("overrides", []))}
        for r in (runs if isinstance(runs, list) else [])
        if isinstance(r, dict) and "run_id" in r
    }


def _unclashed(spec: RunSpec, known: Mapping[str, Mapping[str, Any]]) -> RunSpec:
    """``spec`` under its hashed name when an earlier sweep here used its name for other settings.

    Names are made of the grid's shortened keys, so ``--grid stage.mala.step_size=0.1`` and, later
    in the same directory, ``--grid stage.rwm.step_size=0.1`` both give ``seed0-step_size0.1``;
    the second must not skip the first's run as its own. The hashed name holds the overrides.
    """
    earlier = known.get(spec.run_id)
    if earlier is None:
        return spec
    if earlier.get("seed") == spec.seed and list(earlier.get("overrides", [])) == list(spec.overrides):
        return spec
    return attrs.evolve(spec, run_id=spec.hashed_id)


def _check_same_sweep(sweep_dir: Path, source: str, fixed: Sequence[str]) -> None:
    """Refuse to reuse a sweep directory made from another pipeline or other ``--set`` values.

    Its runs are named by their grid settings and seed alone, so a run there with the same name
    may hold other fixed settings.

    Raises:
        ConfigError: ``sweep.json`` names another source or other fixed overrides (key ``--out``).
    """
    path = sweep_dir / "sweep.json"
    try:
        earlier = json.loads(path.read_text())
    except (OSError, ValueError):
        return
    if not isinstance(earlier, dict):
        return
    for what, old, new in (
        ("pipeline", earlier.get("source"), source),
        ("--set", earlier.get("fixed"), list(fixed)),
    ):
        if old is not None and old != new:
            raise ConfigError(
                f"{sweep_dir} holds a sweep with {what} {old!r}, not {new!r}; its runs would be "
                "skipped as if they were this sweep's. Use another --out (or remove that directory).",
                key="--out",
            )


def _check_finished_runs_match(
    sweep_dir: Path, specs: Sequence[RunSpec], expected: Mapping[tuple[str, ...], str]
) -> None:
    """Refuse to count finished runs made with settings the pipeline no longer has.

    A finished run is skipped as done; if the pipeline file was edited since it ran, its numbers
    belong to the old settings and the summary would mix the two. Its saved ``pipeline.toml``
    (:func:`quadriga.summary.config_digest`) must match what this sweep would run.

    Raises:
        ConfigError: naming the stale runs and the fix (key ``--out``).
    """
    from quadriga.summary import config_digest

    stale = []
    for spec in specs:
        run_dir = sweep_dir / "runs" / spec.run_id
        if _status_of(run_dir) == "finished":
            digest = config_digest(run_dir)
            if digest is not None and digest != expected.get(spec.overrides, digest):
                stale.append(spec.run_id)
    if stale:
        shown = ", ".join(stale[:3]) + (f" and {len(stale) - 3} more" if len(stale) > 3 else "")
        raise ConfigError(
            f"{sweep_dir} holds finished runs made with other settings than this pipeline has now "
            f"(it was edited since they ran): {shown}. Counting them would mix old and new numbers in "
            "one summary. Pass another --out for the new settings, or remove those runs to run them again.",
            key="--out",
        )


def _earlier_name(runs_root: Path, spec: RunSpec) -> RunSpec:
    """``spec`` under its hashed name when a sweep from before settings-named runs left it there.

    Re-running such a sweep then skips (or resumes) its runs instead of running them again.
    """
    if spec.run_id != spec.hashed_id and not (runs_root / spec.run_id).exists():
        if (runs_root / spec.hashed_id).is_dir():
            return attrs.evolve(spec, run_id=spec.hashed_id)
    return spec


def _plan_of(
    sweep_dir: Path,
    specs: Sequence[RunSpec],
    todo: int,
    reused: list[str],
    backend: str,
    workers: int,
    max_jobs: int | None,
    cluster: str | None,
) -> SweepPlan:
    """The :class:`SweepPlan` of a sweep whose runs and backend are settled."""
    if backend == "local":
        parallel, executor = min(workers, max(todo, 1)), "worker processes"
    elif backend == "ray":
        parallel, executor = workers, "Ray tasks"
    elif cluster == "slurm":
        parallel, executor = max_jobs or 256, "a SLURM job array (sbatch)"
    else:
        parallel = max_jobs or os.cpu_count() or 1
        executor = "submitit's local executor (no srun here, so not a SLURM cluster)"
    return SweepPlan(sweep_dir, len(specs), reused, todo, backend, parallel, executor)


def run_sweep(
    source: str | Path,
    *,
    seeds: Iterable[int],
    grids: Sequence[tuple[str, list[Any]]] = (),
    fixed: Sequence[str] = (),
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    out: str | Path | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_done: Callable[[dict[str, Any]], None] | None = None,
    on_plan: Callable[[SweepPlan], None] | None = None,
    max_jobs: int | None = None,
    slurm: Sequence[str] | Mapping[str, Any] = (),
    cluster: str | None = None,
) -> SweepResult:
    """Run a sweep and aggregate its results.

    Args:
        source: a registered pipeline name or a TOML path.
        seeds: root seeds.
        grids: ``[(override key, [values])]``; every combination is run.
        fixed: ``--set`` overrides applied to every run.
        backend: ``"local"`` (worker processes), ``"ray"`` or ``"submitit"`` (SLURM jobs).
        workers: parallel runs (default: the number of CPU cores).
        address: a Ray cluster address (ray backend only; default: start a local Ray instance).
        out: the sweep directory (default :func:`default_sweep_dir`, so a re-run resumes).
        on_start: called once with ``(runs to do, runs already finished)``.
        on_done: called with each run's outcome dict.
        on_plan: called once with the :class:`SweepPlan`, before any run starts (a header).
        max_jobs: submitit backend: at most this many jobs at once (default: the CPU cores with
            the local executor, 256 on SLURM).
        slurm: submitit backend: sbatch settings, ``["partition=cpu", "time=120"]`` or a dict
            (:func:`quadriga.sweep.submitit_backend.parse_slurm`).
        cluster: submitit backend: ``"slurm"``, ``"local"`` (submitit's local executor), or
            ``None`` for SLURM where ``srun`` is found, else local.

    Returns:
        :class:`SweepResult`.

    Raises:
        ConfigError: an invalid pipeline or grid (checked on the first grid point before anything runs),
            an unknown backend, submitit options with another backend, submitit missing.
    """
    seeds = list(seeds)
    slurm_settings = _check_options(seeds, grids, backend, workers, max_jobs, slurm)
    specs = plan(seeds, grids, fixed)
    source = str(Path(source).resolve()) if Path(str(source)).is_file() else str(source)
    expected, names = _checked_grid_points(source, specs)
    sweep_dir = Path(out) if out is not None else _default_dir_of(source, seeds, grids, fixed, names)
    specs = _open_sweep_dir(sweep_dir, source, seeds, grids, fixed, backend, specs)
    _check_finished_runs_match(sweep_dir, specs, expected)
    tasks, outcomes = _pending_tasks(sweep_dir, source, specs)
    workers = workers or os.cpu_count() or 1
    if backend == "submitit" and cluster is None:  # decided once, here, so the header can say it
        cluster = "slurm" if shutil.which("srun") else "local"
    if on_plan:
        reused = list(outcomes)
        sweep_plan = _plan_of(sweep_dir, specs, len(tasks), reused, backend, workers, max_jobs, cluster)
        sweep_plan.earlier = _finished_earlier(sweep_dir, specs)
        sweep_plan.resumed = sum(_resumes_stages(Path(run_dir)) for _, _, run_dir in tasks)
        on_plan(sweep_plan)
    if on_start:
        on_start(len(tasks), len(outcomes))

    def done(outcome: dict[str, Any]) -> None:
        outcomes[outcome["run_id"]] = outcome
        if on_done:
            on_done(outcome)

    if tasks:
        _dispatch(tasks, sweep_dir, done, backend, workers, address, max_jobs, slurm_settings, cluster)
    return _summarise(sweep_dir, _run_records(specs, outcomes))


def _finished_earlier(sweep_dir: Path, specs: Sequence[RunSpec]) -> list[str]:
    """Ids of the runs earlier commands finished in ``sweep_dir`` that are not among ``specs``."""
    ours = {s.run_id for s in specs}
    return [
        run_id
        for run_id in _known_runs(sweep_dir)
        if run_id not in ours and _status_of(sweep_dir / "runs" / run_id) == "finished"
    ]


def _resumes_stages(run_dir: Path) -> bool:
    """Whether running ``run_dir`` resumes an earlier attempt that finished at least one stage."""
    from quadriga.rundir import RunDir

    rd = RunDir(run_dir)
    if not rd.resumable():
        return False
    return any(s.status == "finished" for s in rd.read_status().stages.values())


def _summarise(sweep_dir: Path, runs: list[dict[str, Any]]) -> SweepResult:
    """Write ``runs.json``, then the tidy table, the summary and its figure (:mod:`quadriga.summary`).

    The table and summary cover every finished run in ``sweep_dir``, earlier commands' included
    (:func:`quadriga.summary.sweep_rows`); ``runs`` are this command's.
    """
    from quadriga.summary import aggregate, sweep_rows, true_values, write_outputs

    atomic_write_json(sweep_dir / "runs.json", runs)
    rows, keys = sweep_rows(sweep_dir)
    summary = aggregate(rows, keys)
    finished = [sweep_dir / "runs" / r for r in dict.fromkeys(str(row["run_id"]) for row in rows)]
    table_path, figure_path = write_outputs(sweep_dir, rows, summary, keys, true_values=true_values(finished))
    return SweepResult(sweep_dir, runs, rows, summary, table_path, figure_path, keys)


def _check_options(
    seeds: Sequence[int],
    grids: Sequence[tuple[str, list[Any]]],
    backend: str,
    workers: int | None,
    max_jobs: int | None,
    slurm: Sequence[str] | Mapping[str, Any],
) -> dict[str, Any]:
    """Check the backend and its options, the worker count and the sweep's size; the parsed ``--slurm``.

    Raises:
        ConfigError: an unknown backend (key ``--backend``), submitit options with another backend
            (:func:`quadriga.sweep.submitit_backend.check_options`), a worker count that is not an
            integer >= 1 (``--workers``), more than :data:`MAX_RUNS` runs (``--grid``).
    """
    from quadriga.sweep.submitit_backend import check_options

    if backend not in BACKENDS:
        raise ConfigError(f"unknown backend '{backend}'; use {', '.join(BACKENDS)}.", key="--backend")
    slurm_settings = check_options(backend, workers, max_jobs, slurm)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ConfigError(
            f"the number of parallel runs must be an integer >= 1, got {workers!r} (omit it for one per "
            "CPU core).",
            key="--workers",
        )
    total = len(seeds)
    for _, values in grids:
        total *= len(values)
    if total > MAX_RUNS:
        raise ConfigError(
            f"the grid times the seeds makes {total} runs; a sweep holds at most {MAX_RUNS}. "
            "Use fewer values or seeds.",
            key="--grid",
        )
    return slurm_settings


def _checked_grid_points(
    source: str, specs: Sequence[RunSpec]
) -> tuple[dict[tuple[str, ...], str], set[str]]:
    """Check the pipeline at every grid point before anything runs.

    Returns:
        ``(overrides -> config digest a run of them must have, the pipeline names seen)``.

    Raises:
        ConfigError: the pipeline is invalid at some grid point (from :func:`quadriga.api.check`).
    """
    from quadriga.api import check
    from quadriga.summary import resolved_digest

    expected: dict[tuple[str, ...], str] = {}
    names = set()
    for spec in {s.overrides: s for s in specs}.values():
        checked = check(source, overrides=spec.overrides, seed=spec.seed)
        names.add(checked.name)
        expected[spec.overrides] = resolved_digest(checked.resolved())
    return expected, names


def _default_dir_of(
    source: str,
    seeds: Sequence[int],
    grids: Sequence[tuple[str, list[Any]]],
    fixed: Sequence[str],
    names: set[str],
) -> Path:
    """The sweep directory when ``--out`` is not given: :func:`default_sweep_dir`, or an earlier one.

    A sweep made before the pipeline's text was hashed into the name (or before settings-named
    directories) is reused when the new directory does not exist yet; its runs are checked later.
    """
    name = next(iter(names)) if len(names) == 1 else None
    content = Path(source).read_bytes() if Path(source).is_file() else None
    sweep_dir = default_sweep_dir(source, fixed, name, content)
    for earlier in (
        default_sweep_dir(source, fixed, name),
        _legacy_sweep_dir(source, seeds, grids, fixed),
    ):
        if not sweep_dir.exists() and (earlier / "sweep.json").is_file():
            sweep_dir = earlier  # made before the text was hashed: its runs are checked below
    return sweep_dir


def _open_sweep_dir(
    sweep_dir: Path,
    source: str,
    seeds: Sequence[int],
    grids: Sequence[tuple[str, list[Any]]],
    fixed: Sequence[str],
    backend: str,
    specs: Sequence[RunSpec],
) -> list[RunSpec]:
    """Create (or reopen) ``sweep_dir`` and write its ``sweep.json``; returns the specs under their run names.

    Run names that clash with another setting's run, or that an older sweep left hashed, are
    settled here (:func:`_unclashed`, :func:`_earlier_name`).

    Raises:
        ConfigError: the directory is a symlink, cannot be made, holds another sweep, or holds
            files and is not a sweep's directory (no ``sweep.json``).
    """
    refuse_symlinks(sweep_dir)
    refuse_symlinks(sweep_dir / "runs", sweep_dir)  # the more specific refusal comes first
    if not (sweep_dir / "sweep.json").is_file():  # a sweep's own directory is resumed; others refused
        refuse_other_files(
            sweep_dir, "a sweep to continue", "a sweep", ", or the --out of an earlier sweep to continue it"
        )
    make_dir(sweep_dir, "--out")
    _check_same_sweep(sweep_dir, source, fixed)
    known = _known_runs(sweep_dir)
    named = [_earlier_name(sweep_dir / "runs", _unclashed(s, known)) for s in specs]
    for s in named:
        known[s.run_id] = {"seed": s.seed, "overrides": list(s.overrides), "params": s.params}
    atomic_write_json(
        sweep_dir / "sweep.json",
        {
            "source": source,
            "seeds": list(seeds),
            "grid": {k: v for k, v in grids},
            "fixed": list(fixed),
            "backend": backend,
            "runs": [attrs.asdict(s) for s in named],
            "known_runs": known,
            "command": command_line(),
        },
    )
    return named


def _pending_tasks(
    sweep_dir: Path, source: str, specs: Sequence[RunSpec]
) -> tuple[list[tuple[str, RunSpec, str]], dict[str, dict[str, Any]]]:
    """Split the runs into those to do and those finished earlier (skipped).

    Returns:
        ``(tasks, outcomes)``: a task is ``(source, spec, run dir)``; ``outcomes`` holds a
        ``skipped`` outcome dict per finished run, keyed by run id.
    """
    outcomes: dict[str, dict[str, Any]] = {}
    tasks = []
    for spec in specs:
        run_dir = sweep_dir / "runs" / spec.run_id
        refuse_symlinks(run_dir, sweep_dir)
        if _status_of(run_dir) == "finished":
            outcomes[spec.run_id] = {
                "run_id": spec.run_id,
                "status": "finished",
                "error": None,
                "skipped": True,
            }
            continue
        tasks.append((source, spec, str(run_dir)))
    return tasks, outcomes


def _dispatch(
    tasks: list[tuple[str, RunSpec, str]],
    sweep_dir: Path,
    done: Callable[[dict[str, Any]], None],
    backend: str,
    workers: int,
    address: str | None,
    max_jobs: int | None,
    slurm_settings: dict[str, Any],
    cluster: str | None,
) -> None:
    """Run ``tasks`` on ``backend`` (local workers, submitit jobs, Ray tasks); ``done`` gets each outcome."""
    if backend == "local":
        _run_local(tasks, workers, done)
    elif backend == "submitit":
        from quadriga.sweep.submitit_backend import run_submitit

        run_submitit(tasks, sweep_dir, done, max_jobs=max_jobs, slurm=slurm_settings, cluster=cluster)
    else:
        _run_ray(tasks, workers, address, done)


def _run_records(specs: Sequence[RunSpec], outcomes: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One ``runs.json`` record per run: id, seed, parameters, status, error and whether it was skipped.

    A run with no outcome (its backend never reported it) is recorded as failed, ``"not run"``.
    """
    runs = []
    for spec in specs:
        o = outcomes.get(spec.run_id, {"status": "failed", "error": "not run"})
        runs.append(
            {
                "run_id": spec.run_id,
                "seed": spec.seed,
                "params": spec.params,
                "status": o["status"],
                "error": o.get("error"),
                "skipped": bool(o.get("skipped")),
            }
        )
    return runs
