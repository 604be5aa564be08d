"""Claims of the complexity and scaling diagnostics.

``diag-var-threshold`` (row 003:85): the polynomial-method (degree-g Taylor, rank binom(d + g, g))
approximation of block-causal VAR attention, with the rank inside a sub-quartic budget
``R <= n^1.5``, has error at most the tolerance 0.05 in every draw at entry bounds up to the
threshold ``B*(n)`` of the Taylor-remainder bound, and more than the tolerance in every draw at
``2 B*(n)`` (breakdown). Deterministic given the draws: exact intervals on the largest and
smallest errors, as log margins that must both be positive.

``diag-plrf-exponents`` (row 003:23): at one point of each of phases Ia, II and III of the PLRF
model, the compute-optimal loss exponent measured on exact loss curves is within 0.05 (the
notes' rule) of the phase's formula (t interval over W draws, one comparison per point). It runs
the pipeline ``diag-plrf-phases`` once: its stage ``phases`` writes one row per (point, W draw)
(table ``per_draw``, ``draws = replicates``), each point a group of the Holm family.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from quadriga.claims import Claim, Effect, Observations, Plan, Precondition, Rows, Scale, Tuning
from quadriga_diagnostics.claims_part2 import _exact

__all__ = ["PLRF_BAND", "VAR_TOLERANCE", "plrf_exponents", "var_threshold"]

#: the error tolerance that defines the threshold B*(n) of diag-var-threshold (declared in advance)
VAR_TOLERANCE = 0.05


def _var_experiment(scale: Scale, out_dir: Path) -> Observations:
    """Errors per (n, multiplier) over ``scale.replicates`` draws; the two log margins."""
    import numpy as np

    from quadriga.claims.run import markdown_table
    from quadriga.seeding import derive_seed
    from quadriga_diagnostics.var_complexity import degree_for_rank, threshold_norm, var_row

    o = scale.options
    dim, tol = int(o["dim"]), VAR_TOLERANCE
    below, above, ratio, rank_share, rows = [], [], [], [], []
    for n in o["sizes"]:
        n = int(n)
        g = degree_for_rank(dim, n ** float(o["rank_exponent"]))
        b_star = threshold_norm(dim, g, tol)
        for m in o["multipliers"]:
            rng = np.random.default_rng(derive_seed(scale.seed, f"var/{n}/{m}"))
            out = [var_row(n, dim, float(m) * b_star, g, rng) for _ in range(scale.replicates)]
            errs = [r["error"] for r in out]
            (below if float(m) <= 1.0 else above).extend(errs)
            ratio += [r["error"] / r["bound_at_t_max"] for r in out if np.isfinite(r["bound_at_t_max"])]
            rank_share.append(out[0]["rank"] / out[0]["tokens"])
            rows.append(
                [
                    n,
                    int(out[0]["tokens"]),
                    g,
                    int(out[0]["rank"]),
                    b_star,
                    float(m),
                    max(errs),
                    min(errs),
                    out[0]["bound"],
                    float(np.median([r["seconds_exact"] / r["seconds_lowrank"] for r in out])),
                ]
            )
    worst_below, best_above = max(below), min(above)
    intervals = {
        "log(tol / largest error at B <= B*)": _exact(
            float(np.log(tol / worst_below)), len(below), "deterministic given the draws; largest error"
        ),
        "log(smallest error at B > B* / tol)": _exact(
            float(np.log(best_above / tol)), len(above), "deterministic given the draws; smallest error"
        ),
    }
    numbers = {
        "largest_error_below": worst_below,
        "smallest_error_above": best_above,
        "largest_error_over_bound": max(ratio),
        "largest_rank_over_tokens": max(rank_share),
    }
    table = markdown_table(
        ["n", "tokens L", "degree g", "rank R", "B*", "B / B*", "max error", "min error", "bound", "speed"],
        rows,
    )
    return Observations(intervals=intervals, numbers=numbers, table=table)


var_threshold = Claim(
    arms=("diag-var-complexity",),
    # experiment=: var_row per (n, multiplier, draw), as the evaluator does; two exact comparisons.
    # Kept: the claim is about every draw (the largest error at B <= B* and the smallest at 2 B*,
    # with an exact interval given the draws), and the declarative form has no statistic for that:
    # Rows reads per-row values into mean / difference / ratio / iqm-difference only, so reading
    # the per-draw log margins of the evaluator's table 'draws' would test their mean (the typical
    # draw), not the worst draw, and pool all sizes n into one mean.
    experiment=_var_experiment,
    effect=Effect(
        quantity="log margins of the polynomial-method VAR attention error (max |out~ - out| / max |V|) "
        "against the tolerance 0.05: log(0.05 / largest error over draws with B <= B*(n)) and "
        "log(smallest error over draws with B = 2 B*(n) / 0.05); both predicted > 0",
        statistic="interval",
        relation="greater",
        value=0.0,
        why_sign="the threshold is where the remainder bound meets the tolerance; below it the bound "
        "guarantees the error, above it the claim is that the approximation fails, a sign",
    ),
    plan=Plan(
        effect=0.5,
        pilot_replicates=4,
        rationale="a pilot (seed 0, n = 16, 24, 32, 4 draws) gave largest errors 0.0024-0.0076 at B* "
        "and smallest errors 0.11-0.28 at 2 B* (log margins about 1.9 and 0.8); exact given the "
        "draws, so 10 draws per setting only widen the coverage of sign patterns",
    ),
    preconditions=(
        Precondition.number(
            "largest_error_over_bound",
            "<=",
            1.0,
            "the measured error never exceeds the Taylor-remainder bound (the construction is the "
            "polynomial method it claims to be)",
        ),
        Precondition.number(
            "largest_rank_over_tokens",
            "<",
            0.1,
            "the factorisation is genuinely low rank: rank R below 10 % of the tokens L",
        ),
    ),
    libraries=("numpy", "scipy"),
    scales={
        "smoke": Scale(
            replicates=2,
            options={"sizes": [16], "dim": 4, "rank_exponent": 1.5, "multipliers": [1.0, 2.0]},
        ),
        "paper": Scale(
            replicates=10,
            seed=1,
            options={"sizes": [16, 24, 32], "dim": 4, "rank_exponent": 1.5, "multipliers": [0.5, 1.0, 2.0]},
        ),
    },
    tuning={"diag-var-complexity": Tuning(1, "no tuning: degree from the rank budget, B* from the bound")},
)
"""Polynomial-method VAR attention: error <= 0.05 up to the norm threshold B*(n), > 0.05 at 2 B*(n)."""


#: the notes' verdict band (Appendix C, row 003:23): measured exponent within 0.05 of the prediction
PLRF_BAND = 0.05


def _plrf_observe(result: Any) -> Observations:
    """The preconditions' numbers and the per-point table, from table ``per_point`` of stage ``phases``.

    ``largest_eta_drift`` is the largest ``|eta - eta_half|`` (means over the draws), 1.0 (failing
    the precondition) at a point whose grid without its top octave has no interior optimum in
    some draw; ``largest_simulation_gap_in_se`` the largest simulation gap in standard errors.
    """
    import math

    from quadriga.claims.run import markdown_table

    metrics = result.artifacts["phases"]
    points = metrics.tables["per_point"]
    drifts = [abs(p["eta_drift"]) if math.isfinite(p["eta_drift"]) else 1.0 for p in points]
    rows = []
    for p, drift in zip(points, drifts, strict=True):
        rows.append(
            [
                p["phase"],
                p["alpha"],
                p["beta"],
                p["eta"],
                p["eta_predicted"],
                p["eta_low"],
                p["eta_high"],
                p["xi"],
                p["xi_predicted"],
                drift,
                p["interior_decades"],
                p["simulation_gap"],
            ]
        )
    numbers = {
        "min_interior_decades": min(p["interior_decades"] for p in points),
        "largest_simulation_gap_in_se": max(
            p["simulation_gap"] / max(p["simulation_se"], 1e-300) for p in points
        ),
        "largest_eta_drift": max(drifts),
        "d_max": int(points[0]["d_max"]),
    }
    table = markdown_table(
        ["phase", "alpha", "beta", "eta", "pred", "low", "high", "xi", "xi pred", "drift", "dec", "gap"],
        rows,
    )
    return Observations(numbers=numbers, table=table)


plrf_exponents = Claim(
    arms=("plrf",),
    pipeline="diag-plrf-phases",
    rows=Rows(
        stage="phases",
        table="per_draw",
        column="eta_error",
        key="draw",
        count="stage.phases.draws",
        group=("phase", "alpha", "beta"),
    ),
    observe=_plrf_observe,
    effect=Effect(
        quantity="compute-optimal loss exponent eta (P* ~ f^-eta, f = r d) of the PLRF model under one-pass "
        "SGD, measured on exact loss curves (d = 32 ... 512) minus the phase's formula, per phase point "
        "(one row per W draw)",
        statistic="mean",
        relation="within",
        value=0.0,
        tolerance=PLRF_BAND,
        label="eta",
    ),
    plan=Plan(
        effect=0.03,
        pilot_replicates=4,
        rationale="a pilot (seed 1, d = 32 ... 512, 4 draws) gave eta 0.317 (Ia, predicted 0.364), 0.606 "
        "(II, 0.706) and 0.666 (III, 0.643), draw sd 0.01-0.06; single draws at d_max = 1024 (seed 0) "
        "gave 0.335, 0.685, 0.694: in phase II the fit still moves with d by more than the band; the "
        "drift precondition makes such a point inconclusive instead of widening the band, and a "
        "point whose fit has settled outside the band is refuted; 5 draws per point take about 5 s "
        "each on an idle core",
    ),
    preconditions=(
        Precondition.number(
            "min_interior_decades",
            ">=",
            1.0,
            "the compute-optimal d lies strictly inside the d grid over at least one decade of f, every draw",
        ),
        Precondition.number(
            "largest_eta_drift",
            "<",
            PLRF_BAND,
            "the asymptotic regime is reached: eta fitted on d <= d_max / 2 differs from eta on the full "
            "grid by less than the band, at every point",
        ),
        Precondition.number(
            "largest_simulation_gap_in_se",
            "<",
            4.0,
            "direct SGD simulation (d = 32, 64 runs) agrees with the loss-curve formula within 4 standard "
            "errors at every checked step",
        ),
    ),
    libraries=("numpy", "scipy"),
    scales={
        "smoke": Scale(
            replicates=2,
            overrides=(
                "stage.phases.points=[[1.0, 0.7]]",
                "stage.phases.d_min=16",
                "stage.phases.d_max=64",
                "stage.phases.flops_min=100.0",
                "stage.phases.flops_max=100000.0",
                "stage.phases.flop_points=16",
                "stage.phases.sim_steps=200",
                "stage.phases.sim_runs=16",
            ),
        ),
        # the pipeline's points and grid: d = 32 ... 512 (2 per octave), v = 4 d_max, learning rate 0.2,
        # f = 1e3 ... 1e8 (31 budgets), simulation 2000 steps x 64 runs
        "paper": Scale(replicates=5, seed=1),
    },
    tuning={"plrf": Tuning(1, "no tuning: one learning rate 0.2 for every point")},
)
"""PLRF compute-optimal loss exponents within 0.05 of the phase formulas (Ia, II, III)."""
