"""One self-contained HTML page for runs, sweeps and claim verdicts (``quadriga report``).

The page holds everything a reader needs without the run directories: each figure embedded as a
base64 PNG, the results as tables (one subject x metric table per evaluator, a summary table with
``n``, mean, standard error and interval per sweep), the resolved ``pipeline.toml``, the
``manifest.json`` (versions, seeds, command line) and, given ``quadriga verify`` output, each
claim's verdict with its estimate, interval, ``n`` and how the interval was computed. The page is
rendered by a Jinja2 template (``report_templates/report.html.j2``, autoescaped), so no value read
from a run can inject markup.

Example::

    quadriga report runs/gmm-mcmc-baselines/20261201T122438Z --out report.html
    quadriga report sweeps/my-sweep --verify verify/srmc-alpha-scaling --out srmc.html
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from quadriga.errors import ConfigError

__all__ = ["build_report", "collect_claims", "collect_run", "collect_sweep", "render_report", "write_report"]


def _fmt(value: Any) -> str:
    from quadriga.cli.output import format_value

    return format_value(value)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a table, else ``{}`` (a damaged entry shows as empty, not as a crash)."""
    return value if isinstance(value, Mapping) else {}


def _names(value: Any) -> list[str]:
    """The strings of a list entry such as a stage's ``figures`` (anything else: none)."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _safe_png(path: Path, root: Path) -> bool:
    """Whether ``path`` may be embedded in a report of ``root``: a regular PNG file inside ``root``.

    A run directory's records only *name* their figures; a tampered or copied directory could name
    ``/home/me/.ssh/id_rsa`` or hold a symlink to it. A report carries no more than the run: the
    file must not be a symlink, must resolve to a place inside ``root`` and must start with the PNG
    signature (quadriga writes PNGs only).
    """
    try:
        if path.is_symlink() or not path.is_file():
            return False
        path.resolve().relative_to(root.resolve())
        with path.open("rb") as fh:
            return fh.read(len(_PNG_MAGIC)) == _PNG_MAGIC
    except (OSError, ValueError):
        return False


def _figures(paths: list[Path], root: Path, caption: str) -> list[dict[str, str]]:
    """The embeddable figures among ``paths`` (see :func:`_safe_png`), as base64 data URLs."""
    out = []
    for path in paths:
        if _safe_png(path, root):
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            out.append({"name": path.name, "caption": caption, "src": f"data:image/png;base64,{data}"})
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return text in ("-", "")
    return True


def _table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """A table for the template: cells as text, ``numeric[i]`` true for columns of numbers (right-aligned)."""
    cells = [[_fmt(c) for c in row] for row in rows]
    numeric = [
        i > 0
        and bool(cells)
        and all(_is_number(r[i]) for r in cells)
        and any(r[i] not in ("-", "") for r in cells)
        for i in range(len(columns))
    ]
    return {"title": title, "columns": list(columns), "rows": cells, "numeric": numeric, "note": ""}


def _metrics_table(
    stage: str, component: str, values: Mapping[str, float], intervals: Any = None
) -> dict[str, Any]:
    """An evaluator's subject x metric table; a value with an interval shows it in its cell.

    How the intervals were computed (their method and level) is said once, in the title.
    """
    from quadriga.cli.output import interval_notes, pivot, with_interval

    intervals = intervals if isinstance(intervals, Mapping) else {}
    subjects, metrics, cells = pivot({k: with_interval(v, intervals.get(k)) for k, v in values.items()})
    notes = interval_notes({k: v for k, v in intervals.items() if k in values})
    return _table(
        f"{stage} ({component})" + (f"; intervals: {'; '.join(notes)}" if notes else ""),
        ["subject", *metrics],
        [[s or "(stage)", *(cells.get((s, m), "") for m in metrics)] for s in subjects],
    )


#: the record files a report copies into the page as text
_EMBEDDED = ("results.json", "status.json", "manifest.json", "pipeline.toml")


def _refuse_linked_records(run_dir: Path) -> None:
    """Refuse a run whose record files (:data:`_EMBEDDED`) are symbolic links.

    A report embeds their text; through a link it would carry a file from outside the run.

    Raises:
        ConfigError: naming the link (key ``report``).
    """
    for name in _EMBEDDED:
        if (run_dir / name).is_symlink():
            raise ConfigError(
                f"'{run_dir / name}' is a symbolic link; a report embeds only the run's own files, not "
                "what a link points to. Replace it with the file itself.",
            )


def collect_run(run_dir: Path) -> dict[str, Any]:
    """The report section of one run directory (``results.json``, ``pipeline.toml``, ``manifest.json``).

    Returns:
        ``{"kind": "run", "title", "dir", "status", "facts", "tables", "figures", "pipeline", "manifest"}``.

    Raises:
        ConfigError: ``run_dir`` has no ``results.json``; ``results.json``, ``status.json`` or
            ``manifest.json`` is not JSON or not what a run writes
            (:func:`quadriga.rundir.loaded.read_run_file`, naming the file).
    """
    from quadriga.artifacts import artifact_class
    from quadriga.rundir import RunDir
    from quadriga.rundir.loaded import is_run, read_run_file

    run_dir = Path(run_dir)
    if not is_run(run_dir):
        raise ConfigError(f"'{run_dir}' is not a run directory (no results.json).")
    _refuse_linked_records(run_dir)
    results = read_run_file(run_dir, "results.json")
    manifest = read_run_file(run_dir, "manifest.json")
    read_run_file(run_dir, "status.json")  # damaged: refused, naming the file
    record = RunDir(run_dir).read_status()  # a "running" run whose process is gone: interrupted
    stages: Mapping[str, Any] = results.get("stages", {})
    seconds = {n: s.seconds for n, s in record.stages.items()}
    overview = []
    tables = []
    figures = []
    for stage, res in stages.items():
        cls = artifact_class(res)
        overview.append([stage, res.get("component", ""), cls.headline(res), _fmt(seconds.get(stage))])
        if cls.keyed_by_subject and cls.scalars(res):
            tables.append(
                _metrics_table(
                    stage, res.get("component", "evaluator"), cls.scalars(res), res.get("intervals")
                )
            )
        paths = [run_dir / name for name in _names(res.get("figures"))]
        figures += _figures(paths, run_dir, f"stage {stage} ({res.get('component', '')})")
    if overview:
        tables.insert(0, _table("stages", ["stage", "component", "result", "seconds"], overview))
    return {
        "kind": "run",
        "title": f"run of {results.get('pipeline')}",
        "dir": str(run_dir),
        "status": record.status if (run_dir / "status.json").is_file() else results.get("status", "unknown"),
        "facts": [
            ("pipeline", results.get("pipeline")),
            ("root seed", results.get("seed")),
            ("started (UTC)", manifest.get("started_utc", "-")),
            ("command", " ".join(_names(manifest.get("command"))) or "-"),
            *([("ended", record.error)] if record.status != "finished" and record.error else []),
        ],
        "tables": tables,
        "figures": figures,
        "pipeline": RunDir(run_dir).read_pipeline_text(),
        "manifest": json.dumps(manifest, indent=2),
        "settings": "",
        "glossary": [],
    }


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a.b.c": leaf}`` of nested dicts (lists are leaves)."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: value}


#: manifest entries that differ from run to run by construction (not a difference of set-up)
_PER_RUN = ("started_utc", "finished_utc", "run_dir", "dir", "hostname", "pid", "seed", "seeds", "command")


def _differences(
    pipelines: Mapping[str, Any], manifests: Mapping[str, Any], swept: Sequence[str]
) -> tuple[list[str], list[str]]:
    """``(swept keys that vary, other keys that vary)`` across the runs' pipeline.toml and manifest.json."""
    varying: set[str] = set()
    for where, docs in (("pipeline", pipelines), ("manifest", manifests)):
        flat = [_flatten(d) for d in docs.values()]
        if len(flat) < 2:
            continue
        keys = set().union(*flat)
        for key in keys:
            if len({json.dumps(f.get(key), sort_keys=True, default=str) for f in flat}) > 1:
                varying.add(f"{where}:{key}")
    expected, other = [], []
    for item in sorted(varying):
        where, key = item.split(":", 1)
        leaf = key.split(".")[-1]
        if any(key == s or key.endswith("." + s) or key.startswith(s + ".") for s in swept) or (
            where == "manifest" and (leaf in _PER_RUN or key.split(".")[0] in _PER_RUN)
        ):
            expected.append(item)
        elif where == "pipeline" and any(key.endswith("." + s.split(".")[-1]) for s in swept):
            expected.append(item)  # a swept key as the expanded pipeline spells it
        else:
            other.append(item)
    return expected, other


