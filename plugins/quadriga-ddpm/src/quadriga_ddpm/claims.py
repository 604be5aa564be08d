"""Claim ``ddpm-gmm-dimension-free``: DDPM error against T collapses across d and K.

Li, Cai & Wei 2025 (Theorem 1): with exact scores, DDPM with their schedule reaches TV <= eps in
O~(1/eps) steps for (approximate) isotropic Gaussian mixtures, independently of d and K.
Checked on sphere mixtures (|mu_k| = 6, sigma in {0.5, 1, 2}):

* K = 1: exact KL and TV of the output law (mean/variance recursion), every (sigma, d, T);
* K > 1: weight error, 1-D W1 along the mean directions, radial spread error, n samples each.

Slopes of sampled metrics are fitted only on T values whose error exceeds twice the Monte-Carlo
floor (the mean of the metric over ``FLOOR_DRAWS`` = 10 independent draws of n exact samples,
:func:`replicated_floors`), and count ("resolved") only with at least ``MIN_SLOPE_POINTS`` = 4
such T values (of 6 at paper scale); exact K = 1 slopes need 2. Unresolved slopes are reported
as "n/r", never fitted.

Passes (paper scale) when, for the theory schedule,
(a) the median fitted slope of log TV against log T at K = 1, sigma != 1, lies in [-1.5, -0.5], and
(b1) the median of the resolved ``direction_w1`` slopes at K > 1 lies in [-1.5, -0.5], and
(b2) for every (sigma, K > 1) the spread (max - min over d) of the resolved ``direction_w1``
     slopes is at most 0.5; a (sigma, K) with fewer than 2 resolved d cannot be tested.
Verdict: ``failed`` if a measured criterion fails; otherwise ``not enough resolved points`` if
(a), (b1) or (b2) could not be evaluated for every case; otherwise ``passed``.
At smoke scale it passes when every number is finite.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

import attrs

from quadriga.claims import Claim, Effect, Observations, Plan, Scale, Tuning

__all__ = [
    "FLOOR_DRAWS",
    "LEVEL_RATIO_MAX",
    "SLOPE_BAND",
    "SPREAD_MAX",
    "SlopeAnalysis",
    "analyse",
    "dimension_free",
    "level_ratios",
    "replicated_floors",
    "run_grid",
]

#: independent exact-sample draws averaged into each sampled metric's Monte-Carlo floor
FLOOR_DRAWS = 10

#: largest accepted ratio of the exact K = 1 TV at the largest T between the largest and the smallest d
LEVEL_RATIO_MAX = 2.0

#: accepted range of the median log-log slope (criteria a and b1).
SLOPE_BAND = (-1.5, -0.5)
#: largest accepted max - min over d of the resolved slopes (criterion b2).
SPREAD_MAX = 0.5


def replicated_floors(
    rows: list[dict[str, Any]], n: int, *, draws: int = FLOOR_DRAWS, seed: int = 0
) -> list[dict[str, Any]]:
    """Replace each sampled row's one-draw floor by the mean of the metric over ``draws`` exact draws.

    The floor of a sampled metric (weight error, radial error, direction W1) is its value on ``n``
    exact samples of the target: the Monte-Carlo error a perfect sampler would show. One draw is
    itself noisy (its relative spread is of order 1 for W1), so the rule "error above twice the
    floor" flipped with the draw. Here, for every (sigma, K, d) cell, ``draws`` independent sets of
    ``n`` exact samples (seeds derived from ``(seed, "floor/<d>/<K>/<sigma>/<r>")``; the component
    means are the study's, from ``(seed, "means/<d>/<K>")``) give the floor as their mean, with
    ``floor_se`` (standard error of that mean, :func:`quadriga.stats.mean_se`) and ``floor_draws``.

    Args:
        rows: study rows; rows with ``K == 1`` (exact, floor 0) are returned unchanged.
        n: samples per draw (the study's ``n``); draws: exact draws per cell (at least 2).
        seed: the study's root seed.

    Returns:
        New rows (the input is not modified), each sampled row with ``floor``, ``floor_se`` and
        ``floor_draws``.

    Raises:
        ConfigError: ``draws < 2`` or ``n < 1``.

    Source: test design for Li, Cai & Wei 2025 (research note section c); the floor as a replicated
    Monte-Carlo mean is standard (Robert & Casella 2004, ch. 3).
    """
    from quadriga.errors import ConfigError
    from quadriga.seeding import derive_seed, make_generator
    from quadriga.stats import mean_se
    from quadriga_ddpm.metrics import mixture_metrics
    from quadriga_ddpm.targets import SphereMixture

    if draws < 2:
        raise ConfigError(f"draws must be at least 2 to replicate the floor, got {draws}.", key="draws")
    if n < 1:
        raise ConfigError(f"n must be a positive sample count, got {n}.", key="n")
    cells = sorted({(r["sigma"], r["K"], r["d"]) for r in rows if r["K"] > 1})
    floors: dict[tuple[float, int, int], dict[str, tuple[float, float]]] = {}
    for sigma, k, d in cells:
        target = SphereMixture(dim=d, num_components=k, scale=sigma)
        target.prepare(generator=make_generator(derive_seed(seed, f"means/{d}/{k}")))
        per_draw = [
            mixture_metrics(
                target,
                target.sample(n, generator=make_generator(derive_seed(seed, f"floor/{d}/{k}/{sigma}/{r}"))),
            )
            for r in range(draws)
        ]
        floors[(sigma, k, d)] = {m: mean_se([v[m] for v in per_draw]) for m in per_draw[0]}
    out = []
    for r in rows:
        key = (r["sigma"], r["K"], r["d"])
        if r["K"] > 1 and r["metric"] in floors.get(key, {}):
            mean, se = floors[key][r["metric"]]
            r = {**r, "floor": mean, "floor_se": se, "floor_draws": draws}
        out.append(r)
    return out


def run_grid(scale: str, *, seed: int = 0, floor_draws: int = FLOOR_DRAWS) -> list[dict[str, Any]]:
    """All rows (exact K = 1 and sampled K > 1) of the study at ``scale`` (smoke, default or paper).

    The sampled rows' floors are replicated over ``floor_draws`` exact draws (:func:`replicated_floors`);
    the sampled cells derive their streams from ``make_generator(seed)`` (seed 0: the recorded numbers).
    """
    from quadriga.seeding import make_generator
    from quadriga_ddpm.study import GRIDS, exact_rows, sampled_rows

    g = GRIDS[scale]
    rows = exact_rows(g["sigmas"] if scale == "smoke" else (0.5, 1.0, 2.0), g["dims"], g["steps"])
    sampled = sampled_rows(
        g["sigmas"], g["ks"], g["dims"], g["steps"], g["n"], generator=make_generator(seed)
    )
    return rows + replicated_floors(sampled, g["n"], draws=floor_draws, seed=seed)


def _figures(rows: list[dict[str, Any]], out_dir: Path) -> dict[str, str]:
    from matplotlib.figure import Figure

    files = {}
    dims = sorted({r["d"] for r in rows})
    colors = {d: f"C{i}" for i, d in enumerate(dims)}
    panels = [
        ("k1_exact", ["kl", "tv"], [1]),
        *[
            (m, [m], sorted({r["K"] for r in rows if r["K"] > 1}))
            for m in ("direction_w1", "radial_error", "weight_error")
        ],
    ]
    for name, metrics, ks in panels:
        sigmas = sorted({r["sigma"] for r in rows if r["K"] in ks and r["metric"] in metrics})
        cols = [(m, k) for m in metrics for k in ks]
        if not sigmas or not cols:
            continue
        fig = Figure(figsize=(3.6 * len(cols), 2.9 * len(sigmas)), layout="constrained")
        axes = fig.subplots(len(sigmas), len(cols), squeeze=False)
        for i, s in enumerate(sigmas):
            for j, (m, k) in enumerate(cols):
                ax = axes[i][j]
                for d in dims:
                    for sched, ls in (("theory", "-"), ("linear", "--")):
                        rs = sorted(
                            (
                                r
                                for r in rows
                                if (r["sigma"], r["K"], r["d"], r["metric"], r["schedule"])
                                == (s, k, d, m, sched)
                            ),
                            key=lambda r: r["T"],
                        )
                        if rs:
                            ax.loglog(
                                [r["T"] for r in rs],
                                [max(r["value"], 1e-16) for r in rs],
                                ls,
                                color=colors[d],
                                marker=".",
                                label=f"d={d} {sched}",
                            )
                            if sched == "theory" and rs[0]["floor"] > 0:
                                ax.loglog(
                                    [r["T"] for r in rs], [r["floor"] for r in rs], ":", color=colors[d]
                                )
                ax.set_title(f"{m}, K={k}, sigma={s}", fontsize=8)
                ax.set_xlabel("T (steps)")
                if i == 0 and j == 0:
                    ax.legend(fontsize=6)
        path = out_dir / f"{name}.png"
        fig.savefig(path, dpi=90)
        files[name] = path.name
    return files


def _table(slope_rows: list[dict[str, Any]]) -> str:
    dims = sorted({s["d"] for s in slope_rows})
    keys = sorted({(s["metric"], s["schedule"], s["sigma"], s["K"]) for s in slope_rows})
    lines = [
        "| metric | schedule | sigma | K | " + " | ".join(f"slope d={d}" for d in dims) + " | spread |",
        "|---|---|---|---|" + "---|" * (len(dims) + 1),
    ]
    for key in keys:
        sl = {s["d"]: s for s in slope_rows if (s["metric"], s["schedule"], s["sigma"], s["K"]) == key}
        fin = [s["slope"] for s in sl.values() if s["resolved"]]
        spread = f"{max(fin) - min(fin):.2f}" if len(fin) >= 2 else "n/r"
        cells = []
        for d in dims:
            if d not in sl:
                cells.append("-")
            elif sl[d]["resolved"]:
                se = sl[d]["slope_se"]
                cells.append(f"{sl[d]['slope']:.2f}" + (f" ± {se:.2f}" if math.isfinite(se) else ""))
            else:
                cells.append(f"n/r ({sl[d]['points']})")
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | " + " | ".join(cells) + f" | {spread} |")
    return "\n".join(lines)


def _spread_check(col: list[dict[str, Any]], metric: str, schedule: str) -> dict[str, Any]:
    """Rule (b2) for one metric/schedule over the (sigma, K > 1) cells (module docstring)."""
    cells = [c for c in col if c["metric"] == metric and c["schedule"] == schedule and c["K"] > 1]
    tested = [c for c in cells if math.isfinite(c["slope_spread"])]
    worst = max((c["slope_spread"] for c in tested), default=math.nan)
    return {
        "cells": len(cells),
        "tested": len(tested),
        "max": worst,
        "failed": [c for c in tested if c["slope_spread"] > SPREAD_MAX],
    }


@attrs.define(kw_only=True)
class SlopeAnalysis:
    """The slope criteria (a), (b1), (b2) of the study, reported beside the claim's verdict.

    Attributes:
        passed: whether every slope criterion holds (``numbers["verdict"] == "passed"``).
        summary: one sentence with the key numbers.
        numbers: the measured numbers, ``numbers["verdict"]`` among them.
        figures: ``{name: PNG file name in out_dir}``.
        table: the markdown table of the fitted slopes.
    """

    passed: bool
    summary: str
    numbers: dict[str, Any] = attrs.field(factory=dict)
    figures: dict[str, str] = attrs.field(factory=dict)
    table: str = ""


def analyse(
    rows: list[dict[str, Any]], out_dir: Path, *, scale: str, min_points: int | None = None
) -> SlopeAnalysis:
    """Slopes, collapse, figures and the pass/fail decision for the study ``rows`` (see module docstring).

    Args:
        rows: study rows (:mod:`quadriga_ddpm.study`); out_dir: folder for ``rows.json`` and figures.
        scale: ``smoke`` (pass = finite numbers) or ``default`` / ``paper`` (the criteria).
        min_points: fewest T values above twice the floor for a sampled slope to count
            (default :data:`quadriga_ddpm.study.MIN_SLOPE_POINTS`).

    Returns:
        :class:`SlopeAnalysis`; ``numbers["verdict"]`` is ``passed``, ``failed`` (a measured criterion
        fails) or ``not enough resolved points`` (nothing measured fails, but a criterion could not
        be evaluated everywhere); only ``passed`` sets ``passed=True``.
    """
    from quadriga_ddpm.study import MIN_SLOPE_POINTS, collapse, slopes

    min_points = MIN_SLOPE_POINTS if min_points is None else min_points
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "rows.json").write_text(json.dumps(rows))
    sl = slopes(rows, min_points=min_points)
    col = collapse(rows, sl)

    def med(metric: str, schedule: str, pred: Any) -> float:
        v = [
            s["slope"]
            for s in sl
            if s["metric"] == metric and s["schedule"] == schedule and pred(s) and math.isfinite(s["slope"])
        ]
        return statistics.median(v) if v else math.nan

    numbers: dict[str, Any] = {"min_points_for_slope": min_points}
    checks: dict[str, dict[str, Any]] = {}
    for sched in ("theory", "linear"):
        numbers[f"{sched}/K1/tv_slope_median(sigma!=1)"] = med("tv", sched, lambda s: s["sigma"] != 1.0)
        numbers[f"{sched}/K1/kl_slope_median(sigma!=1)"] = med("kl", sched, lambda s: s["sigma"] != 1.0)
        for m in ("direction_w1", "radial_error", "weight_error"):
            sampled = [s for s in sl if s["metric"] == m and s["schedule"] == sched and s["K"] > 1]
            numbers[f"{sched}/K>1/{m}_slopes_resolved"] = sum(s["resolved"] for s in sampled)
            numbers[f"{sched}/K>1/{m}_slopes_total"] = len(sampled)
            numbers[f"{sched}/K>1/{m}_slope_median"] = med(m, sched, lambda s: s["K"] > 1)
            chk = checks[f"{sched}/{m}"] = _spread_check(col, m, sched)
            numbers[f"{sched}/K>1/{m}_slope_spread_max"] = chk["max"]
            numbers[f"{sched}/K>1/{m}_spread_cells_tested"] = chk["tested"]
            numbers[f"{sched}/K>1/{m}_spread_cells_total"] = chk["cells"]
            logs = [
                c["log10_spread"]
                for c in col
                if c["metric"] == m and c["schedule"] == sched and math.isfinite(c["log10_spread"])
            ]
            numbers[f"{sched}/K>1/{m}_log10_spread_median"] = statistics.median(logs) if logs else math.nan
    for r in rows:
        if r["metric"] == "tv" and r["T"] == max(x["T"] for x in rows) and r["sigma"] != 1.0:
            numbers[f"{r['schedule']}/K1/tv(T={r['T']},sigma={r['sigma']},d={r['d']})"] = r["value"]
    finite = all(math.isfinite(r["value"]) for r in rows)
    a = numbers["theory/K1/tv_slope_median(sigma!=1)"]
    b = numbers["theory/K>1/direction_w1_slope_median"]
    chk = checks["theory/direction_w1"]
    in_band = lambda v: SLOPE_BAND[0] <= v <= SLOPE_BAND[1]  # noqa: E731
    if scale == "smoke":
        verdict = "passed" if finite else "failed"
    elif (
        not finite
        or (math.isfinite(a) and not in_band(a))
        or (math.isfinite(b) and not in_band(b))
        or chk["failed"]
    ):
        verdict = "failed"
    elif math.isnan(a) or math.isnan(b) or chk["tested"] < chk["cells"]:
        verdict = "not enough resolved points"
    else:
        verdict = "passed"
    numbers["verdict"] = verdict
    summary = (
        f"{verdict}: theory schedule: K=1 exact TV slope {a:.2f} (median over sigma != 1, d); K>1 "
        f"direction-W1 slope {b:.2f} (median of {numbers['theory/K>1/direction_w1_slopes_resolved']}/"
        f"{numbers['theory/K>1/direction_w1_slopes_total']} slopes with >= {min_points} points above "
        f"twice the floor), spread across d {chk['max']:.2f} at worst over the {chk['tested']}/"
        f"{chk['cells']} (sigma, K) with >= 2 resolved d; linear: TV slope "
        f"{numbers['linear/K1/tv_slope_median(sigma!=1)']:.2f}, W1 slope "
        f"{numbers['linear/K>1/direction_w1_slope_median']:.2f} (claim: about -1, spread <= {SPREAD_MAX})"
    )
    return SlopeAnalysis(
        passed=verdict == "passed",
        summary=summary,
        numbers=numbers,
        figures=_figures(rows, out_dir),
        table=_table(sl),
    )


def level_ratios(rows: list[dict[str, Any]], schedule: str = "theory") -> dict[str, float]:
    """Error-level criterion: exact K = 1 TV at the largest T, largest d over smallest d, per sigma != 1.

    A dimension-free bound keeps this ratio near 1; the slope criteria alone accept a TV that is
    many times larger in high dimension as long as it falls at the same rate.

    Returns:
        ``{"sigma=<s>, T=<T>: TV(d=<max>) / TV(d=<min>)": ratio}``.
    """
    tv = [
        r
        for r in rows
        if r["metric"] == "tv" and r["K"] == 1 and r["schedule"] == schedule and r["sigma"] != 1.0
    ]
    out = {}
    for sigma in sorted({r["sigma"] for r in tv}):
        sel = [r for r in tv if r["sigma"] == sigma]
        t_max = max(r["T"] for r in sel)
        at = {r["d"]: r["value"] for r in sel if r["T"] == t_max}
        lo, hi = min(at), max(at)
        if lo != hi and at[lo] > 0:
            out[f"sigma={sigma:g}, T={t_max}: TV(d={hi}) / TV(d={lo})"] = at[hi] / at[lo]
    return out


def _experiment(scale: Scale, out_dir: Path) -> Observations:
    """Run the study, keep the slope analysis as numbers, and test the exact error levels across d."""
    from quadriga import stats

    name = str(scale.options["grid"])
    rows = run_grid(name)
    res = analyse(rows, Path(out_dir), scale=name)
    intervals = {
        key: stats.Interval(v, v, v, 1.0, "exact (closed-form output law of DDPM, K = 1)", 1)
        for key, v in level_ratios(rows).items()
    }
    numbers = {k: v for k, v in res.numbers.items() if k != "verdict"}
    numbers["slope_criteria_(a,b1,b2)"] = res.numbers["verdict"]
    return Observations(
        intervals=intervals,
        numbers=numbers,
        table=res.table,
        figures={k: str(Path(out_dir) / v) for k, v in res.figures.items()},
    )


dimension_free = Claim(
    arms=("ddpm-theory",),
    # experiment=: the study is a grid (sigma, K, d, T, schedule) of exact output laws and sampled
    # metrics computed in-process (quadriga_ddpm.study), not a registered pipeline; the tested
    # numbers are closed-form ratios, not per-replicate values.
    experiment=_experiment,
    effect=Effect(
        quantity="exact TV of DDPM's output at the largest T (theory schedule, K = 1), ratio largest d / "
        "smallest d; slope criteria (a), (b1), (b2) reported alongside",
        statistic="interval",
        relation="less",
        # Theorem 1: the bound is free of d, so the ratio is 1 up to the constants the O~ hides;
        # a factor 2 is the declared slack
        value=LEVEL_RATIO_MAX,
    ),
    plan=Plan(
        effect=0.5,
        pilot_replicates=3,
        rationale="the tested ratios are exact (the closed-form output law at K = 1): they have no "
        "spread, so any n detects a ratio of 1.5; the plan is nominal",
    ),
    libraries=("torch",),
    scales={
        "smoke": Scale(replicates=2, options={"grid": "smoke"}),
        "paper": Scale(replicates=2, options={"grid": "paper"}),
    },
    tuning={"ddpm-theory": Tuning(1, "the paper's schedule, exact scores")},
)
"""DDPM's error level at fixed T does not grow with d (ratio < 2 across d = 2 .. 256), per sigma."""
