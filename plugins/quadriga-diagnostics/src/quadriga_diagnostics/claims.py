"""The diagnostics' claims as statistical tests (``quadriga verify quadriga-diagnostics``).

``diag-gfs-monotone`` (Kreisler et al. 2023, ICML, sec. 3): along GD on a depth-4 scalar network
started beyond the edge of stability, the sharpness of the gradient-flow solution (measured: the
flow integrated numerically, then power iteration on Hessian-vector products) does not increase in
at least 95 % of the evaluated steps, for every drawn initialisation and stability ratio. The
trajectories are deterministic given the initialisation, so each fraction is exact: the tested
number is the smallest fraction over the draws, with a degenerate ("exact") interval.
Preconditions: every run starts beyond the edge (``learning_rate * S_GFS(w_0) / 2 > 1``) and the
loss goes up in at least 3 GD steps of every run (the oscillation the theorem is about; the share
of such steps is reported, 2.5-50 % in the runs tried).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from quadriga.claims import Claim, Effect, Observations, Plan, Precondition, Scale, Tuning

__all__ = ["MONOTONE_SHARE", "gfs_monotone", "gfs_sharpness_runs"]

#: the verdict rule of the research notes (Appendix C, row 003:51): monotone in >= 95 % of steps
MONOTONE_SHARE = 0.95


def gfs_sharpness_runs(
    ratios: Any, draws: int, *, num_steps: int, evaluate_every: int, seed: int = 0, depth: int = 4
) -> list[dict[str, Any]]:
    """Run ``diag-gfs-sharpness`` for ``draws`` random initialisations at each stability ratio.

    Initial weights are ``exp(z - mean(z)) * c^(1/depth)`` with ``z ~ N(0, 0.4^2 I_depth)`` and
    ``c ~ U[0.8, 1.25]`` (unbalanced, product ``c`` near the minimum's 1; numpy streams
    ``derive_seed(seed, "gfs/init/<i>")``); draw ``i`` uses the same weights at every ratio.

    Returns:
        one row per (ratio, draw): the evaluator's values plus ``ratio``, ``draw`` and ``weights``.

    Raises:
        ConfigError: from the evaluator (a non-positive ratio, say).

    Source: test design for Kreisler et al. 2023 (ICML), sec. 3 and 5.
    """
    import numpy as np

    from quadriga.seeding import derive_seed, make_generator
    from quadriga_diagnostics.sharpness import GFSSharpness

    rows = []
    for i in range(draws):
        rng = np.random.default_rng(derive_seed(seed, f"gfs/init/{i}"))
        z = rng.normal(0.0, 0.4, size=depth)
        weights = (np.exp(z - z.mean()) * rng.uniform(0.8, 1.25) ** (1.0 / depth)).round(6).tolist()
        for ratio in ratios:
            ev = GFSSharpness(
                initial_weights=weights,
                stability_ratio=float(ratio),
                num_steps=num_steps,
                evaluate_every=evaluate_every,
            )
            values = ev.evaluate(generator=make_generator(derive_seed(seed, f"gfs/power/{i}/{ratio}"))).values
            rows.append({"ratio": float(ratio), "draw": i, "weights": weights, **values})
    return rows


def _gfs_experiment(scale: Scale, out_dir: Path) -> Observations:
    from quadriga import stats
    from quadriga.claims.run import markdown_table

    o = scale.options
    rows = gfs_sharpness_runs(
        o["ratios"], scale.replicates, num_steps=int(o["num_steps"]), evaluate_every=int(o["evaluate_every"])
    )
    worst = min(r["monotone_fraction"] for r in rows)
    numbers = {
        "runs": len(rows),
        "min_monotone_fraction": worst,
        "min_loss_increase_fraction": min(r["loss_increase_fraction"] for r in rows),
        "min_loss_increases": min(r["loss_increases"] for r in rows),
        "min_edge_ratio_initial": min(r["edge_ratio_initial"] for r in rows),
        "max_edge_ratio_final": max(r["edge_ratio_final"] for r in rows),
        "max_relative_gap_measured_vs_closed_form": max(r["max_relative_gap"] for r in rows),
    }
    table = markdown_table(
        ["ratio", "draw", "monotone share", "loss-up share", "S_GFS first", "S_GFS last (measured)",
         "S_GFS last (closed form)", "eta S_GFS/2 last"],
        [
            [r["ratio"], r["draw"], r["monotone_fraction"], r["loss_increase_fraction"],
             r["gfs_sharpness_initial"], r["gfs_sharpness_final"], r["predicted_gfs_sharpness_final"],
             r["edge_ratio_final"]]
            for r in rows
        ],
    )
    interval = stats.Interval(worst, worst, worst, 1.0, "exact (deterministic GD and flow trajectories)", len(rows))
    return Observations(intervals={"all runs": interval}, numbers=numbers, table=table)


gfs_monotone = Claim(
    arms=("diag-gfs-sharpness",),
    # experiment=: the claim draws initialisations and crosses them with stability ratios; the
    # evaluator is called directly, one run per (draw, ratio), as the pipeline does per ratio.
    experiment=_gfs_experiment,
    effect=Effect(
        quantity="smallest share, over initialisations and stability ratios, of evaluated GD steps at "
        "which the measured GFS sharpness does not increase",
        statistic="interval",
        relation="greater",
        # the theorem says every step (share 1); the notes' rule allows 5 % of numerically flat steps
        value=MONOTONE_SHARE,
    ),
    plan=Plan(
        effect=0.04,
        pilot_replicates=3,
        rationale="each run's share is exact (deterministic trajectories, flow error 1e-11 against a "
        "1e-7 slack), so the tested minimum has no sampling spread; the plan is nominal",
    ),
    preconditions=(
        Precondition.number(
            "min_edge_ratio_initial", ">", 1.0, "every run starts beyond the edge of stability"
        ),
        Precondition.number("min_loss_increases", ">=", 3, "the loss rises in at least 3 GD steps of every run"),
    ),
    libraries=("torch", "scipy"),
    scales={
        "smoke": Scale(
            replicates=2, options={"ratios": [1.3], "num_steps": 40, "evaluate_every": 2}
        ),
        "paper": Scale(
            replicates=10, options={"ratios": [1.1, 1.2, 1.3, 1.4], "num_steps": 200, "evaluate_every": 2}
        ),
    },
    tuning={"diag-gfs-sharpness": Tuning(1, "no tuning: the learning rate is set by the stability ratio")},
)
"""GFS sharpness does not increase in >= 95 % of GD steps at the edge of stability, every run."""
