"""Claims of the second group of diagnostics (structural checks and learning-theory predictions).

``diag-invariance-linear`` (row 003:98): least squares commutes with permutation, orthogonal and
invertible maps of predictors and targets, ridge with all of them except the general invertible
predictor maps, measured as a relative deviation against the tolerance 1e-8. Deterministic given
the draws, so the tested share of agreeing cells is exact (a degenerate interval).

``diag-gp-dd-monotone`` (row 003:106): as irrelevant covariates are added to a GP whose ARD
hyperparameters maximise the marginal likelihood, the optimised log marginal likelihood does not
decrease (nested models; exact given the draws), while the test NLL at the largest dimension is
above the NLL with the relevant covariates only (paired over draws, t interval).

``diag-additive-shift-simpler`` (row 003:24): the exact excess-risk increase of additive least
squares under a mean shift of the simpler input is below that under the same shift of the richer
input, paired over training designs (t interval per shift, Holm across shifts).

``diag-kl-bon-equivalence`` (row 003:57): for i.i.d. tokens and a linear reward, best-of-N with
``N = exp(L Delta)`` and the exponential tilt at the same KL have expected rewards within 5 % and
``KL(BoN | tilt)`` below 5 % of the KL budget at the largest length, for every random token law
(exact computation, degenerate interval).

``diag-symmetric-escape`` (row 003:115): the escape time of online SGD from the initial plateau,
for symmetric single-index targets on power-sum features, increases with the information
exponent: paired log ratios of consecutive exponents (k = 2 vs 1, 3 vs 2) are positive.

``diag-mamba-criterion`` (row 003:95): in random draws of a 1-D selective state-space token system
(our continuous-time derivation), the sign of ``S_C^T S_B`` predicts convergence to zero or
divergence in at least 95 % of the draws (Clopper-Pearson interval), with one decay rate (where it
is exact) and with spread decay rates (where the kernel can change sign).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from quadriga.claims import Claim, Effect, Observations, Plan, Precondition, Rows, Scale, Tuning

__all__ = [
    "GP_TOLERANCE",
    "KL_BON_BAND",
    "MAMBA_SHARE",
    "additive_shift_simpler",
    "gp_dd_monotone",
    "invariance_linear",
    "kl_bon_equivalence",
    "mamba_criterion",
    "symmetric_escape",
]


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
    learners: dict[str, Any] = {
        "least-squares": "least-squares",
        f"ridge (penalty {o['penalty']})": {"use": "ridge-regression", "penalty": o["penalty"]},
    }
    rows, cells, agree = [], 0, 0
    commuting: list[float] = []
    breaking: list[float] = []
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
    # experiment=: the claim crosses two learners with three spectra; the evaluator is called per cell.
    # The effect is exact and all-or-nothing: every (learner, spectrum, map family) cell's largest
    # deviation over all draws must agree with the prediction. Rows lack a worst-case statistic over
    # exact rows (a mean of per-draw shares would pass a cell that fails in one draw), and the number
    # of cells is not a parameter Rows.count could set.
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


#: numerical tolerance on "monotone" (nats): L-BFGS-B's stopping and the 1e4 lengthscale of the
#: nested start move the optimum by far less
GP_TOLERANCE = 1e-6


def _gp_experiment(scale: Scale, out_dir: Path) -> Observations:
    """Nested ML-II GPs on ``scale.replicates`` draws; the ML step and the NLL excess per draw."""
    import numpy as np

    from quadriga import stats
    from quadriga.claims.run import markdown_table
    from quadriga.seeding import derive_seed
    from quadriga_diagnostics.gp_dd import curve_summary, draw_problem, gp_dimension_curve

    o = scale.options
    summaries, curves = [], []
    for i in range(scale.replicates):
        rng = np.random.default_rng(derive_seed(scale.seed, f"gp-dd/{i}"))
        rows = gp_dimension_curve(
            *draw_problem(int(o["n_train"]), int(o["n_test"]), int(o["dim"]), float(o["noise"]), rng)
        )
        curves.append(rows)
        summaries.append(curve_summary(rows))
    steps = [s["min_log_ml_step"] for s in summaries]
    excess = [s["nll_excess"] for s in summaries]
    ml_interval = _exact(
        min(steps), len(steps), "deterministic optimisation given the draws; smallest ML step"
    )
    dims = range(1, int(o["dim"]) + 1)
    mean_curve = {
        k: [float(np.mean([c[d - 1][k] for c in curves])) for d in dims]
        for k in ("log_ml", "nll", "crps", "calibration", "rmse")
    }
    numbers = {
        "replicates": len(summaries),
        "min_log_ml_step": min(steps),
        "mean_nll_excess": float(np.mean(excess)),
        "share_nll_non_monotone": float(np.mean([s["nll_increases"] > 0 for s in summaries])),
        "share_crps_non_monotone": float(np.mean([s["crps_increases"] > 0 for s in summaries])),
        "share_calibration_non_monotone": float(np.mean([s["calibration_increases"] > 0 for s in summaries])),
        "mean_log_ml_gain_second_covariate": float(
            np.mean([c[1]["log_ml"] - c[0]["log_ml"] for c in curves])
        ),
    }
    table = markdown_table(
        ["d", "mean log ML", "mean NLL", "mean CRPS", "mean calibration error", "mean RMSE"],
        [
            [d, *(mean_curve[k][d - 1] for k in ("log_ml", "nll", "crps", "calibration", "rmse"))]
            for d in dims
        ],
    )
    return Observations(
        intervals={
            "log ML step (min over d and draws)": ml_interval,
            "test NLL at D minus at d = 2": stats.interval(excess, "mean"),
        },
        numbers=numbers,
        table=table,
    )


gp_dd_monotone = Claim(
    arms=("diag-gp-dd",),
    # experiment=: the draws and the nested fits are made in-process (gp_dimension_curve), as the
    # evaluator does per seed; two comparisons, both "greater than -1e-6"
    experiment=_gp_experiment,
    effect=Effect(
        quantity="(a) smallest step log ML(d + 1) - log ML(d) of the ML-II GP over d and draws (nats; "
        "predicted >= 0) and (b) mean test NLL at D covariates minus at the 2 relevant ones (nats per "
        "point; predicted > 0: a predictive loss that is not monotone); both against -1e-6",
        statistic="interval",
        relation="greater",
        value=-GP_TOLERANCE,
    ),
    plan=Plan(
        effect=0.1,
        pilot_replicates=4,
        rationale="a first run (n = 40, D = 12, 4 draws) gave NLL excesses of 0.0 to 1.3 nats per point; "
        "a first paper run (10 draws, seed 0) gave 0.41 [-0.18, 1.00], skewed, and about 34 draws needed "
        "for its MDE; the ML step is exact given the draws",
    ),
    preconditions=(
        Precondition.number(
            "mean_log_ml_gain_second_covariate",
            ">",
            1.0,
            "the second (relevant) covariate raises the marginal likelihood by more than 1 nat on average",
        ),
    ),
    libraries=("scikit-learn", "scipy"),
    scales={
        "smoke": Scale(replicates=2, options={"dim": 4, "n_train": 20, "n_test": 100, "noise": 0.3}),
        # seed 1 and 34 draws: a first paper run (seed 0, 10 draws) found an ML step of -7e-6 (the
        # optimiser from the warm start; the un-optimised nested model is now a candidate) and an
        # NLL excess 0.41 [-0.18, 1.00]; its MDE analysis asked for about 34 draws
        "paper": Scale(replicates=34, seed=1, options={"dim": 8, "n_train": 30, "n_test": 300, "noise": 0.3}),
    },
    tuning={"diag-gp-dd": Tuning(1, "ML-II is the method; kernel bounds fixed in advance")},
)
"""ML-II GP marginal likelihood is monotone as covariates are added; test NLL is not."""


#: degree 1 (x) + degree 5 (z) only, n = 100, noise 0.5 (the pipeline's defaults, stated)
_ADDITIVE_SETTING = (
    "stage.shift.matrix.deg_g=[5]",
    "stage.shift.deg_f=1",
    "stage.shift.n_train=100",
    "stage.shift.sigma=0.5",
)
#: the matrix point of ``diag-additive-shift`` the claim reads (deg_g = 5, its only point in the run)
_ADDITIVE_STAGE = "shift[deg_g=5]"


def _additive_numbers(result: Any) -> Observations:
    """The report's numbers and table from a run of ``diag-additive-shift`` (its values come from rows).

    ``numbers``: ``min_mean_increase_x`` (the smallest mean risk increase of a shift of ``x`` over
    the shifts) and ``designs``; ``table``: per shift, the mean unshifted excess risk, the mean
    increases of a shift of ``x`` and of ``z`` and their ratio, as the evaluator reports them.
    """
    from quadriga.claims.run import markdown_table

    art = result.artifacts[_ADDITIVE_STAGE]
    v = art.values
    shifts = list(dict.fromkeys(row["shift"] for row in art.tables["per_design"]))
    designs = len({row["design"] for row in art.tables["per_design"]})
    rows = [
        [
            s,
            v["base_risk"],
            v[f"increase_x/{s:g}"],
            v[f"increase_z/{s:g}"],
            v[f"increase_z/{s:g}"] / v[f"increase_x/{s:g}"],
        ]
        for s in shifts
    ]
    numbers = {"min_mean_increase_x": min(v[f"increase_x/{s:g}"] for s in shifts), "designs": designs}
    table = markdown_table(
        ["shift", "base excess risk", "increase (x: simpler)", "increase (z: richer)", "ratio z / x"], rows
    )
    return Observations(numbers=numbers, table=table)


additive_shift_simpler = Claim(
    arms=("z", "x"),
    pipeline="diag-additive-shift",
    # each training design is a replicate: its exact increase under a shift of z (arm "z") and of x
    # (arm "x"), paired by design; one comparison per shift
    rows=Rows(
        stage=_ADDITIVE_STAGE,
        table="per_design",
        column="increase",
        key="design",
        count="stage.shift.num_designs",
        arm="moved",
        group="shift",
    ),
    observe=_additive_numbers,
    effect=Effect(
        quantity="excess-risk increase of additive least squares under a mean shift of the richer "
        "input z (degree 5) minus under the same shift of the simpler input x (degree 1), paired over "
        "training designs",
        statistic="difference",
        relation="greater",
        value=0.0,
        why_sign="the result is an ordering of two risk increases (the Dudley-integral bounds carry no "
        "usable constants), so the sign of the paired gap is the claim",
    ),
    plan=Plan(
        effect=0.05,
        pilot_replicates=4,
        rationale="a pilot of 20 designs gave gaps 0.34 [0.05, 0.63] at shift 0.5 and 2.35 [0.75, 3.94] at "
        "1.0 (sd about 0.6 and 3.4, skewed: inverse Gram matrices); 50 designs resolve a gap of 0.3 at "
        "shift 0.5",
    ),
    preconditions=(
        Precondition.number(
            "min_mean_increase_x",
            ">",
            0.0,
            "the shift of the simpler input raises the risk too (the shift moves the fitted component)",
        ),
    ),
    libraries=("numpy",),
    scales={
        "smoke": Scale(replicates=4, overrides=(*_ADDITIVE_SETTING, "stage.shift.shifts=[0.5, 1.0]")),
        "paper": Scale(
            replicates=50, seed=1, overrides=(*_ADDITIVE_SETTING, "stage.shift.shifts=[0.25, 0.5, 1.0]")
        ),
    },
    tuning={arm: Tuning(1, "ERM is least squares; no tuning") for arm in ("z", "x")},
)
"""A shift in the simpler additive component raises the risk less than the same shift in the richer one."""


#: verdict band of diag-kl-bon-equivalence at the largest length (fixed after a pilot on other token laws)
KL_BON_BAND = 0.05


def _kl_bon_experiment(scale: Scale, out_dir: Path) -> Observations:
    """Random token laws (Dirichlet(1), rewards 0..K-1); exact rows at every length."""
    import numpy as np

    from quadriga.claims.run import markdown_table
    from quadriga_diagnostics.kl_bon import kl_bon_row

    o = scale.options
    rng = np.random.default_rng(scale.seed)
    lengths = [int(L) for L in o["lengths"]]
    k = int(o["vocabulary"])
    worst, first_rel, tightness, rows = 0.0, [], [], []
    for i in range(scale.replicates):
        p = rng.dirichlet(np.ones(k))
        out = [kl_bon_row(p, list(range(k)), L, float(o["kl_rate"])) for L in lengths]
        last = out[-1]
        worst = max(worst, abs(1 - last["reward_ratio"]), last["relative_kl"])
        first_rel.append(out[0]["relative_kl"])
        tightness.append(abs(last["kl_bon"] - last["bound"]) / last["bound"])
        rows += [
            [
                i,
                int(r["length"]),
                r["n"],
                r["kl_bon"],
                r["reward_bon"],
                r["reward_tilt"],
                r["reward_ratio"],
                r["kl_bon_tilt"],
                r["relative_kl"],
                r["cramer_reward"],
            ]
            for r in out
        ]
    interval = _exact(
        worst, scale.replicates, "exact computation on the reward levels; largest over token laws"
    )
    numbers = {
        "token_laws": scale.replicates,
        "largest_length": lengths[-1],
        "worst_at_largest_length": worst,
        "min_relative_kl_at_smallest_length": min(first_rel),
        "max_bound_gap_at_largest_length": max(tightness),
    }
    table = markdown_table(
        [
            "law",
            "L",
            "N",
            "KL(BoN|p)",
            "reward BoN",
            "reward tilt",
            "ratio",
            "KL(BoN|tilt)",
            "KL(BoN|tilt)/KL(BoN|p)",
            "Cramér reward",
        ],
        rows,
    )
    return Observations(intervals={"all token laws": interval}, numbers=numbers, table=table)


kl_bon_equivalence = Claim(
    arms=("diag-kl-bon",),
    # experiment=: the token laws are drawn in-process and every row is computed exactly (kl_bon_row).
    # The effect is a worst case, the largest over the token laws of an exact quantity, with a point
    # interval; Rows feed sampling statistics (mean, difference, ratio), and a mean over laws would
    # test the average law, not every law. (The evaluator takes one fixed token law, not random ones.)
    experiment=_kl_bon_experiment,
    effect=Effect(
        quantity="largest, over random token laws, of max(|1 - reward ratio BoN / tilt|, KL(BoN | tilt) / "
        "KL(BoN | p)) at the largest length, N = exp(0.1 L)",
        statistic="interval",
        relation="less",
        value=KL_BON_BAND,
    ),
    plan=Plan(
        effect=0.02,
        pilot_replicates=4,
        rationale="exact computation, no sampling spread; a pilot on 4 other token laws (seed 1) gave at "
        "most 0.004 (reward) and 0.020 (relative KL) at L = 1024, against 0.12-0.21 relative KL at L = 8",
    ),
    preconditions=(
        Precondition.number(
            "min_relative_kl_at_smallest_length",
            ">",
            KL_BON_BAND,
            "at the smallest length BoN and the tilt are distinguishable (the convergence is observed)",
        ),
        Precondition.number(
            "max_bound_gap_at_largest_length",
            "<",
            0.01,
            "KL(BoN | p) is within 1 % of log N - (N-1)/N (many reward levels: the regime of the theorem)",
        ),
    ),
    libraries=("numpy", "scipy"),
    scales={
        "smoke": Scale(replicates=2, options={"lengths": [8, 64], "vocabulary": 3, "kl_rate": 0.1}),
        "paper": Scale(
            replicates=10,
            seed=2,
            options={"lengths": [8, 32, 128, 512, 1024], "vocabulary": 5, "kl_rate": 0.1},
        ),
    },
    tuning={"diag-kl-bon": Tuning(1, "no tuning: the tilt's beta is set by the KL match")},
)
"""Best-of-N and the KL-matched tilt become equivalent as the length grows (i.i.d. tokens, exact)."""


#: the feature dimension d of diag-symmetric-escape (at both scales: the rows are read from its point)
_SYMMETRIC_DIM = 32
#: d = 32 only, step 0.5 / d (the pipeline's default step 0.03 is about 0.5 / 16)
_SYMMETRIC_SETTING = (
    f"stage.sim.matrix.dim=[{_SYMMETRIC_DIM}]",
    f"stage.sim.learning_rate={0.5 / _SYMMETRIC_DIM!r}",
)
#: the matrix point of ``diag-symmetric-sim`` the claim reads (its only point in the claim's run)
_SYMMETRIC_STAGE = f"sim[dim={_SYMMETRIC_DIM}]"


def _symmetric_numbers(result: Any) -> Observations:
    """The report's numbers and table from a run of ``diag-symmetric-sim`` (its values come from rows).

    ``numbers``: ``min_escaped_share`` (the smallest share of runs that escaped within the budget,
    over the exponents), ``dim`` and ``replicates``; ``table``: per exponent, the median escape
    step, the geometric mean (unescaped runs counted at the budget) and the escaped share.
    """
    import math

    from quadriga.claims.run import markdown_table

    art = result.artifacts[_SYMMETRIC_STAGE]
    v = art.values
    exponents = sorted(int(name.split("/")[1]) for name in v if name.startswith("escaped_share/"))
    rows = [
        [k, v[f"escape_median/{k}"], math.exp(v[f"escape_mean_log/{k}"]), v[f"escaped_share/{k}"]]
        for k in exponents
    ]
    numbers = {
        "min_escaped_share": min(v[f"escaped_share/{k}"] for k in exponents),
        "dim": _SYMMETRIC_DIM,
        "replicates": len({row["run"] for row in art.tables["per_run"]}),
    }
    table = markdown_table(
        ["information exponent k", "median escape step", "geometric mean", "escaped share"], rows
    )
    return Observations(numbers=numbers, table=table)


symmetric_escape = Claim(
    arms=("k", "k - 1"),
    pipeline="diag-symmetric-sim",
    # each run is a replicate: its log escape step at exponent k (arm "k") and at k - 1 (arm
    # "k - 1"), paired by run (same initial direction and inputs); one comparison per k = 2, 3
    rows=Rows(
        stage=_SYMMETRIC_STAGE,
        table="per_run",
        column="log_escape",
        key="run",
        count="stage.sim.replicates",
        arm="exponent",
        group="k",
    ),
    observe=_symmetric_numbers,
    effect=Effect(
        quantity="mean over paired runs of log(escape step at exponent k) - log(escape step at k - 1), "
        "online spherical SGD on power-sum features, k = 2, 3",
        statistic="difference",
        relation="greater",
        value=0.0,
        why_sign="the theorem orders escape times by information exponent; the d-scaling constants are "
        "not given for power-sum features, so the sign of each consecutive log ratio is the claim",
    ),
    plan=Plan(
        effect=0.3,
        pilot_replicates=4,
        rationale="a pilot (d = 16, 32 runs, seed 0) gave log ratios 0.23 [-0.19, 0.66] (k = 2 vs 1) and "
        "1.20 [0.80, 1.59] (3 vs 2), sd about 1.2: 64 runs at d = 32 (where k = 1 and 2 separate more: "
        "medians 42 and 72 in a pilot) resolve 0.3",
    ),
    preconditions=(
        Precondition.number(
            "min_escaped_share", ">=", 0.95, "at least 95 % of the runs escape within the budget"
        ),
    ),
    libraries=("numpy",),
    scales={
        "smoke": Scale(
            replicates=4,
            overrides=(
                *_SYMMETRIC_SETTING,
                "stage.sim.max_exponent=2",
                "stage.sim.n_points=32",
                "stage.sim.max_steps=2000",
            ),
        ),
        "paper": Scale(
            replicates=64,
            seed=1,
            overrides=(
                *_SYMMETRIC_SETTING,
                "stage.sim.max_exponent=3",
                "stage.sim.n_points=64",
                "stage.sim.max_steps=20000",
            ),
        ),
    },
    tuning={arm: Tuning(1, "one step size 0.5 / d for every exponent") for arm in ("k", "k - 1")},
)
"""Escape time from the plateau grows with the information exponent (symmetric single-index, power sums)."""


#: the notes' verdict rule for diag-mamba-criterion (Appendix C, row 003:95)
MAMBA_SHARE = 0.95


def _mamba_experiment(scale: Scale, out_dir: Path) -> Observations:
    """Random draws per decay spread; Clopper-Pearson interval of the criterion's hit share."""
    import numpy as np
    from scipy.stats import binomtest

    from quadriga import stats
    from quadriga.claims.run import markdown_table
    from quadriga.seeding import derive_seed
    from quadriga_diagnostics.mamba_dynamics import simulate_draws

    o = scale.options
    intervals, rows, mixed = {}, [], {}
    for spread in o["decay_spreads"]:
        rng = np.random.default_rng(derive_seed(scale.seed, f"mamba/{spread}"))
        out = simulate_draws(
            rng,
            scale.replicates,
            int(o["num_tokens"]),
            int(o["state_size"]),
            float(spread),
            float(o["horizon"]),
        )
        hits = sum(r["hit"] for r in out)
        ci = binomtest(hits, len(out)).proportion_ci(0.95, method="exact")
        share = hits / len(out)
        # a hand-made interval is read by the claim machinery through a t pivot on se: se is set so
        # that the pivot's 95 % lower end is the Clopper-Pearson lower bound (the side the claim tests)
        intervals[f"decay spread {spread:g}"] = stats.Interval(
            share,
            float(ci.low),
            float(ci.high),
            0.95,
            "Clopper-Pearson exact binomial (lower side as se)",
            len(out),
            se=(share - float(ci.low)) / 1.959963984540054,
        )
        mixed[spread] = float(np.mean([r["mixed_kernel"] for r in out]))
        rows.append(
            [
                spread,
                len(out),
                hits,
                float(np.mean([r["simulated"] == "undecided" for r in out])),
                float(np.mean([r["simulated"] == "divergent" for r in out])),
                mixed[spread],
            ]
        )
    numbers = {"largest_mixed_sign_kernel_share": max(mixed.values())}
    table = markdown_table(
        ["decay spread", "draws", "hits", "undecided share", "divergent share", "mixed-sign kernel share"],
        rows,
    )
    return Observations(intervals=intervals, numbers=numbers, table=table)