def _compact(items: Sequence[str]) -> str:
    """``"manifest: seed, seeds.* (6); pipeline: stage.mala.step_size"``: keys grouped by file and head."""
    grouped: dict[str, dict[str, list[str]]] = {}
    for item in items:
        where, key = item.split(":", 1)
        grouped.setdefault(where, {}).setdefault(key.split(".")[0], []).append(key)
    parts = []
    for where, heads in grouped.items():
        keys = [ks[0] if len(ks) == 1 else f"{head}.* ({len(ks)})" for head, ks in heads.items()]
        parts.append(f"{where}: {', '.join(keys)}")
    return "; ".join(parts)


def _grid_and_seeds(sweep: Mapping[str, Any], runs: Sequence[Any]) -> tuple[dict[str, list[Any]], list[Any]]:
    """The grid and seeds of every run in a sweep directory (every command's), or ``sweep.json``'s.

    ``runs`` are :func:`quadriga.summary.sweep_runs`; without them (no run listed) the last
    command's grid and seeds from ``sweep.json``.
    """
    from quadriga.summary import sweep_grid, sweep_seeds

    listed = [r for r in runs if isinstance(r, Mapping)]
    if listed:
        return sweep_grid(listed), sweep_seeds(listed)
    return dict(sweep.get("grid", {}) or {}), list(sweep.get("seeds", []))


