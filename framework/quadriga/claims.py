"""Paper claims as runnable checks, and ``quadriga verify``.

A plugin registers each headline claim of its paper as a function::

    def variance_reduction(scale: str, *, out_dir: pathlib.Path) -> ClaimResult: ...

    registry.add_claim("srmc-variance-reduction", "quadriga_srmc.claims:variance_reduction",
                       summary="SR-MALA's MSE is below tuned MALA's", paper="... Table 2")

``scale`` is ``"smoke"`` (seconds; run by the test suite, checks that the numbers are
produced and finite) or ``"paper"`` (the full check, minutes). ``out_dir`` is an
existing directory for the claim's runs and figures. The function returns a
:class:`ClaimResult`; :func:`verify` runs claims and writes a markdown report.
"""

from __future__ import annotations

import json
import math
import time
import traceback
from pathlib import Path
from typing import Any

import attrs

from quadriga.errors import QuadrigaError, UnknownComponentError, suggest

__all__ = ["SCALES", "ClaimResult", "select_claims", "verify"]

SCALES = ("smoke", "paper")


@attrs.define(kw_only=True)
class ClaimResult:
    """The outcome of one claim.

    Attributes:
        passed: whether the measured numbers support the claim at this scale.
        summary: one or two sentences with the key numbers, e.g.
            ``"median MSE ratio 0.61 [0.52, 0.70] (claim: < 1)"``.
        numbers: the measured numbers ``{name: float | str}`` (JSON-serialisable).
        figures: ``{name: path to a PNG}`` (relative to ``out_dir`` or absolute).
        table: optional markdown table with the per-setting numbers.
    """

    passed: bool
    summary: str
    numbers: dict[str, Any] = attrs.field(factory=dict)
    figures: dict[str, str] = attrs.field(factory=dict)
    table: str = ""


def select_claims(registry: Any, what: str) -> list[Any]:
    """Claims of a distribution (``quadriga-srmc``), a plugin name, or one claim by name.

    Raises:
        UnknownComponentError: nothing matches; close matches are suggested.
    """
    claims = registry.claims()
    chosen = [c for c in claims if what in (c.distribution, c.plugin, c.name)]
    if not chosen:
        names = {c.name for c in claims} | {c.distribution for c in claims}
        hint = suggest(what, names) or " Run `quadriga list --kind claim` to see the claims installed."
        raise UnknownComponentError(f"no distribution or claim named '{what}'.{hint}")
    return chosen


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if hasattr(value, "item"):
        return value.item()
    return value


def verify(
    registry: Any, what: str, *, scale: str = "smoke", out_dir: Path, on_start: Any = None, on_end: Any = None
) -> tuple[list[dict[str, Any]], Path]:
    """Run the claims selected by ``what`` and write ``report.md`` and ``report.json`` into ``out_dir``.

    Args:
        registry: the :class:`~quadriga.registry.Registry`.
        what: a distribution, plugin or claim name.
        scale: ``"smoke"`` or ``"paper"``.
        out_dir: where each claim gets a sub-directory and the report is written.
        on_start, on_end: optional callbacks ``(spec)`` / ``(spec, record)`` for progress display.

    Returns:
        ``(records, report_path)``: one record per claim with ``name``, ``status``
        (``passed``/``failed``/``error``), ``summary``, ``numbers``, ``figures``, ``seconds``.

    Raises:
        QuadrigaError: for an unknown scale; UnknownComponentError for an unknown name.
    """
    if scale not in SCALES:
        raise QuadrigaError(f"unknown scale '{scale}'; use one of {', '.join(SCALES)}.")
    chosen = select_claims(registry, what)
    out_dir.mkdir(parents=True, exist_ok=True)
    records = []
    for spec in chosen:
        if on_start:
            on_start(spec)
        claim_dir = out_dir / spec.name
        claim_dir.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        record: dict[str, Any] = {
            "name": spec.name,
            "distribution": spec.distribution,
            "claim": spec.summary,
            "paper": spec.paper,
            "scale": scale,
        }
        try:
            fn = registry.load_claim(spec)
            result = fn(scale, out_dir=claim_dir)
            if not isinstance(result, ClaimResult):
                raise TypeError(f"claim returned {type(result).__name__}, expected ClaimResult")
            figures = {}
            for key, path in result.figures.items():
                p = Path(path)
                figures[key] = str(p if p.is_absolute() else claim_dir / p)
            record.update(
                status="passed" if result.passed else "failed",
                summary=result.summary,
                numbers={k: _jsonable(v) for k, v in result.numbers.items()},
                figures=figures,
                table=result.table,
            )
        except Exception as exc:
            record.update(
                status="error",
                summary=f"{type(exc).__name__}: {exc}",
                numbers={},
                figures={},
                table="",
                traceback=traceback.format_exc(),
            )
        record["seconds"] = round(time.perf_counter() - start, 2)
        records.append(record)
        if on_end:
            on_end(spec, record)
    report = out_dir / "report.md"
    _write_report(report, records, what, scale)
    from quadriga.runs import atomic_write_text

    atomic_write_text(out_dir / "report.json", json.dumps(records, indent=2, default=str))
    return records, report


def _write_report(path: Path, records: list[dict[str, Any]], what: str, scale: str) -> None:
    from quadriga.runs import atomic_write_text

    lines = [
        f"# quadriga verify {what} (scale: {scale})",
        "",
        "| claim | status | summary | seconds |",
        "|---|---|---|---|",
    ]
    for r in records:
        summary = str(r["summary"]).replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r['name']} | {r['status']} | {summary} | {r['seconds']} |")
    for r in records:
        lines += ["", f"## {r['name']}", "", f"*{r['claim']}*", ""]
        if r.get("paper"):
            lines += [f"Source: {r['paper']}", ""]
        lines += [f"**{r['status']}** - {r['summary']}", ""]
        if r["numbers"]:
            lines += ["| number | value |", "|---|---|"]
            lines += [
                f"| {k} | {v:.6g} |" if isinstance(v, float) else f"| {k} | {v} |"
                for k, v in r["numbers"].items()
            ]
            lines.append("")
        if r.get("table"):
            lines += [r["table"], ""]
        for key, fig in r["figures"].items():
            try:
                rel = Path(fig).relative_to(path.parent)
            except ValueError:
                rel = Path(fig)
            lines += [f"![{key}]({rel.as_posix()})", ""]
        if r.get("traceback"):
            lines += ["```", r["traceback"], "```", ""]
    atomic_write_text(path, "\n".join(lines) + "\n")
