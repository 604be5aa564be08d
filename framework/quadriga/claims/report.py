"""``quadriga verify``: selecting claims, running them, and writing ``report.md`` and ``report.json``."""

from __future__ import annotations

import datetime as dt
import json
import math
import time
import traceback
from pathlib import Path
from typing import Any

import attrs

from quadriga.claims import record as _record
from quadriga.claims.claim import Claim
from quadriga.claims.model import SCALES
from quadriga.claims.run import markdown_table, shared_runs
from quadriga.claims.verdict import _fmt, comparison_cells, evaluate_claim
from quadriga.errors import ConfigError, QuadrigaError, UnknownComponentError, suggest

__all__ = ["SMOKE_NOTE", "comparison_note", "select_claims", "verify"]

#: what a smoke-scale record is: the first line of its report, and the HTML page's note
SMOKE_NOTE = "Smoke scale: numbers only, not verdicts (no verdict, p-value or MDE at this scale)"


def _statistic_name(record: dict[str, Any]) -> str:
    """The statistic's name (``slope``, ``ratio``) of a record's effect (older records: its statistic)."""
    effect = record.get("effect") or {}
    return str(effect.get("statistic_name") or effect.get("statistic") or "estimate")


def comparison_note(record: dict[str, Any], scale: str) -> str:
    """The sentence under a record's comparison table: how p was computed (paper), or that smoke has none."""
    if scale != "paper":
        return SMOKE_NOTE + "."
    methods = sorted({str(c.get("p_method", "")) for c in record.get("comparisons", [])} - {""})
    how = "; ".join(methods) or "normal approximation"
    text = (
        f"p (claim): one-sided p-value of 'the claim fails' ({how}): it is below (1 - level) / 2 "
        "exactly when the interval lies on the claimed side. Values below 1e-04 are shown as < 1e-04."
    )
    if record.get("holm"):
        text += (
            " p-values are Holm-adjusted over the comparisons of this claim; the Holm interval is the "
            "same method at the level that makes it agree with the adjusted p-value."
        )
    for check in record.get("preconditions") or []:
        mark = "holds" if check.get("holds") else "FAILS"
        text += f" Precondition '{check.get('description')}' {mark}"
        text += f" ({check['diagnostic']})." if check.get("diagnostic") else "."
    return text


def _catalogue_hint(registry: Any, what: str) -> str:
    """The install command when ``what`` is a claim or distribution of a catalogued plugin that is absent.

    ``""`` when the catalogue does not know ``what`` (or cannot be read).
    """
    if not hasattr(registry, "catalogue_note"):
        return ""
    note = str(registry.catalogue_note(what, ("claim",)))
    if note:
        return note
    try:
        from quadriga.catalogue import catalogue

        entry = catalogue().get(what)
    except Exception:  # the hint must never hide the error it decorates
        return ""
    if entry is None or not entry.names.get("claim"):
        return ""
    return f" {what} is not installed; install it from a clone of the repository: {entry.install}"


def select_claims(registry: Any, what: str) -> list[Any]:
    """Claims of a distribution (``quadriga-srmc``), a plugin name, or one claim by name.

    Raises:
        UnknownComponentError: nothing matches; close matches are suggested.
    """
    claims = registry.claims()
    chosen = [c for c in claims if what in (c.distribution, c.plugin, c.name)]
    if not chosen:
        installed = {getattr(st, "distribution", "") for st in getattr(registry, "plugins", {}).values()}
        if what in installed or what in getattr(registry, "plugins", {}):
            raise UnknownComponentError(
                f"'{what}' is installed but registers no claims. Run `quadriga list --kind claim` "
                "to see the claims installed."
            )
        names = {c.name for c in claims} | {c.distribution for c in claims}
        hint = _catalogue_hint(registry, what) or suggest(what, names)
        hint = hint or " Run `quadriga list --kind claim` to see the claims installed."
        raise UnknownComponentError(f"no distribution or claim named '{what}'.{hint}")
    return chosen


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item"):
        return value.item()
    return value