mamba_criterion = Claim(
    arms=("diag-mamba-dynamics",),
    # experiment=: parameter draws and ODE solves in-process (simulate_draws), as the evaluator does.
    # Not Rows (one 0/1 "hit" row per draw, grouped by decay spread), which would change the test:
    # the tested interval is Clopper-Pearson's exact binomial one, and quadriga.stats.interval has no
    # binomial method; its Student t interval of the mean of 0/1 rows is the point [1, 1] when every
    # draw hits (so 4 of 4 would pass, where Clopper-Pearson gives [0.398, 1], inconclusive) and
    # [0.970, 1.010] for 99 of 100 (passed, where Clopper-Pearson's 0.9455 is inconclusive).
    # Also the spreads are matrix points of stage ssm (one result each), not a column of one table.
    experiment=_mamba_experiment,
    effect=Effect(
        quantity="share of random parameter draws in which sign(S_C^T S_B) predicts the simulated regime "
        "(norm of the tokens falls and halves, or grows and doubles / blows up, within the horizon)",
        statistic="interval",
        relation="greater",
        value=MAMBA_SHARE,
    ),
    plan=Plan(
        effect=0.04,
        pilot_replicates=4,
        rationale="a pilot of 40 draws per spread (0, 1, 3) hit in every draw; Clopper-Pearson needs 100 "
        "hits out of 100 for a lower bound above 0.95 (0.964); one miss makes it inconclusive",
    ),
    preconditions=(
        Precondition.number(
            "largest_mixed_sign_kernel_share",
            ">",
            0.1,
            "with distinct decay rates the kernel K(tau) changes sign in more than 10 % of the draws "
            "(where sign(mu) alone is not exact by construction)",
        ),
    ),
    libraries=("numpy", "scipy"),
    scales={
        "smoke": Scale(
            replicates=4,
            options={"decay_spreads": [0.0, 3.0], "num_tokens": 4, "state_size": 4, "horizon": 100.0},
        ),
        "paper": Scale(
            replicates=100,
            seed=1,
            options={"decay_spreads": [0.0, 3.0], "num_tokens": 6, "state_size": 4, "horizon": 200.0},
        ),
    },
    tuning={"diag-mamba-dynamics": Tuning(1, "no tuning: random parameters, fixed horizon and thresholds")},
)
"""The sign of S_C^T S_B predicts convergent or divergent 1-D selective-SSM token dynamics (>= 95 %)."""