def _sweep_provenance(sweep_dir: Path, sweep: Mapping[str, Any], runs: Sequence[Any]) -> tuple[str, str, str]:
    """The sweep's pipeline and manifest as the first run recorded them, and what differs across runs.

    Returns:
        ``(pipeline text, manifest text, differences)``: the pipeline starts with ``#`` lines
        naming the source, the grid, the seeds and the fixed ``--set`` values, followed by the
        first run's resolved ``pipeline.toml``; the manifest is the first run's ``manifest.json``;
        ``differences`` says which entries differ between the runs (only the swept keys and
        per-run entries such as the seed and start time should).
    """
    from quadriga.rundir import RunDir

    ids = [r.get("run_id") for r in runs if isinstance(r, Mapping) and r.get("run_id")]
    ids = ids or [r.get("run_id") for r in sweep.get("runs", []) if isinstance(r, Mapping)]
    run_dirs = [sweep_dir / "runs" / str(i) for i in ids if i and (sweep_dir / "runs" / str(i)).is_dir()]
    pipelines: dict[str, Any] = {}
    manifests: dict[str, Any] = {}
    texts: dict[str, str] = {}
    for d in run_dirs:
        _refuse_linked_records(d)
        rd = RunDir(d)
        if rd.saved_pipeline() is not None:
            texts[d.name] = rd.read_pipeline_text()
            try:
                pipelines[d.name] = rd.read_pipeline()
            except ConfigError:
                pipelines[d.name] = {"unreadable": texts[d.name]}
        recorded = rd.read_manifest()
        if recorded:
            manifests[d.name] = recorded
    grid, seeds = _grid_and_seeds(sweep, runs)
    head = [
        f"# sweep of {sweep.get('source')}: {len(run_dirs)} runs",
        "# grid: " + ("; ".join(f"{k} = {v}" for k, v in grid.items()) or "none"),
        "# seeds: " + ", ".join(map(str, seeds)),
        "# fixed --set: " + (", ".join(sweep.get("fixed", [])) or "none"),
    ]
    first = next(iter(texts), None)
    if first is None:
        pipeline = "\n".join([*head, "# no run has written its pipeline.toml yet"]) + "\n"
    else:
        pipeline = "\n".join([*head, f"# the resolved pipeline.toml of the first run, {first}:", ""])
        pipeline += "\n" + texts[first]
    first_manifest = next(iter(manifests), None)
    manifest = (
        f"// manifest.json of the first run, {first_manifest}\n"
        + json.dumps(manifests[first_manifest], indent=2)
        if first_manifest
        else "no run has written its manifest.json yet"
    )
    swept = [*grid, *(["seed"] if len(sweep.get("seeds", [])) > 1 else [])]
    expected, other = _differences(pipelines, manifests, swept)
    return pipeline, manifest, _differences_text(len(run_dirs), expected, other)


def _differences_text(n: int, expected: Any, other: Any) -> str:
    """One sentence on what differs across ``n`` runs: the ``other`` entries, or only the ``expected`` ones.

    ``expected`` and ``other`` are the two parts :func:`_differences` returns (swept or per-run
    entries, and the rest).
    """
    if n < 2:
        return "one run: nothing to compare"
    if other:
        return f"besides the swept keys, these differ across the {n} runs: {_compact(other)}"
    shown = _compact(expected) or "nothing"
    return f"only the swept settings and per-run entries differ across the {n} runs ({shown})"


def _cell_text(e: Mapping[str, Any]) -> str:
    """A pivot cell: ``"0.512 [0.41, 0.63]"``, the mean alone for ``n < 2``, ``"0.5 (all equal)"``."""
    mean = _fmt(e["mean"])
    method = str(e.get("ci_method", ""))
    if int(e["n"]) < 2:
        return mean
    if method.startswith("none (constant") or (method.startswith("no interval") and "equal" in method):
        return f"{mean} (all equal)"
    return f"{mean} [{_fmt(e['ci_low'])}, {_fmt(e['ci_high'])}]"