def verify(
    registry: Any,
    what: str,
    *,
    scale: str = "smoke",
    out_dir: Path,
    record: bool = False,
    mode: str = "verdict",
    stale: bool = False,
    on_start: Any = None,
    on_end: Any = None,
) -> tuple[list[dict[str, Any]], Path]:
    """Run the claims selected by ``what`` and write ``report.md`` and ``report.json`` into ``out_dir``.

    Args:
        registry: the :class:`~quadriga.registry.Registry`.
        what: a distribution, plugin or claim name; ``""`` with ``stale`` means every claim.
        scale: ``"smoke"`` or ``"paper"``.
        out_dir: where each claim gets a sub-directory and the report is written.
        record: at paper scale, keep each verdict in the plugin's ``claims_record.json`` (with
            ``mode="plan"``: keep the pilot beside it).
        mode: ``"verdict"`` (run the claim), ``"plan"`` (run the plan's pilot and size the paper
            scale: :func:`~quadriga.claims.plan.pilot`) or ``"fragility"`` (evaluate the claim over
            its neighbourhood of nuisance settings: :func:`~quadriga.claims.fragility.run_fragility`).
        stale: only the selected claims whose recorded verdict is stale (its fingerprint no longer
            matches: :func:`~quadriga.claims.fingerprint.stale_reason`).
        on_start: optional callback ``(spec)`` called before each claim runs (progress display).
        on_end: optional callback ``(spec, record)`` called after each claim (progress display).

    Claims that run the same pipeline at the same scale (same arms and stages repeated, same
    overrides and seed) share one run (:func:`~quadriga.claims.run.shared_runs`).

    Returns:
        ``(records, report_path)``: one record per claim with ``name``, ``status`` (one of
        :data:`STATUSES`), ``summary``, ``comparisons``, ``numbers``, ``figures``, ``seconds``, ``date``.

    Raises:
        QuadrigaError: for an unknown scale, or ``record`` at smoke scale; UnknownComponentError
            for an unknown name.
    """
    _check_mode(scale, mode, record)
    chosen = select_claims(registry, what) if what else list(registry.claims())
    if stale:
        from quadriga.claims.fingerprint import stale_reason

        chosen = [spec for spec in chosen if stale_reason(spec)]
    out_dir = Path(out_dir)
    _check_out_dir(out_dir)
    records: list[dict[str, Any]] = []
    try:
        with shared_runs():  # claims on one pipeline and scale share one run
            for spec in chosen:
                if on_start:
                    on_start(spec)
                rec = _verify_one(registry, spec, mode, scale, _fresh_claim_dir(out_dir / spec.name))
                records.append(rec)
                if on_end:
                    on_end(spec, rec)
    except KeyboardInterrupt:  # keep what finished: the report (and records) of the claims done so far
        _keep(registry, records, record, mode)
        done = {r["name"] for r in records}
        records += [_interrupted(spec, scale) for spec in chosen if spec.name not in done]
        _write_outputs(out_dir, records, what, scale)
        raise
    report = _write_outputs(out_dir, records, what, scale)
    _keep(registry, records, record, mode)
    return records, report


def _check_mode(scale: str, mode: str, record: bool) -> None:
    """Refuse an unknown scale or mode, and ``record`` where nothing would be kept.

    Raises:
        QuadrigaError: saying which and the fix.
    """
    if scale not in SCALES:
        raise QuadrigaError(f"unknown scale '{scale}'; use one of {', '.join(SCALES)}.")
    if mode not in ("verdict", "plan", "fragility"):
        raise QuadrigaError(f"unknown mode '{mode}'; use verdict, plan or fragility.")
    if record and scale != "paper" and mode != "plan":
        raise QuadrigaError("--record keeps paper-scale verdicts only; add --scale paper.")
    if record and mode == "fragility":
        raise QuadrigaError("--record keeps verdicts and pilots, not fragility maps; drop --record.")


