"""LR-QR's headline claims as runnable checks (repetitions run in-process, LR-QR batched over them).

For every repetition a fresh dataset is drawn (seed = repetition index) and four methods are
scored on its ``"target_test"`` split: split conformal, weighted conformal with the exact
likelihood ratio and with a logistic-classifier ratio (quadriga-std), and LR-QR. Reported: mean
target coverage and its standard error over repetitions, and mean set width (for weighted
conformal, the mean over its finite intervals; its share of infinite intervals is reported too).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from quadriga_std.estimators.conformal import SplitConformal, WeightedConformal
from quadriga_std.evaluators.conformal import coverage_and_width

from quadriga.claims import ClaimResult
from quadriga_lr_qr.estimator import interval_predictor, prepare_problem
from quadriga_lr_qr.lrqr import select_and_fit

__all__ = ["diabetes_shift_claim", "run_scenario", "synthetic_shift_claim"]

ALPHA = 0.1
METHODS = ("split", "weighted-exact", "weighted-classifier", "lr-qr", "conditional-conformal")
LRQR_SETTINGS = {"lambdas": (0.1, 0.3, 1.0, 3.0), "steps": 300, "lr": 0.1}
#: target test points per repetition scored for conditional-conformal (one linear program each)
CONDITIONAL_POINTS = 20


def _have_mapie() -> bool:
    try:
        from quadriga_lr_qr.conditional import load_mapie

        load_mapie()
        return True
    except Exception:
        return False


def run_scenario(
    make: Callable[[int], Any],
    reps: int,
    *,
    regressor: str = "ridge",
    first: int = 0,
    conditional: bool | None = None,
) -> dict[str, dict[str, np.ndarray]]:
    """Run every method on ``reps`` datasets ``make(seed)``, seeds ``first .. first + reps - 1``.

    ``conditional-conformal`` (MAPIE, when installed and ``conditional`` is not False) is scored on
    the first ``CONDITIONAL_POINTS`` target test points of each repetition only (its cost is one
    linear program per point); its coverage is still unbiased, with a larger standard error.

    Returns:
        ``{method: {"coverage": ndarray[reps], "width": ndarray[reps], "infinite": ndarray[reps]}}``.
    """
    use_cc = _have_mapie() if conditional is None else conditional
    methods = [m for m in METHODS if use_cc or m != "conditional-conformal"]
    out = {m: {"coverage": [], "width": [], "infinite": []} for m in methods}
    problems, models, datasets = [], [], []
    for r in range(first, first + reps):
        data = make(r)
        data.prepare(generator=torch.Generator().manual_seed(r))
        X, y = data.split("target_test")

        def gen(r: int = r) -> torch.Generator:
            return torch.Generator().manual_seed(10_000 + r)

        ests = {
            "split": SplitConformal(alpha=ALPHA, regressor=regressor, evaluation_split="target_test"),
            "weighted-exact": WeightedConformal(alpha=ALPHA, regressor=regressor),
            "weighted-classifier": WeightedConformal(
                alpha=ALPHA, regressor=regressor, likelihood_ratio="classifier"
            ),
        }
        if use_cc:
            from quadriga_lr_qr.conditional import ConditionalConformal

            ests["conditional-conformal"] = ConditionalConformal(
                alpha=ALPHA, regressor=regressor, num_evaluation_points=1
            )
        for name, est in ests.items():
            Xe, ye = (
                (X[:CONDITIONAL_POINTS], y[:CONDITIONAL_POINTS])
                if name == "conditional-conformal"
                else (X, y)
            )
            res = coverage_and_width(*est.estimate(data, generator=gen()).predict(Xe), ye)
            for k, key in (("coverage", "coverage"), ("width", "width"), ("infinite", "fraction_infinite")):
                out[name][k].append(res[key])
        problem, model = prepare_problem(data, regressor, ALPHA, gen())
        problems.append(problem), models.append(model), datasets.append((X, y))
    fits = select_and_fit(
        problems, ALPHA, LRQR_SETTINGS["lambdas"], steps=LRQR_SETTINGS["steps"], lr=LRQR_SETTINGS["lr"]
    )
    for fit, model, (X, y) in zip(fits, models, datasets, strict=False):
        low, high = interval_predictor(model, fit["theta"])(X)
        res = coverage_and_width(low, np.maximum(high, low), y)
        out["lr-qr"]["coverage"].append(res["coverage"])
        out["lr-qr"]["width"].append(res["width"])
        out["lr-qr"]["infinite"].append(0.0)
    return {m: {k: np.asarray(v, float) for k, v in d.items()} for m, d in out.items()}


def _summary(res: dict[str, dict[str, np.ndarray]]) -> dict[str, dict[str, float]]:
    rows = {}
    for m, d in res.items():
        c = d["coverage"]
        se = float(c.std(ddof=1) / math.sqrt(c.size)) if c.size > 1 else float("nan")
        rows[m] = {
            "coverage": float(c.mean()),
            "coverage_se": se,
            "width": float(np.nanmean(d["width"])),
            "infinite": float(d["infinite"].mean()),
        }
    return rows


def _table(by_setting: dict[Any, dict[str, dict[str, float]]], label: str) -> str:
    lines = [
        f"| {label} | method | target coverage (mean +- s.e.) | mean width | share infinite |",
        "|---|---|---|---|---|",
    ]
    for key, rows in by_setting.items():
        for m, r in rows.items():
            lines.append(
                f"| {key} | {m} | {r['coverage']:.3f} +- {r['coverage_se']:.3f} | {r['width']:.3f} | "
                f"{r['infinite']:.3f} |"
            )
    return "\n".join(lines)


def _figure(by_setting: dict[Any, dict[str, dict[str, float]]], xlabel: str, path: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.0, 3.6), layout="constrained")
    ax = fig.subplots()
    xs = list(by_setting)
    for m in by_setting[xs[0]]:
        ax.errorbar(
            xs,
            [by_setting[x][m]["coverage"] for x in xs],
            yerr=[2 * by_setting[x][m]["coverage_se"] for x in xs],
            marker="o",
            capsize=3,
            label=m,
        )
    ax.axhline(1 - ALPHA, color="gray", ls="--", lw=1)
    ax.axhspan(1 - ALPHA - 0.02, 1 - ALPHA + 0.02, color="gray", alpha=0.15)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("target coverage")
    ax.legend(fontsize=8)
    fig.savefig(path, dpi=110)


def _verdict(by_setting, shifted_keys, scale):
    numbers, ok = {}, True
    for key, rows in by_setting.items():
        for m, r in rows.items():
            for k, v in r.items():
                numbers[f"{key}/{m}/{k}"] = v
        lq, wex, sp = rows["lr-qr"], rows["weighted-exact"], rows["split"]
        ok &= abs(lq["coverage"] - (1 - ALPHA)) <= 0.02
        ok &= lq["width"] <= 1.10 * wex["width"]
        if key in shifted_keys:
            ok &= sp["coverage"] < 1 - ALPHA - 2 * sp["coverage_se"]
    finite = all(math.isfinite(v) for k, v in numbers.items() if not k.endswith("coverage_se"))
    return (finite if scale == "smoke" else bool(ok)), numbers


def synthetic_shift_claim(scale: str, *, out_dir: Path) -> ClaimResult:
    """LR-QR keeps target coverage within 0.02 of 0.90 on a 50-d Gaussian mean shift, where split conformal
    under-covers at delta >= 1, with mean width at most 10% above weighted conformal with the exact ratio.

    ``paper``: 200 repetitions, delta in {0, 0.5, 1, 2}, d = 50, n = 1000 per split; ``smoke``: 2
    repetitions, delta = 2, d = 5, n = 200 (only checks that finite numbers come out).

    Source: Joshi et al. 2025, arXiv 2502.13030 (coverage claim, sec. 5), on a synthetic design.
    """
    from quadriga_lr_qr.synthetic import SyntheticShift

    paper = scale == "paper"
    reps, deltas, n, dim = (200, (0.0, 0.5, 1.0, 2.0), 1000, 50) if paper else (2, (2.0,), 200, 5)
    by = {}
    for delta in deltas:

        def make(r: int, d: float = delta) -> SyntheticShift:
            return SyntheticShift(
                dim=dim,
                delta=d,
                n_train=n,
                n_calibration=n,
                n_test=n,
                n_target_calibration=n,
                n_target_test=n,
            )

        by[delta] = _summary(run_scenario(make, reps))
    passed, numbers = _verdict(by, [d for d in deltas if d >= 1.0], scale)
    _figure(by, "shift delta (units of x)", out_dir / "coverage_vs_delta.png")
    lq = by[deltas[-1]]["lr-qr"]
    return ClaimResult(
        passed=passed,
        numbers=numbers,
        table=_table(by, "delta"),
        figures={"coverage": "coverage_vs_delta.png"},
        summary=(
            f"{reps} repetitions; at delta = {deltas[-1]}: LR-QR coverage {lq['coverage']:.3f} "
            f"+- {lq['coverage_se']:.3f}, split {by[deltas[-1]]['split']['coverage']:.3f}, "
            f"LR-QR width {lq['width']:.2f} vs weighted-exact "
            f"{by[deltas[-1]]['weighted-exact']['width']:.2f} (claim: |cov - 0.90| <= 0.02, "
            "split < 0.90 at delta >= 1, width <= 1.1x weighted-exact)"
        ),
    )


def diabetes_shift_claim(scale: str, *, out_dir: Path) -> ClaimResult:
    """The same comparison on scikit-learn's diabetes data, target built by exponential tilting of 'bmi'.

    ``paper``: 200 repetitions at tilt strengths 0 and 1 (per standard deviation); ``smoke``: 2 at strength 1.

    Source: Joshi et al. 2025, arXiv 2502.13030; shift design of Tibshirani et al. 2019, sec. 2.2.
    """
    from quadriga_std.tasks.datasets import SklearnDataset

    paper = scale == "paper"
    reps, strengths = (200, (0.0, 1.0)) if paper else (2, (1.0,))
    by = {}
    for lam in strengths:

        def make(r: int, s: float = lam) -> SklearnDataset:
            return SklearnDataset(
                name="diabetes",
                shift=True,
                shift_feature="bmi",
                shift_strength=s,
                train=0.4,
                calibration=0.3,
                test=0.3,
            )

        by[lam] = _summary(run_scenario(make, reps))
    passed, numbers = _verdict(by, [s for s in strengths if s >= 1.0], scale)
    _figure(by, "tilt strength lambda (per std of bmi)", out_dir / "coverage_vs_tilt.png")
    top = by[strengths[-1]]
    return ClaimResult(
        passed=passed,
        numbers=numbers,
        table=_table(by, "tilt"),
        figures={"coverage": "coverage_vs_tilt.png"},
        summary=(
            f"{reps} repetitions; tilt {strengths[-1]}: LR-QR coverage "
            f"{top['lr-qr']['coverage']:.3f} +- {top['lr-qr']['coverage_se']:.3f}, split "
            f"{top['split']['coverage']:.3f}, weighted-exact {top['weighted-exact']['coverage']:.3f}; "
            f"widths LR-QR {top['lr-qr']['width']:.1f} vs weighted-exact "
            f"{top['weighted-exact']['width']:.1f}"
        ),
    )
