"""MINTO's headline claims as runnable checks (``quadriga verify quadriga-minto``).

Both claims read the same runs of the ``cartpole-minto`` pipeline (three learners, two seeds
each per run): ``smoke`` runs it once with a short budget (seconds; checks that the numbers are
produced and finite), ``paper`` runs it under ``PAPER_ROOT_SEEDS`` root seeds, i.e. 10 seeds per
learner, with ``PAPER_FRAMES`` environment steps per learner (the early-learning phase, where a
faster target rule shows in the area under the curve; 10 x 3 runs fit in about 15 CPU-minutes),
the root seeds in parallel processes (``QUADRIGA_MINTO_WORKERS``, default: the CPU count).

Source: Hendawy et al. 2025, "Use the Online Network If You Can" (arXiv 2510.02590), sec. 4-5.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from quadriga.claims import ClaimResult

__all__ = [
    "METHODS",
    "PAPER_FRAMES",
    "PAPER_ROOT_SEEDS",
    "auc_claim",
    "bootstrap_mean_difference",
    "collect",
    "overestimation_claim",
    "paper_overrides",
    "smoke_overrides",
]

PIPELINE = "cartpole-minto"
METHODS = ("dqn", "dqn-online", "minto")
SEEDS_PER_RUN = 2
PAPER_ROOT_SEEDS = (0, 1, 2, 3, 4)
PAPER_FRAMES = 8000
_CACHE: dict[tuple[str, str], dict[str, Any]] = {}


def smoke_overrides() -> list[str]:
    """``--set`` strings giving the smoke budget (1200 env steps per learner, short evaluations)."""
    out = []
    for method in METHODS:
        for s in range(SEEDS_PER_RUN):
            st = f"stage.{method}-s{s}"
            out += [f"{st}.total_frames=1200", f"{st}.learning_starts=300", f"{st}.eps_anneal_frames=600"]
    return [
        *out,
        "stage.episode-return.num_episodes=2",
        "stage.q-overestimation.num_episodes=1",
        "stage.q-overestimation.tail_steps=50",
        "stage.return-curve.num_points=20",
    ]


def paper_overrides() -> list[str]:
    """``--set`` strings giving the paper-scale budget (``PAPER_FRAMES`` env steps per learner)."""
    out = []
    for method in METHODS:
        for s in range(SEEDS_PER_RUN):
            st = f"stage.{method}-s{s}"
            out += [
                f"{st}.total_frames={PAPER_FRAMES}",
                f"{st}.learning_starts=500",
                f"{st}.eps_anneal_frames=3000",
            ]
    return out


def _one_run(seed: int, overrides: list[str], out: str) -> dict[str, Any]:
    from quadriga import api

    res = api.run(PIPELINE, seed=seed, overrides=overrides, out=out)
    curve = res.artifacts["return-curve"].values
    final = res.artifacts["episode-return"].values
    over = res.artifacts["q-overestimation"].values
    rows = []
    for method in METHODS:
        for s in range(SEEDS_PER_RUN):
            st = f"{method}-s{s}"
            rows.append(
                {
                    "root_seed": seed,
                    "stage": st,
                    "method": method,
                    "auc": curve[f"{st}/auc"],
                    "final_return": final[f"{st}/mean_return"],
                    "q_overestimation": over[f"{st}/q_overestimation"],
                }
            )
    figure = Path(out) / "return-curve-return_curve.png"
    return {"rows": rows, "figure": str(figure) if figure.exists() else ""}


def collect(scale: str, out_dir: Path) -> dict[str, Any]:
    """Run (once per process and scale) the pipelines behind both claims.

    Args:
        scale: ``"smoke"`` or ``"paper"``.
        out_dir: where the run directories go.

    Returns:
        ``{"rows": [{root_seed, stage, method, auc, final_return, q_overestimation}], "figure": path}``.
    """
    key = (scale, PIPELINE)
    if key in _CACHE:
        return _CACHE[key]
    runs_dir = Path(out_dir) / "runs"
    if scale == "smoke":
        outs = [_one_run(0, smoke_overrides(), str(runs_dir / "seed0"))]
    else:
        workers = max(
            1, min(len(PAPER_ROOT_SEEDS), int(os.environ.get("QUADRIGA_MINTO_WORKERS", os.cpu_count() or 1)))
        )
        with ProcessPoolExecutor(max_workers=workers) as pool:
            outs = list(
                pool.map(
                    _one_run,
                    PAPER_ROOT_SEEDS,
                    [paper_overrides()] * len(PAPER_ROOT_SEEDS),
                    [str(runs_dir / f"seed{s}") for s in PAPER_ROOT_SEEDS],
                )
            )
    result = {"rows": [r for o in outs for r in o["rows"]], "figure": outs[0]["figure"]}
    _CACHE[key] = result
    return result


def bootstrap_mean_difference(
    a: list[float], b: list[float], *, num_resamples: int = 10_000, seed: int = 0
) -> tuple[float, float, float]:
    """Mean of ``a`` minus mean of ``b`` with a percentile bootstrap 95% interval (unpaired resampling).

    Returns:
        ``(difference, low, high)`` in the units of the inputs.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    x, y = np.asarray(a, float), np.asarray(b, float)
    diffs = x[rng.integers(0, len(x), (num_resamples, len(x)))].mean(1) - y[
        rng.integers(0, len(y), (num_resamples, len(y)))
    ].mean(1)
    low, high = np.percentile(diffs, [2.5, 97.5])
    return float(x.mean() - y.mean()), float(low), float(high)