def sweep_pivots(summary: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> list[dict[str, Any]]:
    """One table per metric of a sweep summary (rows of :func:`quadriga.summary.aggregate`).

    An evaluator's metric gets a table per stage whose rows are its subjects (the methods
    compared); a sampler diagnostic gets one table whose rows are the stages. Columns are the
    values of the first swept key (other swept keys join the row label as ``key=value``); with
    no grid there is one column. A cell is the mean over seeds with its interval,
    ``0.512 [0.41, 0.63]`` (the mean alone when ``n < 2``). How the intervals were computed and
    ``n`` are said once, in the table's ``note``. Diagnostics that are 0 in every run
    (:func:`quadriga.summary.constant_zero`) are left out, as in the terminal.

    Returns:
        tables for the template (:func:`_table`, plus ``note``), evaluator metrics first.
    """
    from quadriga.summary import constant_zero, metric_parts, metric_title

    zero = constant_zero(summary)
    col_key = keys[0] if keys else None
    row_keys = list(keys[1:])
    tables: dict[tuple[str, str], dict[str, Any]] = {}
    for e in summary:
        if (e["stage"], e["metric"]) in zero:
            continue
        subject, metric = metric_parts(e)
        where = (str(e["stage"]), metric) if subject else ("", metric)
        label = " ".join(
            [subject or str(e["stage"]), *(f"{k.split('.')[-1]}={_fmt(e.get(k))}" for k in row_keys)]
        )
        column = "mean [interval]"
        if col_key == "source":  # runs compared by configuration: the label says it all
            column = str(e.get(col_key))
        elif col_key:
            column = f"{col_key.split('.')[-1]} = {_fmt(e.get(col_key))}"
        t = tables.setdefault(where, {"rows": {}, "columns": [], "n": set(), "methods": []})
        if column not in t["columns"]:
            t["columns"].append(column)
        t["rows"].setdefault(label, {})[column] = _cell_text(e)
        t["n"].add(int(e["n"]))
        method = str(e.get("ci_method", ""))
        if int(e["n"]) >= 2 and not method.startswith(("no interval", "none (constant")):
            if method not in t["methods"]:
                t["methods"].append(method)
    out = []
    for (stage, metric), t in sorted(tables.items(), key=lambda kv: kv[0][0] == ""):
        title = f"{metric_title(metric)} ({metric})" + (
            f", stage {stage}" if stage else ", per sampler stage"
        )
        row_head = "subject" if stage else "stage"
        table = _table(
            title,
            [row_head, *t["columns"]],
            [[label, *(cells.get(c, "-") for c in t["columns"])] for label, cells in t["rows"].items()],
        )
        table["numeric"] = [i > 0 for i in range(len(table["columns"]))]
        table["note"] = _pivot_note(sorted(t["n"]), t["methods"])
        out.append(table)
    return out


def _pivot_note(ns: Sequence[int], methods: Sequence[str]) -> str:
    """The note under a pivot table: what a cell holds, ``n`` (sorted ``ns``), the interval methods."""
    from quadriga.stats import small_sample_note

    n_text = f"n = {ns[0]}" if len(ns) == 1 else f"n = {ns[0]} to {ns[-1]}"
    what = "the mean over seeds" + (" [its interval]" if methods else "")
    note = f"each cell: {what}, {n_text} per cell"
    note += f"; intervals: {'; '.join(methods)}" if methods else "; one value: no interval"
    small = small_sample_note(ns[0]) if methods else ""
    return note + (f" ({small})." if small else ".")


def glossary(
    sweep_dir: Path, runs: Sequence[Mapping[str, Any]], summary: Sequence[Mapping[str, Any]]
) -> list[tuple[str, str, str]]:
    """What each metric of a sweep means, from the declarations of the components that wrote it.

    A component documents its metrics in the optional class attribute ``metrics_doc``
    (``{"tv": "total variation ...", "fraction_<k>": "..."}``; ``<k>`` stands for any suffix),
    read here without running anything; sampler diagnostics are described by
    :data:`quadriga.summary.DIAGNOSTIC_DOCS`. The components are those of the first finished
    run's ``results.json``; one that is no longer installed is described as such.

    Returns:
        ``(metric, components, meaning)`` per metric in the tables, in order of appearance; a
        metric several components write alike is one entry (``acceptance_rate``: ``rwm, mala``),
        and the metrics one pattern describes are one entry (``fraction_<k>``).
    """
    from quadriga.summary import DIAGNOSTIC_DOCS, constant_zero, metric_doc, metric_parts

    first = next((r for r in runs if r.get("status") == "finished" and r.get("run_id")), None)
    results = _read_json(sweep_dir / "runs" / str(first["run_id"]) / "results.json") if first else None
    stages = _mapping(_mapping(results).get("stages"))
    docs: dict[str, tuple[str, Mapping[str, str]]] = {}
    for stage, res in stages.items():
        component = str(_mapping(res).get("component", ""))
        kind = _KIND_OF_TYPE.get(str(_mapping(res).get("type", "")))
        docs[stage] = (component, _component_docs(component, kind))
    zero = constant_zero(summary)
    entries: dict[tuple[str, str], list[str]] = {}  # (name, meaning) -> components
    for e in summary:
        if (e["stage"], e["metric"]) in zero:
            continue  # left out of the tables, so not explained either
        metric = metric_parts(e)[1]
        component, table = docs.get(str(e["stage"]), ("", {}))
        text = metric_doc(metric, table)
        name = metric
        if text is not None and metric not in table:  # matched a pattern such as fraction_<k>
            name = next(k for k in table if metric_doc(metric, {k: table[k]}) is not None)
        text = text or DIAGNOSTIC_DOCS.get(metric) or f"not described by {component or 'its component'}"
        users = entries.setdefault((name, text), [])
        if component and component not in users:
            users.append(component)
    return [(name, ", ".join(users) or "-", text) for (name, text), users in entries.items()]


#: the component kind that writes each artifact type (a name can be an estimator and an evaluator)
_KIND_OF_TYPE = {"Metrics": "evaluator", "Estimate": "estimator", "Samples": "sampler", "Fitted": "learner"}


def _component_docs(component: str, kind: str | None = None) -> Mapping[str, str]:
    """The ``metrics_doc`` of an installed component (``{}`` when it has none or is not installed)."""
    if not component:
        return {}
    try:
        from quadriga.registry import get_registry

        registry = get_registry()
        cls = registry.load_class(registry.get(component, kind))
    except Exception:  # a report of an old sweep must not fail on a plugin since removed
        return {}
    docs = getattr(cls, "metrics_doc", None)
    return docs if isinstance(docs, Mapping) else {}


def collect_sweep(sweep_dir: Path) -> dict[str, Any]:
    """The report section of a sweep directory: the summary over seeds and the sweep's figures.

    The pipeline and manifest shown are those of the first run (:func:`_sweep_provenance`), with
    the grid, the seeds and what differs across the runs; ``sweep.json`` is kept as ``settings``.
    The runs are every run the directory records (:func:`quadriga.summary.sweep_runs`: every
    command's that ran into it), the grid and seeds their union.
    Each summary row gives ``n`` (values pooled, one per seed), the mean, its standard error and the
    interval with its method (:func:`quadriga.summary.aggregate`); rows with ``n < 2`` have none.
    The summary is shown as one pivot per metric (:func:`sweep_pivots`) with a glossary of the
    metric names (:func:`glossary`).

    Raises:
        ConfigError: ``sweep_dir`` has no ``sweep.json``.
    """
    from quadriga.summary import aggregate, load_rows, sweep_runs

    sweep_dir = Path(sweep_dir)
    sweep = _read_json(sweep_dir / "sweep.json")
    if not isinstance(sweep, dict):
        raise ConfigError(f"'{sweep_dir}' is not a sweep directory (no readable sweep.json).")
    rows, keys = load_rows(sweep_dir)
    summary = aggregate(rows, keys)
    runs = sweep_runs(sweep_dir)  # each status as its run directory records it now
    figures = _figures(sorted(sweep_dir.glob("*.png")), sweep_dir, "summary over seeds")
    finished = sum(r.get("status") == "finished" for r in runs)
    pipeline, manifest, differences = _sweep_provenance(sweep_dir, sweep, runs)
    grid, seeds = _grid_and_seeds(sweep, runs)
    return {
        "kind": "sweep",
        "title": f"sweep of {sweep.get('source')}",
        "dir": str(sweep_dir),
        "status": f"{finished} of {len(runs)} runs finished",
        "facts": [
            ("source", sweep.get("source")),
            ("seeds", ", ".join(map(str, seeds))),
            ("grid", "; ".join(f"{k} = {v}" for k, v in grid.items()) or "-"),
            ("fixed --set", ", ".join(sweep.get("fixed", [])) or "-"),
            ("backend", sweep.get("backend", "-")),
            ("command", " ".join(map(str, sweep.get("command", []))) or "-"),
            ("differs across runs", differences),
        ],
        "tables": sweep_pivots(summary, keys),
        "glossary": glossary(sweep_dir, runs, summary),
        "figures": figures,
        "pipeline": pipeline,
        "manifest": manifest,
        "settings": json.dumps(sweep, indent=2),
    }


def collect_runs_summary(run_dirs: Sequence[Path]) -> dict[str, Any]:
    """The page section summarising several runs across seeds, as ``quadriga compare`` does.

    Rows of every run (:func:`quadriga.summary.load_rows`), a seed repeated with the same settings
    counted once (:func:`quadriga.summary.drop_repeated_seeds`), grouped by configuration
    (:func:`quadriga.summary.aggregate`: labelled by the pipeline's name and the settings that
    differ) and shown as one pivot per metric (:func:`sweep_pivots`): mean over the runs with its
    Student t interval, n and the method said once per table.
    """
    from quadriga.summary import aggregate, drop_repeated_seeds, load_rows

    rows: list[dict[str, Any]] = []
    for d in run_dirs:
        got, _ = load_rows(d)
        for row in got:
            row["source"] = Path(d).name
        rows += got
    kept, dropped = drop_repeated_seeds(rows)
    summary = aggregate(kept, ["source"])
    facts = [("runs", ", ".join(Path(d).name for d in run_dirs))]
    if dropped:
        facts.append(
            ("counted once", "; ".join(f"{a} repeats the seed and settings of {b}" for a, b in dropped))
        )
    return {
        "kind": "summary",
        "title": f"summary across {len(run_dirs)} runs",
        "dir": ", ".join(sorted({str(Path(d).parent) for d in run_dirs})),
        "status": f"{len(run_dirs) - len(dropped)} counted",
        "facts": facts,
        "tables": sweep_pivots(summary, ["source"]),
        "glossary": [],
        "figures": [],
        "pipeline": None,
        "manifest": None,
        "settings": None,
    }


def _claim_figures(report: Path, rec: Mapping[str, Any]) -> list[Path]:
    """The PNG figures of one claim record: those it names, then any in ``<claim>/`` next to the report.

    ``verify`` writes a claim's figures into ``<out>/<claim name>/`` and records their paths; a
    recorded path that no longer exists (the directory was moved) is looked up by file name there.
    """
    claim_dir = report.parent / str(rec.get("name", ""))
    found: list[Path] = []
    for fig in (rec.get("figures") or {}).values():
        path = Path(str(fig))
        for candidate in (path, report.parent / path, claim_dir / path.name):
            if candidate.suffix.lower() == ".png" and candidate.is_file():
                found.append(candidate)
                break
    if claim_dir.is_dir() and rec.get("name"):
        found += sorted(claim_dir.glob("*.png"))
    if not found:
        found = sorted(report.parent.glob("*.png"))
    unique: dict[Path, Path] = {}
    for path in found:
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def _claim_records(report: Path) -> list[dict[str, Any]]:
    """The claim records of one ``report.json`` (a list of them, or one record), checked.

    Raises:
        ConfigError: the file cannot be read as JSON, or holds something other than claim records.
    """
    fix = "Re-run `quadriga verify` or restore the file from a copy."
    try:
        records = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"'{report}' cannot be read as JSON ({type(exc).__name__}: {exc}). {fix}", key="--verify"
        ) from exc
    if isinstance(records, dict):
        records = [records]
    problem = ""
    if not isinstance(records, list):
        problem = f"holds {type(records).__name__}"
    for i, rec in enumerate(records if isinstance(records, list) else []):
        if not isinstance(rec, dict) or not isinstance(rec.get("name"), str):
            problem = f"has record {i} = {_fmt(rec)[:60]}, without a claim name"
        elif not isinstance(rec.get("status"), str):
            problem = f"has record {i} ('{rec['name']}') without a status"
        elif not isinstance(rec.get("comparisons") or [], list) or not all(
            isinstance(c, dict) for c in rec.get("comparisons") or []
        ):
            problem = f"has record {i} ('{rec['name']}') whose 'comparisons' is not a list of objects"
        elif not isinstance(rec.get("effect") or {}, dict):
            problem = f"has record {i} ('{rec['name']}') whose 'effect' is not an object"
        if problem:
            break
    if problem:
        raise ConfigError(
            f"'{report}' {problem}: expected the claim records `quadriga verify` writes (a list of "
            f"objects with a name, a status and comparisons). {fix}",
            key="--verify",
        )
    return list(records)