def _verify_one(registry: Any, spec: Any, mode: str, scale: str, claim_dir: Path) -> dict[str, Any]:
    """One claim's record (JSON-ready): who it is, then what :func:`_run_claim` gives, or its error."""
    start = time.perf_counter()
    rec: dict[str, Any] = {**_identity(spec, scale), "version": _record._version(spec.distribution)}
    try:
        target = registry.load_claim(spec)
        if not isinstance(target, Claim):
            raise QuadrigaError(
                f"{spec.name} points to {spec.target}, a {type(target).__name__}; "
                "register a quadriga.claims.Claim."
            )
        rec.update(_run_claim(target, spec, mode, scale, claim_dir, registry))
    except Exception as exc:
        rec.update(
            status="error",
            summary=f"{type(exc).__name__}: {exc}",
            numbers={},
            figures={},
            table="",
            comparisons=[],
            traceback=traceback.format_exc(),
        )
    rec["seconds"] = round(time.perf_counter() - start, 2)
    return _jsonable(rec)


def _keep(registry: Any, records: list[dict[str, Any]], record: bool, mode: str) -> None:
    """With ``--record``: the pilots (``--plan``) or the paper-scale verdicts into the plugins' records."""
    if record and mode == "plan":
        _record.record_pilots(registry, [r for r in records if r.get("pilot")])
    elif record:
        _record.record_verdicts(
            registry, [r for r in records if r["status"] in ("passed", "refuted", "inconclusive")]
        )


def _write_outputs(out_dir: Path, records: list[dict[str, Any]], what: str, scale: str) -> Path:
    """Write ``report.md`` and ``report.json`` of ``records`` into ``out_dir``; return the report's path."""
    from quadriga.runs import atomic_write_text

    report = out_dir / "report.md"
    _write_report(report, records, what, scale)
    atomic_write_text(out_dir / "report.json", json.dumps(records, indent=2, default=str))
    return report


def _identity(spec: Any, scale: str) -> dict[str, Any]:
    """The fields that name a claim's record: claim, distribution, paper, scale and today's date (UTC)."""
    return {
        "name": spec.name,
        "distribution": spec.distribution,
        "claim": spec.summary,
        "paper": spec.paper,
        "scale": scale,
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d"),
    }


def _interrupted(spec: Any, scale: str) -> dict[str, Any]:
    """The record of a claim an interrupt (Ctrl-C, SIGTERM) stopped or kept from starting: no numbers."""
    return {
        **_identity(spec, scale),
        "status": "interrupted",
        "summary": "interrupted before it finished; no numbers",
        "comparisons": [],
        "numbers": {},
        "figures": {},
        "seconds": None,
    }


#: the files ``verify`` writes at the top of its ``--out`` directory (beside one directory per claim)
REPORT_FILES = ("report.md", "report.json")


def _made_by_verify(claim_dir: Path) -> bool:
    """Whether the directory ``claim_dir`` holds only what verify writes for a claim.

    That is its ``run``/``point-*`` run directories (each with ``status.json`` or, when it was killed
    before writing one, its lock file), figures and tables (``.png``, ``.json``, ``.md``), or nothing.
    """
    from quadriga.fileio import LOCK

    def run_dir(p: Path) -> bool:
        # a run directory has status.json; one killed before its first status write has only
        # its lock (and pipeline.toml)
        return p.is_dir() and ((p / "status.json").is_file() or (p / LOCK).is_file())

    if claim_dir.is_symlink() or not claim_dir.is_dir():
        return False
    return all(run_dir(p) or p.suffix in (".png", ".json", ".md") for p in claim_dir.iterdir())


def _check_out_dir(out_dir: Path) -> None:
    """Make ``out_dir``, refusing a file or a directory that is not an earlier verify's output.

    An earlier verify's directory (only :data:`REPORT_FILES` and claim directories of
    :func:`_made_by_verify`) is written into again: its claims are replaced (:func:`_fresh_claim_dir`).

    Raises:
        ConfigError: ``out_dir`` is a file, cannot be made, or holds anything else (a run, a sweep,
            a user's files), naming what is there (key ``--out``).
    """
    from quadriga.rundir import make_dir, refuse_other_files

    try:
        entries = list(out_dir.iterdir()) if out_dir.is_dir() else []
    except OSError:
        entries = []
    if not all(p.name in REPORT_FILES if p.is_file() else _made_by_verify(p) for p in entries):
        refuse_other_files(
            out_dir, "an earlier verify's output", "the report", ", or the --out of an earlier verify"
        )
    make_dir(out_dir, "--out")