def _by_method(rows: list[dict[str, Any]], key: str) -> dict[str, list[float]]:
    return {m: [r[key] for r in rows if r["method"] == m] for m in METHODS}


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| method | seeds | AUC (mean +- se) | final greedy return | Q overestimation |",
        "|---|---|---|---|---|",
    ]
    for m in METHODS:
        sel = [r for r in rows if r["method"] == m]

        def ms(k, sel=sel):
            v = [r[k] for r in sel]
            mu = sum(v) / len(v)
            se = math.sqrt(sum((x - mu) ** 2 for x in v) / max(len(v) - 1, 1) / len(v))
            return f"{mu:.1f} +- {se:.1f}"

        lines.append(f"| {m} | {len(sel)} | {ms('auc')} | {ms('final_return')} | {ms('q_overestimation')} |")
    return "\n".join(lines)


def _finite(values: dict[str, list[float]]) -> bool:
    return all(math.isfinite(v) for vs in values.values() for v in vs)


def auc_claim(scale: str, *, out_dir: Path) -> ClaimResult:
    """MINTO's area under the return curve on CartPole-v1 is at least DQN's (target network).

    Returns:
        ClaimResult with the mean AUC difference (return units; AUC is the step-normalised area)
        and its bootstrap 95% interval; ``passed`` at paper scale iff the difference is >= 0,
        at smoke scale iff every number is finite.
    """
    data = collect(scale, out_dir)
    auc = _by_method(data["rows"], "auc")
    diff, low, high = bootstrap_mean_difference(auc["minto"], auc["dqn"])
    online_diff = bootstrap_mean_difference(auc["minto"], auc["dqn-online"])
    numbers = {
        "auc_minto": sum(auc["minto"]) / len(auc["minto"]),
        "auc_dqn": sum(auc["dqn"]) / len(auc["dqn"]),
        "auc_dqn_online": sum(auc["dqn-online"]) / len(auc["dqn-online"]),
        "auc_diff_minto_minus_dqn": diff,
        "ci95_low": low,
        "ci95_high": high,
        "auc_diff_minto_minus_online": online_diff[0],
        "seeds_per_method": len(auc["minto"]),
    }
    passed = _finite(auc) and (scale == "smoke" or diff >= 0)
    summary = (
        f"AUC(minto) - AUC(dqn) = {diff:.1f} [95% bootstrap CI {low:.1f}, {high:.1f}] over "
        f"{len(auc['minto'])} seeds (claim: >= 0); AUC minto {numbers['auc_minto']:.1f}, dqn "
        f"{numbers['auc_dqn']:.1f}, dqn-online {numbers['auc_dqn_online']:.1f}"
    )
    figures = {"return_curve": data["figure"]} if data["figure"] else {}
    return ClaimResult(
        passed=passed, summary=summary, numbers=numbers, figures=figures, table=_table(data["rows"])
    )


def overestimation_claim(scale: str, *, out_dir: Path) -> ClaimResult:
    """MINTO's Q-overestimation stays bounded where online-only bootstrapping's is larger.

    Returns:
        ClaimResult with the mean Q(s, a) - G(s) of each learner on greedy evaluation episodes
        (return units); ``passed`` at paper scale iff MINTO's mean is below ``dqn-online``'s.
    """
    data = collect(scale, out_dir)
    over = _by_method(data["rows"], "q_overestimation")
    diff, low, high = bootstrap_mean_difference(over["minto"], over["dqn-online"])
    means = {m: sum(v) / len(v) for m, v in over.items()}
    numbers = {
        "q_over_minto": means["minto"],
        "q_over_dqn": means["dqn"],
        "q_over_dqn_online": means["dqn-online"],
        "diff_minto_minus_online": diff,
        "ci95_low": low,
        "ci95_high": high,
    }
    passed = _finite(over) and (scale == "smoke" or diff < 0)
    summary = (
        f"mean Q - G: minto {means['minto']:.2f}, dqn {means['dqn']:.2f}, dqn-online "
        f"{means['dqn-online']:.2f}; minto - online = {diff:.2f} [95% CI {low:.2f}, {high:.2f}] (claim: < 0)"
    )
    return ClaimResult(passed=passed, summary=summary, numbers=numbers, table=_table(data["rows"]))