def collect_claims(verify_dir: Path) -> list[dict[str, Any]]:
    """Claim verdicts from ``quadriga verify`` output: every ``report.json`` under ``verify_dir``.

    Returns:
        One dict per claim record with ``name``, ``claim``, ``paper``, ``scale``, ``status``,
        ``claimed`` (the tested relation), ``table`` (per comparison: group when there are groups,
        arm, baseline, the statistic's name, estimate, interval, n, method and, at paper scale,
        verdict, p, MDE and replicates needed: :func:`quadriga.claims.verdict.comparison_cells`),
        ``note`` (how p was computed, or that smoke scale gives numbers only) and the claim's
        figures (those the record names, and the PNGs in ``<claim name>/`` next to the report).

    Raises:
        ConfigError: no ``report.json`` under ``verify_dir``; a ``report.json`` that cannot be read as
            JSON or does not hold claim records (objects with a name and a status), naming the file.
    """
    verify_dir = Path(verify_dir)
    reports = sorted(verify_dir.rglob("report.json")) if verify_dir.is_dir() else []
    if verify_dir.is_file() and verify_dir.name.endswith(".json"):
        reports = [verify_dir]
    if not reports:
        raise ConfigError(
            f"no report.json under '{verify_dir}'. Pass the output directory of `quadriga verify`.",
            key="--verify",
        )
    from quadriga.claims.report import SMOKE_NOTE, _statistic_name, comparison_note
    from quadriga.claims.verdict import comparison_cells

    claims = []
    for report in reports:
        for rec in _claim_records(report):
            effect = rec.get("effect") or {}
            scale = "paper" if rec.get("scale") == "paper" else "smoke"
            name = _statistic_name(rec)
            cells = [comparison_cells(c, name, scale) for c in rec.get("comparisons") or []]
            if cells and all(row["group"] == "-" for row in cells):
                cells = [{k: v for k, v in row.items() if k != "group"} for row in cells]
            claims.append(
                {
                    "name": rec.get("name"),
                    "claim": rec.get("claim", ""),
                    "paper": rec.get("paper", ""),
                    "scale": rec.get("scale", ""),
                    "status": rec.get("status", "unknown"),
                    "claimed": effect.get("claimed", ""),
                    "quantity": effect.get("quantity", ""),
                    "level": effect.get("level"),
                    "source": str(report),
                    "note": comparison_note(rec, scale)
                    if cells
                    else (SMOKE_NOTE if scale == "smoke" else ""),
                    "table": _table(
                        "comparisons", list(cells[0]) if cells else [], [list(r.values()) for r in cells]
                    ),
                    "figures": _figures(
                        _claim_figures(report, rec), report.parent, f"claim {rec.get('name')}"
                    ),
                    "protocol": _protocol_facts(rec),
                }
            )
    return claims