def _fresh_claim_dir(claim_dir: Path) -> Path:
    """An empty ``claim_dir``: what an earlier verify into the same ``--out`` left there is replaced.

    A verify run twice into one directory (or re-run after it was killed) starts the claim afresh
    instead of failing on its earlier run directory. Only a directory that verify made is removed
    (one holding its ``run``/``point-*`` run directories, each with ``status.json`` or, when it was
    killed before writing one, its lock file; figures; or nothing), and only when none
    of its runs is still running (:func:`quadriga.fileio.run_alive`).

    Raises:
        ConfigError: ``claim_dir`` holds files verify did not write, or a run another process is
            running (it is left untouched).
    """
    import shutil

    from quadriga.fileio import run_alive

    if claim_dir.is_dir() and any(claim_dir.iterdir()):
        if not _made_by_verify(claim_dir):
            raise ConfigError(
                f"'{claim_dir}' holds files that quadriga verify did not write; choose another --out "
                "directory.",
                key="--out",
            )
        busy = [p for p in sorted(claim_dir.iterdir()) if p.is_dir() and run_alive(p)]
        if busy:  # a verify still running there (a killed one's runs are not alive: replaced)
            raise ConfigError(
                f"'{busy[0]}' is being run by another quadriga process (a verify still running); wait "
                "for it to finish, or choose another --out directory.",
                key="--out",
            )
        shutil.rmtree(claim_dir)
    claim_dir.mkdir(parents=True, exist_ok=True)
    return claim_dir


def _run_claim(
    claim: Claim, spec: Any, mode: str, scale: str, claim_dir: Path, registry: Any
) -> dict[str, Any]:
    """One declared claim in ``mode``: its record's fields (status, summary, comparisons, ...)."""
    from quadriga.claims.fingerprint import fingerprint

    fp = {
        "fingerprint": fingerprint(spec, claim.libraries),
        "effect": {
            **attrs.asdict(claim.effect),
            "claimed": claim.effect.describe(),
            "statistic_name": claim.effect.statistic_name,
        },
    }
    if mode == "plan":
        from quadriga.claims.plan import pilot

        out = pilot(claim, claim_dir, registry)
        rows = [
            [r["group"] or "-", r["arm"], r["baseline"] or "-", r["estimate"], r["sd"], r["n_needed"]]
            for r in out["comparisons"]
        ]
        table = markdown_table(["group", "arm", "baseline", "pilot estimate", "sd", "n needed"], rows)
        status = "ran" if out["enough"] is None else ("planned" if out["enough"] else "underpowered")
        return dict(
            status=status,
            summary=out["summary"],
            pilot=out,
            comparisons=[],
            numbers={},
            figures={},
            table=table,
            **fp,
        )
    if mode == "fragility":
        from quadriga.claims.fragility import run_fragility

        out = run_fragility(claim, scale, claim_dir, registry)
        where = "; ".join(", ".join(f"{k}={v}" for k, v in p.items()) for p in out["holds"]) or "none of them"
        k = len(out["points"])
        summary = f"claim: {claim.effect.describe()}; over {k} settings it holds at: {where}"
        if scale != "paper":
            summary = f"claim: {claim.effect.describe()}; {k} points at smoke scale: numbers, no verdicts"
        return dict(
            status="ran",
            summary=summary,
            fragility=out,
            comparisons=[],
            numbers={},
            figures=out["figures"],
            table=out["table"],
            **fp,
        )
    obs = claim.observations(scale, claim_dir, registry)
    return {**evaluate_claim(claim, obs, scale), **fp}


