"""Fragility: where a claim holds over a neighbourhood of nuisance settings (``verify --fragility``).

A claim declares ``fragility = {override key: [values]}`` (noise level, dimension, step size); the
claim is evaluated at every combination, each point as its own run with the same seeds, and the
report gives the verdict, the estimate and its interval at each point, the region where it holds,
and a figure. Each point's verdict is a separate test at the claim's level: the table describes
where the claim holds, it is not one test over the region.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from quadriga.claims.claim import Claim
from quadriga.claims.verdict import evaluate_claim

__all__ = ["fragility_points", "run_fragility", "toml_value"]


def toml_value(value: Any) -> str:
    """A value as TOML text for a ``--set`` override (``0.1``, ``true``, ``"text"``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def fragility_points(settings: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the settings, in the order declared: ``[{key: value}, ...]``."""
    keys = list(settings)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(settings[k] for k in keys))]


def run_fragility(
    claim: Claim, scale: str, out_dir: Path, registry: Any = None, *, on_point: Any = None
) -> dict[str, Any]:
    """Evaluate ``claim`` at every point of its fragility neighbourhood.

    Args:
        claim: a :class:`~quadriga.claims.Claim` with ``fragility``.
        scale: ``"smoke"`` (numbers at each point) or ``"paper"`` (a verdict at each point).
        out_dir: the claim's directory; point ``i`` runs in ``out_dir / f"point-{i}"``.
        registry: defaults to the process-wide one.
        on_point: optional callback ``(i, total, settings)`` before each point (progress).

    Returns:
        ``{settings: {key: [values]}, points: [{settings, status, estimate, low, high, n, method,
        summary}], holds: [settings where it passed], table (markdown), figures: {name: path}}``.
        A point that raises gets status ``error`` and its message as the summary.

    Raises:
        ConfigError: the claim declares no fragility neighbourhood.
    """
    from quadriga.errors import ConfigError

    if not claim.fragility:
        raise ConfigError(
            "this claim declares no fragility neighbourhood; give Claim(fragility={'KEY': [values]}).",
            key="fragility",
        )
    points = fragility_points(claim.fragility)
    rows = []
    for i, settings in enumerate(points):
        if on_point:
            on_point(i, len(points), settings)
        overrides = [f"{k}={toml_value(v)}" for k, v in settings.items()]
        row: dict[str, Any] = {"settings": settings}
        try:
            obs = claim.observations(scale, Path(out_dir) / f"point-{i}", registry, overrides=overrides)
            rec = evaluate_claim(claim, obs, scale)
            first = rec["comparisons"][0] if rec["comparisons"] else {}
            row.update(
                status=rec["status"],
                summary=rec["summary"],
                **{k: first.get(k, math.nan) for k in ("estimate", "low", "high", "n", "method")},
            )
        except Exception as exc:  # one failing point must not lose the others
            row.update(status="error", summary=f"{type(exc).__name__}: {exc}")
        rows.append(row)
    out: dict[str, Any] = {
        "settings": {k: list(v) for k, v in claim.fragility.items()},
        "points": rows,
        "holds": [r["settings"] for r in rows if r["status"] == "passed"],
        "table": _table(rows, list(claim.fragility)),
        "figures": {},
    }
    fig = _figure(claim, rows, list(claim.fragility), Path(out_dir) / "fragility.png", scale)
    if fig is not None:
        out["figures"]["fragility"] = str(fig)
    return out


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) and math.isfinite(v) else str(v)


def _table(rows: list[dict[str, Any]], keys: list[str]) -> str:
    head = [*keys, "status", "estimate", "interval", "n"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        span = f"[{_fmt(r.get('low'))}, {_fmt(r.get('high'))}]" if "low" in r else "-"
        cells = [*(str(r["settings"][k]) for k in keys), r["status"], _fmt(r.get("estimate", "-")), span]
        lines.append("| " + " | ".join([*cells, str(r.get("n", "-"))]) + " |")
    return "\n".join(lines)


_COLOURS = {"passed": "#1a9850", "refuted": "#d73027", "inconclusive": "#fdae61", "ran": "#4575b4"}


def _figure(claim: Claim, rows: list[dict[str, Any]], keys: list[str], path: Path, scale: str) -> Path | None:
    """One key: estimate and interval against the setting, coloured by verdict, the boundary drawn.

    Two keys: a grid of verdicts. More keys: no figure (the table says it all).
    """
    if len(keys) > 2 or not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    effect = claim.effect
    if len(keys) == 1:
        _draw_estimates(ax, effect, rows, keys[0])
    else:
        _draw_verdict_grid(ax, rows, *keys)
    scale_word = "a verdict per setting" if scale == "paper" else "smoke scale: numbers only"
    ax.set_title(f"Where does '{effect.describe()}' hold? ({scale_word})", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _draw_estimates(ax: Any, effect: Any, rows: list[dict[str, Any]], key: str) -> None:
    """Each setting of ``key``: estimate and interval, coloured by verdict; the claimed boundaries dashed."""
    labels = [str(r["settings"][key]) for r in rows]
    for i, r in enumerate(rows):
        est, lo, hi = (r.get(k, math.nan) for k in ("estimate", "low", "high"))
        colour = _COLOURS.get(r["status"], "#777777")
        if isinstance(est, float) and math.isfinite(est):
            err = [[est - lo if math.isfinite(lo) else 0], [hi - est if math.isfinite(hi) else 0]]
            ax.errorbar([i], [est], yerr=err, fmt="o", color=colour, capsize=4, label=r["status"])
    for bound in effect.bounds:
        if math.isfinite(bound):
            ax.axhline(bound, color="black", linestyle="--", linewidth=1)
            ax.annotate(
                f"claimed boundary {bound:g}",
                (0, bound),
                xycoords=("axes fraction", "data"),
                xytext=(4, 3),
                textcoords="offset points",
                fontsize=8,
            )
    ax.set_xticks(range(len(rows)), labels)
    ax.set_xlabel(key)
    ax.set_ylabel(f"{effect.statistic_name} ({int(100 * effect.level)}% interval)")
    handles, names = ax.get_legend_handles_labels()
    unique = dict(zip(names, handles, strict=False))
    if unique:
        ax.legend(unique.values(), unique.keys(), title="verdict", fontsize=8)


def _draw_verdict_grid(ax: Any, rows: list[dict[str, Any]], a: str, b: str) -> None:
    """A grid over the settings of keys ``a`` (x) and ``b`` (y): cells coloured by verdict, with estimates."""
    from matplotlib.patches import Rectangle

    xs = list(dict.fromkeys(r["settings"][a] for r in rows))
    ys = list(dict.fromkeys(r["settings"][b] for r in rows))
    for r in rows:
        x, y = xs.index(r["settings"][a]), ys.index(r["settings"][b])
        ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, color=_COLOURS.get(r["status"], "#777777")))
        ax.text(x, y, f"{r['status']}\n{_fmt(r.get('estimate', ''))}", ha="center", va="center", fontsize=8)
    ax.set_xlim(-0.5, len(xs) - 0.5)
    ax.set_ylim(-0.5, len(ys) - 0.5)
    ax.set_xticks(range(len(xs)), [str(x) for x in xs])
    ax.set_yticks(range(len(ys)), [str(y) for y in ys])
    ax.set_xlabel(a)
    ax.set_ylabel(b)