def _protocol_facts(rec: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(label, text)`` lines of a claim record's plan, pilot, preconditions, fragility and fingerprint."""
    facts = []
    plan = rec.get("plan")
    if isinstance(plan, Mapping):
        facts.append(
            (
                "plan",
                f"detect an effect of {_fmt(plan.get('effect'))} beyond the boundary with power "
                f"{_fmt(plan.get('power'))}: {plan.get('planned_replicates')} replicates declared"
                + (f" ({plan['rationale']})" if plan.get("rationale") else ""),
            )
        )
    pilot = rec.get("pilot")
    if isinstance(pilot, Mapping):
        facts.append(("pilot", str(pilot.get("summary", ""))))
    for check in rec.get("preconditions") or []:
        mark = "holds" if check.get("holds") else "fails"
        facts.append(
            ("precondition", f"{check.get('description')}: {mark} ({check.get('diagnostic') or '-'})")
        )
    frag = rec.get("fragility")
    if isinstance(frag, Mapping):
        holds = frag.get("holds") or []
        count = len(frag.get("points") or [])
        if rec.get("scale") != "paper":
            facts.append(("fragility", f"{count} settings at smoke scale: numbers only, no verdicts"))
        else:
            where = "; ".join(", ".join(f"{k}={v}" for k, v in p.items()) for p in holds)
            facts.append(("fragility", f"{count} settings; the claim holds at {where or 'none of them'}"))
    fp = rec.get("fingerprint")
    if isinstance(fp, Mapping):
        plugin = fp.get("plugin") or {}
        libs = ", ".join(f"{k} {v}" for k, v in (fp.get("libraries") or {}).items())
        facts.append(
            (
                "fingerprint",
                f"protocol {fp.get('protocol')}, quadriga {fp.get('core')}, {plugin.get('distribution')} "
                f"{plugin.get('version')} (source {plugin.get('source')})" + (f"; {libs}" if libs else ""),
            )
        )
    return facts


def _without_home(section: Mapping[str, Any]) -> dict[str, Any]:
    """``section`` with the home directory (``/home/ada/``) written ``~/`` in its text fields."""
    home = str(Path.home()).rstrip("/\\")
    if len(home) < 2:  # no home (``/``): nothing to hide
        return dict(section)

    def strip(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace(home + os.sep, "~" + os.sep)
        if isinstance(value, (list, tuple)):
            return type(value)(strip(v) for v in value)
        return value

    out = dict(section)
    for key in ("dir", "pipeline", "manifest", "settings", "facts", "title"):
        if key in out:
            out[key] = strip(out[key])
    return out


def render_report(
    sections: Sequence[Mapping[str, Any]], claims: Sequence[Mapping[str, Any]], title: str
) -> str:
    """Render the page from collected sections and claims with the package's Jinja2 template.

    The user's home directory in the sections' paths, pipeline text and manifest is written as
    ``~`` (:func:`_without_home`): a shared page does not carry the account name.
    """
    import jinja2

    sections = [_without_home(s) for s in sections]

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("quadriga", "report_templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    from quadriga import __version__

    return env.get_template("report.html.j2").render(
        title=title,
        sections=sections,
        claims=claims,
        generated=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        version=__version__,
    )


def build_report(dirs: Sequence[Path], *, verify: Sequence[Path] = (), title: str | None = None) -> str:
    """The HTML page for run and sweep directories and ``quadriga verify`` outputs.

    Args:
        dirs: run directories (``results.json``) and sweep directories (``sweep.json``), in page order.
        verify: ``quadriga verify`` output directories whose ``report.json`` verdicts are shown.
        title: the page title (default: the names of what is reported).

    Returns:
        The page, one string of HTML with every figure embedded.

    Raises:
        ConfigError: a path does not exist, or is neither a run nor a sweep directory (a folder of
            runs names the fix),
            or a verify directory has no ``report.json``; nothing at all to report.
    """
    from quadriga.rundir.loaded import is_run

    sections = []
    for d in map(Path, dirs):
        if not d.exists():
            raise ConfigError(
                f"'{d}' does not exist. Pass run directories (runs/NAME/TIMESTAMP) or sweep "
                "directories (sweeps/NAME-HASH); `ls runs sweeps` lists them."
            )
        if (d / "sweep.json").is_file():
            sections.append(collect_sweep(d))
        elif is_run(d):
            sections.append(collect_run(d))
        elif d.is_dir() and any(is_run(c) for c in d.iterdir()):
            raise ConfigError(
                f"'{d}' holds runs rather than being one; pass them, e.g. `quadriga report {d}/*`.",
            )
        elif (d / "report.json").is_file() or (d.is_dir() and any(d.rglob("report.json"))):
            raise ConfigError(
                f"'{d}' is the output of `quadriga verify`, not a run or sweep directory; pass it as "
                f"`--verify {d}`.",
            )
        else:
            raise ConfigError(
                f"'{d}' is neither a run directory (results.json) nor a sweep directory (sweep.json)."
            )
    runs = [Path(s["dir"]) for s in sections if s["kind"] == "run"]
    if len(runs) > 1:  # several runs: their summary first, as `quadriga compare` gives it
        sections.insert(0, collect_runs_summary(runs))
    claims = [c for v in verify for c in collect_claims(Path(v))]
    if not sections and not claims:
        if verify:
            raise ConfigError(
                f"nothing to report: the report.json under {', '.join(map(str, verify))} holds no claim "
                "records. Pass the output directory of a `quadriga verify` that ran claims.",
                key="--verify",
            )
        raise ConfigError("nothing to report: give run or sweep directories, or --verify DIR.")
    if title is None:
        names = [s["title"] for s in sections if s["kind"] != "summary"] + [
            f"claim {c['name']}" for c in claims
        ]
        title = "quadriga report: " + ", ".join(dict.fromkeys(names))
    return render_report(sections, claims, title)


def write_report(
    dirs: Sequence[Path], out: Path, *, verify: Sequence[Path] = (), title: str | None = None
) -> Path:
    """Write :func:`build_report`'s page to ``out`` (atomically) and return the path.

    Raises:
        ConfigError: as :func:`build_report`; ``out`` (``--out``) lies inside a run, sweep or verify
            directory given, is a directory, is an existing file that is not an ``.html`` page, or
            cannot be written. Nothing is written then.
    """
    from quadriga.fileio import atomic_write_text

    out = Path(out)
    _check_out(out, [*dirs, *verify])
    html = build_report(dirs, verify=verify, title=title)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out, html)
    except OSError as exc:
        raise ConfigError(
            f"cannot write '{out}' ({exc.strerror or exc}). Give --out a path in a writable directory.",
            key="--out",
        ) from exc
    return out


def _check_out(out: Path, given: Sequence[Path]) -> None:
    """Refuse an ``--out`` that would write into a reported directory or over a file that is not a page.

    Raises:
        ConfigError: naming ``--out``, the directory or file at stake and the fix.
    """
    target = out.resolve()
    for d in map(Path, given):
        root = (d.parent if d.is_file() else d).resolve()
        if target == root or root in target.parents:
            raise ConfigError(
                f"'{out}' lies inside '{d}', which is being reported; the page must not be written into "
                "a run, sweep or verify directory (it could replace one of its files). Give --out a path "
                "outside it, e.g. --out report.html.",
                key="--out",
            )
    if out.is_dir():
        raise ConfigError(f"'{out}' is a directory; give --out a file name such as report.html.", key="--out")
    if out.exists() and out.suffix.lower() != ".html":
        raise ConfigError(
            f"'{out}' exists and is not an .html page; `quadriga report` only replaces an earlier page. "
            "Give --out a new file name ending in .html.",
            key="--out",
        )