def number_rows(numbers: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """The rows of a report's ``number | value`` table, one readable cell per number.

    A scalar prints as itself (4 significant digits); a mapping (per arm, say) becomes one row per
    key, named ``"<name>/<key>"``; a list of per-replicate values is summarised as
    ``"mean 0.512 (n = 5; 0.41 to 0.63)"`` rather than printed raw (``report.json`` keeps the list).
    A pair under a name ending in ``_ci`` or ``_interval`` is an interval, not two replicates, and
    prints as ``"[0.41, 0.63]"``.

    Args:
        numbers: a claim record's ``numbers`` (:class:`~quadriga.claims.model.Observations`).
        prefix: the name of the enclosing mapping, for nested values.
    """
    rows: list[tuple[str, str]] = []
    for key, value in numbers.items():
        name = f"{prefix}/{key}" if prefix else str(key)
        if isinstance(value, dict):
            rows += number_rows(value, name)
        elif isinstance(value, (list, tuple)):
            finite = [float(v) for v in value if isinstance(v, (int, float)) and math.isfinite(v)]
            if len(value) == 2 and name.endswith(("_ci", "_interval")):
                rows.append((name, f"[{_fmt(value[0])}, {_fmt(value[1])}]"))
            elif len(finite) == len(value) and len(finite) > 1:
                mean = sum(finite) / len(finite)
                span = f"{_fmt(min(finite))} to {_fmt(max(finite))}"
                rows.append((name, f"mean {_fmt(mean)} (n = {len(finite)}; {span})"))
            else:
                rows.append((name, ", ".join(_fmt(v) for v in value) or "-"))
        else:
            rows.append((name, _fmt(value)))
    return rows


def _write_report(path: Path, records: list[dict[str, Any]], what: str, scale: str) -> None:
    from quadriga.runs import atomic_write_text

    lines = [f"# quadriga verify {what} (scale: {scale})", ""]
    stopped = [r["name"] for r in records if r["status"] == "interrupted"]
    if stopped:
        lines += [
            f"**Interrupted** before {len(stopped)} of {len(records)} claims finished "
            f"({', '.join(stopped)}): they have status **interrupted** and no numbers.",
            "",
        ]
    if scale != "paper":
        ran = "a claim that finishes has status **ran**" if stopped else "status **ran**"
        lines += [f"{SMOKE_NOTE}; {ran}.", ""]
    lines += ["| claim | status | summary | seconds |", "|---|---|---|---|"]
    for r in records:
        summary = str(r["summary"]).replace("|", "\\|").replace("\n", " ")
        seconds = "-" if r.get("seconds") is None else r["seconds"]
        lines.append(f"| {r['name']} | {r['status']} | {summary} | {seconds} |")
    for r in records:
        lines += ["", f"## {r['name']}", "", f"*{r['claim']}*", ""]
        if r.get("paper"):
            lines += [f"Source: {r['paper']}", ""]
        lines += [f"**{r['status']}** - {r['summary']}", ""]
        if r.get("effect"):
            lines += [f"Effect: {r['effect']['quantity']}; claimed {r['effect']['claimed']}.", ""]
        if r.get("comparisons"):
            name = _statistic_name(r)
            rows = [comparison_cells(c, name, scale) for c in r["comparisons"]]
            if all(row["group"] == "-" for row in rows):
                rows = [{k: v for k, v in row.items() if k != "group"} for row in rows]
            lines += ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
            lines += ["| " + " | ".join(v.replace("|", "\\|") for v in row.values()) + " |" for row in rows]
            lines.append("")
            lines += [comparison_note(r, scale), ""]
        for flag in r.get("tuning_flags", []):
            lines += [f"> {flag}", ""]
        if r.get("numbers"):
            lines += ["| number | value |", "|---|---|"]
            lines += [f"| {k} | {cell} |" for k, cell in number_rows(r["numbers"])]
            lines.append("")
        if r.get("table"):
            lines += [r["table"], ""]
        for key, fig in r.get("figures", {}).items():
            try:
                rel = Path(fig).relative_to(path.parent)
            except ValueError:
                rel = Path(fig)
            lines += [f"![{key}]({rel.as_posix()})", ""]
        if r.get("traceback"):
            lines += ["```", r["traceback"], "```", ""]
    atomic_write_text(path, "\n".join(lines) + "\n")
