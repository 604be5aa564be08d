"""Tidy tables, summaries and figures of many runs (used by ``sweep`` and ``compare``).

The tidy table has one row per run x stage x metric, with the swept parameters, the seed
and ``config`` (a digest of the run's resolved configuration without its root seed) as
columns. The summary groups rows by settings (swept parameters, stage, metric) and gives
the mean over seeds, its standard error and a 95% interval with its method and ``n``
(Student t interval of the mean through :func:`quadriga.stats.interval`, calibrated at the
few seeds a sweep has, where a BCa bootstrap undercovers: docs/concepts/intervals.md). Runs
given one by one (``quadriga compare runs/a/*``) are grouped by ``config``: runs that differ
only in the seed are one source with ``n`` = the number of runs.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from quadriga.runs import atomic_path, atomic_write_text

__all__ = [
    "aggregate",
    "bootstrap_ci",
    "collect_rows",
    "config_digest",
    "constant_zero",
    "drop_repeated_seeds",
    "headline_metrics",
    "load_rows",
    "metric_doc",
    "metric_label",
    "metric_title",
    "resolved_digest",
    "rows_from_run",
    "summary_figure",
    "sweep_grid",
    "sweep_keys",
    "sweep_rows",
    "sweep_runs",
    "sweep_seeds",
    "true_values",
    "write_outputs",
]


def config_digest(run_dir: Path) -> str | None:
    """Digest of a run's resolved configuration (``pipeline.toml``) without the root seed, or ``None``.

    Two runs with the same digest differ at most in their seed (and description).
    """
    from quadriga.errors import ConfigError
    from quadriga.rundir import RunDir

    rd = RunDir(Path(run_dir))
    if rd.saved_pipeline() is None:
        return None
    try:
        data = rd.read_pipeline()
    except (OSError, ConfigError):
        return None
    return resolved_digest(data)


def resolved_digest(resolved: Mapping[str, Any]) -> str:
    """:func:`config_digest` of a resolved pipeline dict (``Pipeline.resolved()``, or ``pipeline.toml``)."""
    data = dict(resolved)
    head = dict(data.get("pipeline", {}))
    head.pop("seed", None)
    head.pop("description", None)
    data["pipeline"] = head
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:10]
    if digest not in _SETTINGS:
        _SETTINGS[digest] = dict(_flat(data))
    return digest


#: digest -> the flattened settings it was computed from (``"mala.step_size": "0.5"``), so that
#: runs of one pipeline with several configurations are labelled by what differs
_SETTINGS: dict[str, dict[str, str]] = {}


def _flat(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    """``(dotted key, value as JSON)`` of every leaf; ``stage.`` and ``task.`` are left off the keys."""
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _flat(value, "" if name in ("stage", "task") else f"{name}.")
        else:
            yield name, json.dumps(value, sort_keys=True, default=str)


#: the numbers of a Samples stage's ``info`` kept in a sweep's tidy table
#: (``acceptance_rate``: fraction of accepted transitions in [0, 1]; ``rejected_nonfinite``: count)
SAMPLER_DIAGNOSTICS = ("acceptance_rate", "rejected_nonfinite")


#: what each sampler diagnostic and estimate row means (the glossary of ``quadriga report``)
DIAGNOSTIC_DOCS = {
    "acceptance_rate": "share of proposed moves the sampler accepted (0 to 1)",
    "rejected_nonfinite": "proposals rejected because the log density was not finite (count)",
    "estimate": "the estimator's value (units of the estimated quantity)",
    "estimate_stderr": "the standard error the estimator reports for its value",
}

#: words for abbreviations in metric names (figure titles, report headings)
_WORDS = {
    "tv": "total variation",
    "mse": "mean squared error",
    "rmse": "root mean squared error",
    "mae": "mean absolute error",
    "ess": "effective sample size",
    "rhat": "R-hat",
    "mmd": "MMD",
    "kl": "KL divergence",
    "nll": "negative log-likelihood",
    "auc": "AUC",
    "stderr": "standard error",
}


def metric_title(metric: str) -> str:
    """A metric name in words: ``"tv"`` -> ``"total variation"``, ``"fraction_0"`` -> ``"fraction 0"``.

    Underscores become spaces and the common abbreviations of :data:`_WORDS` are spelled out.
    """
    words = [_WORDS.get(w.lower(), w) for w in str(metric).split("_") if w]
    text = " ".join(words) or str(metric)
    return text[0].upper() + text[1:]


def metric_doc(metric: str, docs: Mapping[str, str]) -> str | None:
    """The entry of a component's ``metrics_doc`` for ``metric``; ``<k>`` in a key matches any suffix.

    ``metric_doc("fraction_2", {"fraction_<k>": "share of samples in mode k"})`` gives the entry.
    """
    if metric in docs:
        return str(docs[metric])
    for key, text in docs.items():
        head, sep, _ = str(key).partition("<")
        if sep and metric.startswith(head) and len(metric) > len(head):
            return str(text)
    return None


def constant_zero(summary: Sequence[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """The ``(stage, metric)`` pairs of :data:`SAMPLER_DIAGNOSTICS` that are 0 in every run.

    A diagnostic such as ``rejected_nonfinite`` (a count, >= 0) that no run ever raised carries
    no information; the printed summary and ``summary.png`` leave it out (``summary.csv`` keeps it).

    Args:
        summary: rows of :func:`aggregate` (``stage``, ``metric``, ``mean``, ``stderr``).
    """
    zero: dict[tuple[str, str], bool] = {}
    for e in summary:
        if e["metric"] in SAMPLER_DIAGNOSTICS:
            key = (str(e["stage"]), str(e["metric"]))
            zero[key] = zero.get(key, True) and e["mean"] == 0 and not (e.get("stderr") or 0) > 0
    return {k for k, v in zero.items() if v}


def _sweep_row(kind: str, metric: str) -> bool:
    """Which numbers a sweep's table keeps: every evaluator value and estimate, a sampler's diagnostics."""
    if kind == "Samples":
        return metric in SAMPLER_DIAGNOSTICS
    return kind in ("Metrics", "Estimate")


def rows_from_run(run_dir: Path, base: dict[str, Any]) -> list[dict[str, Any]]:
    """Tidy rows from one run's ``results.json``, in the schema of :mod:`quadriga.rundir.tidy`.

    Kept: every evaluator value, every scalar estimate (``estimate``, ``estimate_stderr``) and
    the :data:`SAMPLER_DIAGNOSTICS` of each Samples stage (``acceptance_rate``, ...); each row has
    ``stage, component, type, subject, metric, value`` (an evaluator's ``"mala/tv"`` is subject
    ``mala``, metric ``tv``; other numbers have the stage as subject).

    Each row is tagged with ``base``, the run's ``pipeline`` name and its ``config`` digest
    (:func:`config_digest`).

    Raises:
        ConfigError: a damaged ``results.json`` (naming it).
    """
    from quadriga.rundir.loaded import is_run, read_run_file
    from quadriga.rundir.tidy import tidy_rows

    if not is_run(run_dir):
        return []
    results = read_run_file(Path(run_dir), "results.json", key="path")
    base = {"pipeline": results.get("pipeline"), "config": config_digest(run_dir), **base}
    return tidy_rows(results, base, keep=_sweep_row)


def metric_label(row: Mapping[str, Any]) -> str:
    """A row's metric as the sweep summary names it: ``"<subject>/<metric>"`` or ``"<metric>"``.

    The subject is left out when it is the row's own stage (and a row without one keeps its metric).
    """
    subject = row.get("subject")
    if subject is None or subject == row.get("stage"):
        return str(row["metric"])
    return f"{subject}/{row['metric']}"


def metric_parts(entry: Mapping[str, Any]) -> tuple[str, str]:
    """A summary entry's ``(subject, metric)``; the subject is ``""`` for the stage's own numbers.

    Read from the entry's ``subject`` and ``metric_name`` (:func:`aggregate` writes them), so a
    metric whose name holds a ``/`` stays whole; an entry without them (a ``summary.csv`` read back)
    is split at the last ``/`` of its ``metric`` label.
    """
    if "metric_name" in entry:
        return str(entry.get("subject") or ""), str(entry["metric_name"])
    subject, _, metric = str(entry["metric"]).rpartition("/")
    return subject, metric


def sweep_runs(sweep_dir: Path) -> list[dict[str, Any]]:
    """Every run recorded in a sweep directory, each with the status its own run directory records now.

    A sweep directory grows: each ``quadriga sweep`` command into it adds its runs, and all of them
    share the pipeline and the ``--set`` values (the directory is named by those). So the runs are
    those the last command planned (``sweep.json``'s ``runs``), then every run an earlier command
    planned (its ``known_runs``) whose run directory exists, then any only ``runs.json`` lists
    (``runs.json`` is written when a sweep ends: a sweep killed before then leaves none, or the one
    of an earlier command). Each status is read from the run's ``status.json`` through
    :meth:`quadriga.rundir.RunDir.read_status` (a ``running`` run whose process is gone is
    ``interrupted``); ``runs.json`` gives the error and the status of a run without
    ``status.json``, else ``"not run"``.

    The grid keys may differ between commands (``--grid stage.mala.step_size=...``, later
    ``--grid stage.mala.num_samples=...``). A run without a key that another run has gets the
    value its saved configuration (``pipeline.toml``) holds there, the pipeline's value for it, so
    it is grouped with the runs that set that value explicitly; ``None`` when it has no saved
    configuration or the key is not in it.

    Returns:
        ``[{"run_id", "seed", "params", "status", "error", "skipped"}]``: the last command's runs in
        plan order, then the earlier ones; every ``params`` has every key of :func:`sweep_keys`.

    Raises:
        ConfigError: ``runs/`` or a run directory in it is a symbolic link (it is not followed).
    """
    from quadriga.runs import RunDir

    sweep_dir = Path(sweep_dir)

    def read(name: str) -> Any:
        try:
            return json.loads((sweep_dir / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def listed(data: Any) -> list[dict[str, Any]]:
        data = data.get("runs", []) if isinstance(data, dict) else data
        data = data if isinstance(data, list) else []
        return [r for r in data if isinstance(r, dict) and isinstance(r.get("run_id"), str)]

    sweep = read("sweep.json")
    recorded = {r["run_id"]: r for r in listed(read("runs.json"))}
    planned = {r["run_id"]: r for r in listed(sweep)}
    known = sweep.get("known_runs") if isinstance(sweep, dict) else None
    fixed = sweep.get("fixed") if isinstance(sweep, dict) else None
    earlier = {
        str(run_id): _known_entry(entry, fixed if isinstance(fixed, list) else [])
        for run_id, entry in (known.items() if isinstance(known, dict) else ())
        if isinstance(entry, dict) and run_id not in planned and (sweep_dir / "runs" / str(run_id)).is_dir()
    }
    out = []
    order = [*planned, *(r for r in earlier if r not in recorded), *(r for r in recorded if r not in planned)]
    _refuse_linked_runs(sweep_dir, order)
    for run_id in order:
        entry = {**earlier.get(run_id, {}), **planned.get(run_id, {}), **recorded.get(run_id, {})}
        run_dir = sweep_dir / "runs" / run_id
        status = entry.get("status", "not run")
        error = entry.get("error")
        if (run_dir / "status.json").is_file():
            record = RunDir(run_dir).read_status()
            if record.status != status:
                status, error = record.status, record.error
        out.append(
            {
                "run_id": run_id,
                "seed": entry.get("seed"),
                "params": dict(entry.get("params") or {}),
                "status": status,
                "error": error,
                "skipped": bool(entry.get("skipped")),
            }
        )
    keys = sweep_keys(out)
    for run in out:
        missing = [k for k in keys if k not in run["params"]]
        if missing:
            saved = _saved_values(sweep_dir / "runs" / run["run_id"], missing)
            run["params"] = {k: run["params"].get(k, saved.get(k)) for k in keys}
    return out


def _refuse_linked_runs(sweep_dir: Path, run_ids: Sequence[str]) -> None:
    """Refuse a sweep whose ``runs/`` folder, or one of the run directories ``run_ids`` in it, is a link.

    A run directory of a sweep is the sweep's own; one that is a symbolic link to elsewhere would
    bring another directory's results into the sweep's tables, so it is never followed.

    Raises:
        ConfigError: naming the link and where it points, with the fix.
    """
    from quadriga.errors import ConfigError

    runs = Path(sweep_dir) / "runs"
    for path in (runs, *(runs / str(r) for r in run_ids)):
        if os.path.islink(path):
            raise ConfigError(
                f"'{path}' is a symbolic link (to '{os.readlink(path)}'); a sweep's run directories "
                "are its own and are not read through links. Replace the link with the run directory "
                "itself (copy it there) or remove it.",
                file=str(sweep_dir),
            )


def _known_entry(entry: Mapping[str, Any], fixed: Sequence[Any]) -> dict[str, Any]:
    """A ``known_runs`` entry as a run record: its seed and its grid values (``params``).

    Entries written before they held ``params`` have them from their overrides, less the sweep's
    fixed ``--set`` ones.
    """
    params = entry.get("params")
    if not isinstance(params, dict):
        from quadriga.errors import ConfigError
        from quadriga.pipeline_source import parse_override

        params = {}
        for text in entry.get("overrides") or []:
            if text in fixed or not isinstance(text, str):
                continue
            try:
                path, value = parse_override(text)
            except ConfigError:
                continue
            params[".".join(path)] = value
    return {"seed": entry.get("seed"), "params": params}


def _saved_values(run_dir: Path, keys: Sequence[str]) -> dict[str, Any]:
    """The values of the override ``keys`` in a run's saved ``pipeline.toml``; keys not found are left out."""
    from quadriga.errors import ConfigError
    from quadriga.rundir import RunDir

    rd = RunDir(Path(run_dir))
    if rd.saved_pipeline() is None:
        return {}
    try:
        data = rd.read_pipeline()
    except (OSError, ConfigError):
        return {}
    out = {}
    for key in keys:
        found, value = _lookup(data, key.split("."))
        if found:
            out[key] = value
    return out


def _lookup(table: Any, parts: Sequence[str]) -> tuple[bool, Any]:
    """``(True, value)`` at the dotted ``parts`` of nested tables, else ``(False, None)``.

    A table name may hold dots (``[stage."a.b"]``): every split of ``parts`` into names is tried.
    """
    if not parts:
        return True, table
    if isinstance(table, dict):
        for n in range(1, len(parts) + 1):
            name = ".".join(parts[:n])
            if name in table:
                found, value = _lookup(table[name], parts[n:])
                if found:
                    return True, value
    return False, None


def sweep_keys(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The grid keys of a sweep directory's runs (:func:`sweep_runs`): every key any run set, in order."""
    keys: dict[str, None] = {}
    for run in runs:
        keys.update(dict.fromkeys(run.get("params") or {}))
    return list(keys)


def sweep_grid(runs: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """``{grid key: [values]}`` over a sweep directory's runs: the union of every command's grid.

    Values are listed once each, first seen first (numbers in increasing order); a value filled in
    from a run's saved configuration (:func:`sweep_runs`) counts too, ``None`` (not known) does not.
    """
    grid: dict[str, dict[str, Any]] = {k: {} for k in sweep_keys(runs)}
    for run in runs:
        for key, value in (run.get("params") or {}).items():
            if value is not None:
                grid[key].setdefault(json.dumps(value, sort_keys=True, default=str), value)
    out = {k: list(v.values()) for k, v in grid.items()}
    for key, values in out.items():  # numbers in order (commands may have added them in any order)
        if all(type(v) in (int, float) for v in values):
            out[key] = sorted(values)
    return out


def sweep_seeds(runs: Sequence[Mapping[str, Any]]) -> list[int]:
    """The seeds of a sweep directory's runs (:func:`sweep_runs`), each once, in order."""
    return sorted({int(r["seed"]) for r in runs if isinstance(r.get("seed"), int)})


def sweep_rows(sweep_dir: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The tidy rows of every finished run of a sweep directory and its grid keys.

    Every run the directory records (:func:`sweep_runs`: every command's, not only the last
    one's), with one column per key of :func:`sweep_keys`. A run repeated with the same
    configuration and seed (two commands whose different grid keys met at the same settings) is
    counted once (:func:`drop_repeated_seeds`).
    """
    runs = sweep_runs(sweep_dir)
    rows, _ = drop_repeated_seeds(collect_rows(Path(sweep_dir) / "runs", runs))
    return rows, sweep_keys(runs)


def collect_rows(runs_root: Path, runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tidy rows of every finished run of a sweep (``runs`` as written to ``runs.json``)."""
    rows = []
    for run in runs:
        if run["status"] != "finished":
            continue
        base = {"run_id": run["run_id"], "seed": run["seed"], **run["params"]}
        rows += rows_from_run(Path(runs_root) / run["run_id"], base)
    return rows


def bootstrap_ci(
    values: Sequence[float], *, level: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """BCa bootstrap interval of the mean (:func:`quadriga.stats.bootstrap_ci`).

    Args:
        values: ``n`` numbers.
        level: coverage in (0, 1).
        resamples: bootstrap resamples.
        seed: numpy seed (the interval is reproducible).

    Returns:
        ``(low, high)``; both equal the value when ``n == 1`` or the values are equal.
        Source: Efron & Tibshirani 1993, ch. 14.
    """
    from quadriga.stats import bootstrap_ci as stats_ci

    ci = stats_ci(list(values), "mean", method="BCa", level=level, resamples=resamples, rng=seed)
    return ci.low, ci.high


def _interval(values: Sequence[float], *, level: float = 0.95) -> Any:
    """The summary's interval of the mean: :func:`quadriga.stats.interval` (Student t)."""
    from quadriga.stats import Interval, interval

    if len(values) == 0:
        return Interval(math.nan, math.nan, math.nan, level, "none (n=0)", 0)
    return interval(list(values), "mean", level=level)


def _config_labels(rows: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """A readable label per ``config`` digest: the pipeline's name, with the digest only where needed.

    A pipeline run with one configuration is labelled by its name alone; a pipeline seen with
    several configurations (a ``--set`` changed something) gets the settings that differ,
    ``"<name> (mala.step_size=0.5)"``, or ``"<name> (config <digest>)"`` where they are unknown.
    """
    configs: dict[str, dict[str, None]] = {}
    for row in rows:
        configs.setdefault(str(row.get("pipeline")), {})[row["config"]] = None
    labels = {}
    for name, digests in configs.items():
        for digest, differs in _differences(list(digests)).items():
            labels[digest] = name if len(digests) == 1 else f"{name} ({differs or 'config ' + digest})"
    return labels


def _differences(digests: Sequence[str], most: int = 3) -> dict[str, str]:
    """Per digest, the settings in which its configuration differs from the others'.

    ``"mala.step_size=0.5"`` (at most ``most`` keys, then ``", +2 more"``); ``""`` where the
    settings are unknown (a digest not computed in this process) or nothing differs.
    """
    known = [_SETTINGS.get(d) for d in digests]
    if len(digests) < 2 or any(k is None for k in known):
        return dict.fromkeys(digests, "")
    keys = sorted({k for s in known if s for k in s})
    varied = [k for k in keys if len({(s or {}).get(k) for s in known}) > 1]
    out = {}
    for digest, settings in zip(digests, known, strict=True):
        assert settings is not None
        shown = [f"{k}={settings.get(k, '(unset)')}" for k in varied[:most]]
        more = f", +{len(varied) - most} more" if len(varied) > most else ""
        out[digest] = ", ".join(shown) + more
    return out


def drop_repeated_seeds(rows: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Keep one run per (configuration, seed): a seed run twice is one replicate, not two.

    Rows of ``compare``'s several directories (a standalone run and a sweep's run of the same
    pipeline, seed and settings, say) are identical replicates; counting both would double ``n``
    and shrink the interval. Rows need ``config`` (:func:`config_digest`), ``seed`` and ``run_id``
    (or ``source``); rows without a digest or a seed are all kept.

    Returns:
        the rows kept, and ``(dropped run, kept run)`` for every run left out (in input order).
    """
    first: dict[tuple, Any] = {}
    kept, dropped = [], []
    for row in rows:
        source, run_id = row.get("source"), row.get("run_id")
        run = source if run_id in (None, source) else run_id if source is None else f"{source}/{run_id}"
        if row.get("config") is None or row.get("seed") is None:
            kept.append(row)
            continue
        key = (row["config"], row["seed"])
        owner = first.setdefault(key, run)
        if owner == run:
            kept.append(row)
        elif (str(run), str(owner)) not in dropped:
            dropped.append((str(run), str(owner)))
    return kept, dropped


def aggregate(rows: Sequence[dict[str, Any]], keys: Sequence[str]) -> list[dict[str, Any]]:
    """Group rows by ``keys`` + stage + metric (:func:`metric_label`: subject and metric).

    Each group gets ``n``, ``mean``, ``stderr``, ``ci_low``, ``ci_high`` and ``ci_method``, and
    its ``metric`` label split unambiguously into ``subject`` (``""`` for a number of the stage
    itself) and ``metric_name`` (:func:`metric_parts`: a metric named ``flowrl/mean_reward`` is
    not read as subject ``flowrl``);
    with one value (``n = 1``) the standard error and the interval ends are NaN (``null`` in
    ``--json`` output, ``-`` in tables), not 0.

    When ``keys`` holds ``"source"`` (one source per directory given to ``compare``) and every
    row has a ``config`` digest, rows are grouped by ``config`` instead: runs that differ only
    in the seed form one group, labelled by the pipeline's name (``"<pipeline> (config <digest>)"``
    where one pipeline ran with several configurations) with ``runs`` = the number of run
    directories pooled. Pass the rows through :func:`drop_repeated_seeds` first so a seed is
    counted once.
    """
    by_config = "source" in keys and bool(rows) and all(r.get("config") for r in rows)
    names = _config_labels(rows) if by_config else {}
    groups: dict[tuple, list[float]] = {}
    parts: dict[tuple, tuple[str, str]] = {}
    sources: dict[tuple, set] = {}
    for row in rows:
        labels = [
            json.dumps(names[row["config"]] if k == "source" and by_config else row.get(k)) for k in keys
        ]
        key = (*labels, row["stage"], metric_label(row))
        groups.setdefault(key, []).append(row["value"])
        own = row.get("subject") is None or row.get("subject") == row["stage"]
        parts.setdefault(key, ("" if own else str(row["subject"]), str(row["metric"])))
        sources.setdefault(key, set()).add(row.get("source", row.get("run_id")))
    out = []
    for key, values in groups.items():
        n = len(values)
        mean = sum(values) / n
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
        ci = _interval(values)
        entry = {k: json.loads(v) for k, v in zip(keys, key[: len(keys)], strict=True)}
        entry.update(
            stage=key[-2],
            metric=key[-1],
            subject=parts[key][0],
            metric_name=parts[key][1],
            n=n,
            mean=mean,
            stderr=std / math.sqrt(n) if n > 1 else math.nan,  # one value: none (JSON null, "-")
            ci_low=ci.low,
            ci_high=ci.high,
            ci_method=ci.method
            if ci.method.startswith("no interval")
            else f"{ci.method}, {int(ci.level * 100)}%",
        )
        if by_config:
            entry["runs"] = len(sources[key])
        out.append(entry)
    return out


def _write_table(path_base: Path, rows: Sequence[dict[str, Any]]) -> Path:
    columns: list[str] = []
    for row in rows:
        for k in row:
            if k not in columns:
                columns.append(k)
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist([{c: _cell(r.get(c)) for c in columns} for r in rows])
        path = path_base.with_suffix(".parquet")
        with atomic_path(path) as tmp:
            pq.write_table(table, tmp)
        return path
    except ImportError:
        path = path_base.with_suffix(".csv")
        _write_csv(path, rows, columns)
        return path


def _cell(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, (list, dict)) else value


def _write_csv(path: Path, rows: Sequence[dict[str, Any]], columns: list[str]) -> None:
    import io

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns)
    writer.writeheader()
    for row in rows:
        writer.writerow({c: _cell(row.get(c)) for c in columns})
    atomic_write_text(path, buf.getvalue())


def write_outputs(
    out_dir: Path,
    rows: Sequence[dict[str, Any]],
    summary: Sequence[dict[str, Any]],
    keys: Sequence[str],
    *,
    true_values: Mapping[tuple[str, str], float] | None = None,
) -> tuple[Path | None, Path | None]:
    """Write ``results.parquet`` (or ``.csv``), ``summary.csv`` and ``summary.png``.

    ``true_values`` (:func:`true_values`) become reference lines in ``summary.png``.

    Returns:
        The paths of the table and the figure.
    """
    out_dir = Path(out_dir)
    if not rows:
        return None, None
    table = _write_table(out_dir / "results", rows)
    columns = [*keys, "stage", "metric", "n", "mean", "stderr", "ci_low", "ci_high", "ci_method"]
    _write_csv(out_dir / "summary.csv", summary, columns)
    zero = constant_zero(summary)  # diagnostics that are 0 everywhere: no panel
    shown = [e for e in summary if (e["stage"], e["metric"]) not in zero]
    figure = plot_summary(shown or summary, keys, out_dir / "summary.png", true_values=true_values)
    return table, figure


def true_values(run_dirs: Sequence[Path]) -> dict[tuple[str, str], float]:
    """``{(stage, metric): value}`` of the evaluators' ``info["true_values"]``, where every run agrees.

    A value that differs between runs (a swept setting changed the target) is left out, so a
    reference line is only drawn where it holds for every point of the panel.
    """
    found: dict[tuple[str, str], float | None] = {}
    for run_dir in run_dirs:
        try:
            results = json.loads((Path(run_dir) / "results.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for stage, res in (results.get("stages") or {}).items():
            info = res.get("info") if isinstance(res, Mapping) else None
            given = info.get("true_values") if isinstance(info, Mapping) else None
            for metric, value in (given or {}).items() if isinstance(given, Mapping) else ():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    key = (str(stage), str(metric))
                    found[key] = float(value) if found.get(key, float(value)) == float(value) else None
    return {k: v for k, v in found.items() if v is not None}


def _numeric(values: list[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def headline_metrics(summary: Sequence[Mapping[str, Any]], max_panels: int = 6) -> list[str]:
    """The metric names (without subject) ``summary.png`` draws, at most ``max_panels``.

    First the first metric of each evaluator stage (``tv``, ``energy_distance``), then the
    sampler diagnostics (``acceptance_rate``), then the evaluators' other metrics in order.
    """
    evaluator: dict[str, list[str]] = {}
    diagnostics: list[str] = []
    for e in summary:
        subject, name = metric_parts(e)
        if subject:
            names = evaluator.setdefault(str(e["stage"]), [])
            if name not in names:
                names.append(name)
        elif name not in diagnostics:
            diagnostics.append(name)
    order = [names[0] for names in evaluator.values()] + diagnostics
    order += [n for names in evaluator.values() for n in names[1:]]
    return list(dict.fromkeys(order))[:max_panels]


def plot_summary(
    summary: Sequence[dict[str, Any]],
    keys: Sequence[str],
    path: Path,
    max_panels: int = 6,
    *,
    true_values: Mapping[tuple[str, str], float] | None = None,
) -> Path | None:
    """Draw :func:`summary_figure` to the PNG ``path``; ``None`` (nothing written) for no rows.

    Control characters in the entries' names (a tampered ``results.json``) are dropped first:
    they have no glyph, and matplotlib's warning would carry them to the terminal.
    """
    from quadriga.markup import strip_controls

    summary = [{k: strip_controls(v) if isinstance(v, str) else v for k, v in e.items()} for e in summary]
    fig = summary_figure(summary, keys, max_panels, true_values=true_values)
    if fig is None:
        return None
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=110)
    return path


def summary_figure(
    summary: Sequence[dict[str, Any]],
    keys: Sequence[str],
    max_panels: int = 6,
    *,
    true_values: Mapping[tuple[str, str], float] | None = None,
) -> Any:
    """The headline metrics (:func:`headline_metrics`) against the first swept parameter.

    One panel per metric, titled in words (:func:`metric_title`), one line per subject (or
    sampler stage) with the mean over seeds and a band for its interval (the summary's
    ``ci_method``, a Student t interval); a point with ``n < 2`` has no band. A dashed grey line
    marks a metric's true value where the evaluators recorded one (:func:`true_values`). The
    legend sits outside the panels, once for the figure. The x ticks are the swept values (a log
    axis when they span a factor of 10 or more); a y axis whose means are positive and span a
    factor of 30 or more is logarithmic with ticks at 1, 2 and 5 times powers of ten. Bars with interval
    whiskers when nothing numeric was swept, one colour per configuration; names longer than
    :data:`SHORT_TICK` characters (matrix stages such as ``mala[kernel.step_size=0.1,...]``) are
    numbered under the bars and named in the legend, so tick labels never overlap. Where the
    ticks would be shown shifted by an offset or scaled by a factor, the y label says so
    (:func:`_caption_offset`). The title says how many metrics were left out (all are in
    ``summary.csv``).

    Returns:
        a ``matplotlib.figure.Figure`` (object API, no pyplot), or ``None`` for no rows.
    """
    from matplotlib import ticker
    from matplotlib.figure import Figure

    if not summary:
        return None
    true_values = true_values or {}
    metrics: dict[str, list[dict[str, Any]]] = {}
    for entry in summary:
        metrics.setdefault(metric_parts(entry)[1], []).append(entry)
    names = headline_metrics(summary, max_panels)
    x_key = next((k for k in keys if _numeric([e.get(k) for e in summary])), None)
    cols = min(3, len(names))
    rows = math.ceil(len(names) / cols)
    fig = Figure(figsize=(4.2 * cols + 2.2, 3.3 * rows + 0.5), layout="constrained")
    fig.suptitle(_figure_title(summary, len(names), len(metrics), x_key is not None), fontsize=10)
    handles: dict[str, Any] = {}
    codes: dict[str, int] = {}  # a bar's configuration -> its number, the same in every panel
    bar_keys: set[str] = set()
    bar_panels: list[tuple[Any, list[str]]] = []
    numbered = False  # whether some name is too long to stand under its bar

    def key(label: str) -> str:  # a bar's legend entry: "3  mala[step_size=0.1]" once numbered
        return f"{codes[label]}  {label}"

    for i, name in enumerate(names):
        ax = fig.add_subplot(rows, cols, i + 1)
        lines: dict[str, list[dict[str, Any]]] = {}
        several = len({e["stage"] for e in metrics[name]}) > 1  # the same name in several stages
        for e in metrics[name]:
            subject = metric_parts(e)[0]
            subject = f"{subject} ({e['stage']})" if subject and several else subject or e["stage"]
            others = [f"{k.split('.')[-1]}={e.get(k)}" for k in keys if k != x_key]
            lines.setdefault(" ".join([subject, *others]), []).append(e)
        if x_key is not None:
            _draw_lines(ax, lines, x_key, handles)
        else:
            labels = list(lines)
            means = [lines[lb][0]["mean"] for lb in labels]
            err = [
                [
                    m - lines[lb][0]["ci_low"] if lines[lb][0]["n"] >= 2 else 0.0
                    for lb, m in zip(labels, means, strict=True)
                ],
                [
                    lines[lb][0]["ci_high"] - m if lines[lb][0]["n"] >= 2 else 0.0
                    for lb, m in zip(labels, means, strict=True)
                ],
            ]
            long = max(len(lb) for lb in labels) > SHORT_TICK
            for lb in labels:
                codes.setdefault(lb, len(codes) + 1)
            colours = [f"C{(codes[lb] - 1) % 10}" for lb in labels]  # one colour per configuration
            bars = ax.bar(range(len(labels)), means, yerr=err, capsize=3, color=colours)
            for lb, bar in zip(labels, bars, strict=True):
                handles.setdefault(key(lb), bar)
                bar_keys.add(key(lb))
            ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize=8)
            bar_panels.append((ax, labels))
            numbered = numbered or long
        truths = {v for (stage, metric), v in true_values.items() if metric == name}
        for v in truths:
            ref = ax.axhline(v, color="0.35", linestyle="--", linewidth=1)
            handles.setdefault("true value", ref)
        ys = [e["mean"] for e in metrics[name]]  # the means decide; a band below 0 is clipped
        ys = [y for y in ys if isinstance(y, (int, float)) and math.isfinite(y)]
        if x_key is not None and ys and min(ys) > 0 and max(ys) / min(ys) >= 30 and not truths:
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_locator(ticker.NullLocator())
        ax.set_title(metric_title(name), fontsize=10)
        ax.set_ylabel(f"mean {name}", fontsize=8)
        ax.tick_params(labelsize=8)
    for ax, labels in bar_panels if numbered else ():  # numbers under the bars, names in the legend
        ax.set_xticks(range(len(labels)), [str(codes[lb]) for lb in labels], rotation=0, ha="center")
        ax.set_xlabel("configuration (numbered in the legend)", fontsize=8)
    fig.draw_without_rendering()  # the tick formatters decide on offsets when drawn
    for ax in fig.axes:
        _caption_offset(ax)
    if not numbered:  # short names stand under their bars; the legend keeps lines and references
        handles = {k: h for k, h in handles.items() if k not in bar_keys}
    if handles:
        where: Any = "outside lower center" if numbered else "outside right upper"  # long names: below
        columns = max(1, min(len(handles), int(fig.get_figwidth() * 12 / max(map(len, handles)))))
        fig.legend(
            list(handles.values()),
            list(handles),
            loc=where,
            ncols=columns if numbered else 1,
            fontsize=8,
            frameon=False,
        )
    return fig


#: the longest configuration name written under its bar; longer ones are numbered
SHORT_TICK = 14


def _caption_offset(ax: Any) -> None:
    """Say in the y label when matplotlib shows the ticks shifted or scaled.

    Means close together far from 0 (0.99641, 0.99645) get tick labels relative to an offset
    (``+9.964e-1`` in the axes' corner), and very small or large ones a common factor
    (``1e-7``); the corner is easily missed and the ticks then read as the values. The offset or
    factor is moved into the label, ``mean tv (ticks + 0.9964)`` or ``mean tv (ticks x 1e-07)``.
    The figure must have been drawn (``draw_without_rendering``) since its last change.
    """
    formatter = ax.yaxis.get_major_formatter()
    offset = getattr(formatter, "offset", 0) or 0
    state = vars(formatter)  # the power is private from matplotlib 3.11 on, public before
    power = state.get("_orderOfMagnitude", state.get("orderOfMagnitude", 0)) or 0
    if not offset and not power:
        return
    parts = []
    if power:
        parts.append(f"x 1e{power:+03d}")
    if offset:
        parts.append(f"+ {offset:.10g}")
    ax.yaxis.get_offset_text().set_visible(False)
    ax.set_ylabel(f"{ax.get_ylabel()} (ticks {' '.join(parts)})", fontsize=8)


def _figure_title(summary: Sequence[Mapping[str, Any]], shown: int, metrics: int, swept: bool) -> str:
    """The title of :func:`summary_figure`: seeds per point, the interval method, the metrics left out.

    ``shown`` of ``metrics`` metric names are drawn; ``swept`` says whether a numeric parameter is on
    the x axis (bands) or not (whiskers on bars).
    """
    ns = sorted({int(e["n"]) for e in summary})
    n_text = f"n = {ns[0]}" if len(ns) == 1 else f"n = {ns[0]} to {ns[-1]}"
    methods = sorted(
        {
            str(e.get("ci_method", "")).split(" (")[0].split(",")[0]
            for e in summary
            if int(e["n"]) >= 2 and not str(e.get("ci_method", "")).startswith("no interval")
        }
        - {"none", "", "not recorded"}
    )
    shape = "bands" if swept else "whiskers"
    band = f"{shape}: 95% {' / '.join(methods) or 'Student t'} interval" if ns[-1] >= 2 else "no interval"
    cut = f"; {shown} of {metrics} metrics shown, all in summary.csv" if metrics > shown else ""
    return f"Mean over seeds ({n_text} per point); {band}{cut}"


def _draw_lines(
    ax: Any, lines: Mapping[str, list[dict[str, Any]]], x_key: str, handles: dict[str, Any]
) -> None:
    """One line per label against the swept ``x_key``: the mean and a band for its interval (none if n < 2).

    A label seen in an earlier panel keeps its colour (``handles``, label -> line, gains the new
    labels). The x ticks are the swept values, on a log axis when they span a factor of 10 or more.
    """
    values = sorted({float(e[x_key]) for entries in lines.values() for e in entries})
    for label, entries in lines.items():
        entries.sort(key=lambda e: e[x_key])
        xs = [e[x_key] for e in entries]
        colour = handles[label].get_color() if label in handles else None
        (line,) = ax.plot(xs, [e["mean"] for e in entries], marker="o", label=label, color=colour)
        handles.setdefault(label, line)
        ax.fill_between(
            xs,
            [e["ci_low"] if int(e["n"]) >= 2 else math.nan for e in entries],
            [e["ci_high"] if int(e["n"]) >= 2 else math.nan for e in entries],
            alpha=0.2,
            color=line.get_color(),
        )
    if values[0] > 0 and values[-1] / values[0] >= 10:
        ax.set_xscale("log")
    ax.set_xticks(values, [f"{v:g}" for v in values])
    ax.minorticks_off()
    ax.set_xlabel(x_key.split(".")[-1] + f" ({x_key})", fontsize=8)


def load_rows(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows and swept keys from a sweep directory (``sweep.json``) or a run directory (``results.json``).

    A sweep directory gives every finished run it records, of every command that ran into it
    (:func:`sweep_rows`).

    Raises:
        FileNotFoundError: neither kind of directory.
    """
    path = Path(path)
    if (path / "sweep.json").is_file():
        return sweep_rows(path)
    from quadriga.rundir.loaded import is_run, read_run_file

    if is_run(path):
        results = read_run_file(path, "results.json", key="path")
        return rows_from_run(path, {"run_id": path.name, "seed": results.get("seed")}), []
    raise FileNotFoundError(
        f"'{path}' is neither a sweep directory (sweep.json) nor a run directory (results.json)"
    )
