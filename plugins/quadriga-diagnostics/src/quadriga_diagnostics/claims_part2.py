"""Claims of the second group of diagnostics (structural checks and learning-theory predictions).

``diag-invariance-linear`` (row 003:98): least squares commutes with permutation, orthogonal and
invertible maps of predictors and targets, ridge with all of them except the general invertible
predictor maps, measured as a relative deviation against the tolerance 1e-8. Deterministic given
the draws, so the tested share of agreeing cells is exact (a degenerate interval).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from quadriga.claims import Claim, Effect, Observations, Plan, Precondition, Scale, Tuning

__all__ = ["invariance_linear"]


def _exact(value: float, n: int, what: str) -> Any:
    """A point interval for a statistic that has no sampling spread."""
    from quadriga import stats

    return stats.Interval(value, value, value, 1.0, f"exact ({what})", n)


def _invariance_experiment(scale: Scale, out_dir: Path) -> Observations:
    """Both learners on every spectrum, ``scale.replicates`` draws each; share of agreeing cells."""
    import numpy as np
    from quadriga_std.randomdesign.design import ridge_coefficients
    from quadriga_std.randomdesign.task import RandomDesign

    from quadriga.claims.run import markdown_table
    from quadriga.seeding import derive_seed, make_generator
    from quadriga_diagnostics.invariance import FAMILIES, InvarianceCheck

    o = scale.options
    learners = {
        "least-squares": "least-squares",
        f"ridge (penalty {o['penalty']})": {"use": "ridge-regression", "penalty": o["penalty"]},
    }
    rows, cells, agree = [], 0, 0
    commuting, breaking = [], []
    for name, spec in learners.items():
        for spectrum in o["spectra"]:
            ev = InvarianceCheck(
                learner=spec,
                spectrum=spectrum,
                num_draws=scale.replicates,
                dim=int(o["dim"]),
                n_train=int(o["n_train"]),
                condition=float(o["condition"]),
            )
            v = ev.evaluate(
                generator=make_generator(derive_seed(scale.seed, f"invariance/{name}/{spectrum}"))
            ).values
            for side, kind in FAMILIES:
                key = f"{side}/{kind}"
                cells += 1
                agree += int(v[f"commutes/{key}"] == v[f"predicted/{key}"])
                (commuting if v[f"predicted/{key}"] == 1.0 else breaking).append(v[f"deviation/{key}"])
                rows.append(
                    [
                        name,
                        spectrum,
                        side,
                        kind,
                        v[f"deviation/{key}"],
                        v[f"predicted/{key}"],
                        v[f"commutes/{key}"],
                    ]
                )
    # precondition: the penalty changes the fit (ridge differs from least squares on the test bed)
    gaps = []
    for spectrum in o["spectra"]:
        ds = RandomDesign(spectrum=spectrum, dim=int(o["dim"]), n_train=int(o["n_train"]), num_outputs=3)
        ds.prepare(generator=make_generator(derive_seed(scale.seed, f"invariance/gap/{spectrum}")))
        X, Y = ds.split("train")
        ls, rr = ridge_coefficients(X, Y, 0.0), ridge_coefficients(X, Y, float(o["penalty"]))
        gaps.append(float(np.linalg.norm(rr - ls) / np.linalg.norm(ls)))
    share = agree / cells
    numbers = {
        "cells": cells,
        "agreeing_cells": agree,
        "max_deviation_where_commuting_predicted": max(commuting),
        "min_deviation_where_breaking_predicted": min(breaking),
        "min_relative_ridge_vs_least_squares_gap": min(gaps),
    }
    table = markdown_table(
        ["learner", "spectrum", "side", "map", "max deviation", "predicted", "commutes"], rows
    )
    interval = _exact(share, cells, "deterministic fits; share of (learner, spectrum, family) cells")
    return Observations(intervals={"all cells": interval}, numbers=numbers, table=table)


invariance_linear = Claim(
    arms=("diag-invariance",),
    # experiment=: the claim crosses two learners with three spectra; the evaluator is called per cell
    experiment=_invariance_experiment,
    effect=Effect(
        quantity="share of (learner, spectrum, map family) cells where the measured commutation "
        "(largest relative deviation over the draws <= 1e-8) is the predicted one",
        statistic="interval",
        relation="greater",
        value=0.99,
    ),
    plan=Plan(
        effect=0.01,
        pilot_replicates=3,
        rationale="the fits are deterministic given the draws and the deviations are either at "
        "round-off (1e-15) or of order 0.1, so the share has no sampling spread; the plan is nominal",
    ),
    preconditions=(
        Precondition.number(
            "min_relative_ridge_vs_least_squares_gap",
            ">",
            1e-3,
            "the ridge penalty changes the fitted coefficients (relative gap to least squares > 1e-3)",
        ),
    ),
    libraries=("numpy",),
    scales={
        "smoke": Scale(
            replicates=2,
            options={
                "spectra": ["isotropic", "power-law"],
                "dim": 5,
                "n_train": 20,
                "penalty": 0.1,
                "condition": 10.0,
            },
        ),
        "paper": Scale(
            replicates=20,
            options={
                "spectra": ["isotropic", "equicorrelated", "power-law"],
                "dim": 8,
                "n_train": 50,
                "penalty": 0.1,
                "condition": 10.0,
            },
        ),
    },
    tuning={"diag-invariance": Tuning(1, "no tuning: fixed penalty 0.1 and maps of condition number 10")},
)
"""Least squares commutes with invertible maps; ridge only with orthogonal predictor maps (1e-8)."""
