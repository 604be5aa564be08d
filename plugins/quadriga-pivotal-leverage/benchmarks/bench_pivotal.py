"""Benchmark: pivotal leverage sampling against independent leverage sampling, in one run.

Two ratios, each against the baseline measured in the same process with the same seeds:

1. cost: seconds per design (draw + label query + weighted LS), pivotal / i.i.d. leverage,
   on the 1-D Legendre pool (n = 10^4, d = 40, k = 2d), median of repeated timings;
2. accuracy: on the ``pivotal-legendre`` grid (d = 10, 20, 40; k = 1.5d ... 12d) with R paired
   replicates (replicate r of both arms uses seed r), the geometric-mean ratio of the risk ratio
   at k = 2d, the ratio of mean k*/d (k* the first budget with risk ratio <= 1.25) and the
   log-log slopes of k* in d, each with a 95% BCa bootstrap interval (scipy.stats.bootstrap,
   paired resampling of replicates, 10^4 resamples); also the 2-D surrogate and diabetes pools
   (d = 66) at k = 2d and 3d.

Run: ``nice -n 10 python benchmarks/bench_pivotal.py [--replicates 200] [--out result.json]``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from quadriga_pivotal_leverage.evaluators import ExcessRisk
from quadriga_pivotal_leverage.observe import (
    log_risk_at,
    risk_table,
    samples_to_target,
    samples_to_target_slope,
)
from quadriga_pivotal_leverage.samplers import LeverageIID, PivotalLeverage
from quadriga_pivotal_leverage.tasks import DiabetesPoly, LegendreRegression, Surrogate2D
from scipy import stats

ARMS = {"pivotal-leverage": PivotalLeverage, "leverage-iid": LeverageIID}
MULTIPLES = (1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0)


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def timing(repeats: int) -> dict[str, float]:
    pool = LegendreRegression()
    pool.prepare(generator=_gen(0))
    out = {}
    for arm, cls in ARMS.items():
        sampler = cls(num_features=40, budget_per_feature=2.0)
        sampler.sample(pool, generator=_gen(0))  # warm the leverage/tree caches
        times = []
        for r in range(repeats):
            t = time.perf_counter()
            sampler.sample(pool, generator=_gen(r))
            times.append(time.perf_counter() - t)
        out[arm] = float(np.median(times))
    out["ratio"] = out["pivotal-leverage"] / out["leverage-iid"]
    return out


def grid_values(pool, replicates: int, ds, multiples) -> dict[str, float]:
    """``excess-risk`` values named like the pipeline's expansions: ``arm[d=..][m=..][r]/metric``."""
    evaluator = ExcessRisk()
    values: dict[str, float] = {}
    for d in ds:
        for m in multiples:
            subjects = {
                f"{arm}[num_features={d}][budget_per_feature={m}][{r}]": cls(
                    num_features=d, budget_per_feature=m
                ).sample(pool, generator=_gen(r))
                for arm, cls in ARMS.items()
                for r in range(replicates)
            }
            values.update(evaluator.evaluate(subjects, pool, generator=_gen(0)).values)
    return values


def _ci(statistic, *samples) -> tuple[float, float, float]:
    data = tuple(np.asarray(s, dtype=np.float64) for s in samples)
    res = stats.bootstrap(
        data, statistic, paired=True, n_resamples=10_000, method="BCa", rng=np.random.default_rng(0)
    )
    return float(statistic(*data)), float(res.confidence_interval.low), float(res.confidence_interval.high)


def _ratio_of_means(a, b, axis=-1):
    return np.mean(a, axis=axis) / np.mean(b, axis=axis)


def _gm_ratio(a, b, axis=-1):
    return np.exp(np.mean(a, axis=axis) - np.mean(b, axis=axis))


def _mean_diff(a, b, axis=-1):
    return np.mean(a, axis=axis) - np.mean(b, axis=axis)


def _mean(a, axis=-1):
    return np.mean(a, axis=axis)


def summarise(values, arms=tuple(ARMS), ds=(10, 20, 40)) -> dict:
    out: dict = {"per_d": {}}
    table = risk_table(values, arms)
    logs_by_d = log_risk_at(table, arms, 2.0)
    kst_by_d = samples_to_target(table, arms, 1.25)
    for d in ds:
        logs, kst = logs_by_d[f"d={d}"], kst_by_d[f"d={d}"]
        row = {
            "median_r_2d": {a: float(np.median(np.exp(logs[a]))) for a in arms},
            "gm_ratio_r_2d": _ci(_gm_ratio, logs[arms[0]], logs[arms[1]]),
            "mean_kstar_over_d": {a: float(np.mean(kst[a])) for a in arms},
            "kstar_ratio": _ci(_ratio_of_means, kst[arms[0]], kst[arms[1]]),
        }
        for m in MULTIPLES:
            k = round(m * d)
            row[f"median_r_{m}d"] = {
                a: float(np.median([curves[d][k] for curves in table[a].values()])) for a in arms
            }
        out["per_d"][d] = row
    slopes = samples_to_target_slope(table, arms, 1.25)
    out["claim_slope_difference"] = _ci(_mean_diff, slopes[arms[0]], slopes[arms[1]])
    out["slope"] = {a: _ci(_mean, slopes[a]) for a in arms}
    return out


def other_pools(replicates: int) -> dict:
    out = {}
    for name, pool in (("surrogate-2d", Surrogate2D()), ("diabetes-poly", DiabetesPoly())):
        pool.prepare(generator=_gen(0))
        d = pool.num_columns
        values = grid_values(pool, replicates, (d,), (2.0, 3.0))
        res = {}
        for m in (2.0, 3.0):
            sub = {k: v for k, v in values.items() if f"[budget_per_feature={m}]" in k}
            logs = log_risk_at(risk_table(sub, tuple(ARMS)), tuple(ARMS), m)[f"d={d}"]
            res[f"{m}d"] = {
                "median_r": {a: float(np.median(np.exp(logs[a]))) for a in ARMS},
                "gm_ratio": _ci(_gm_ratio, logs["pivotal-leverage"], logs["leverage-iid"]),
            }
        out[name] = {"d": d, **res}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=200)
    ap.add_argument("--other-replicates", type=int, default=100)
    ap.add_argument("--num-points", type=int, default=10_000)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    result = {"timing_seconds": timing(50)}
    pool = LegendreRegression(num_points=args.num_points)
    pool.prepare(generator=_gen(0))
    t = time.perf_counter()
    values = grid_values(pool, args.replicates, (10, 20, 40), MULTIPLES)
    result["legendre"] = summarise(values)
    result["other"] = other_pools(args.other_replicates)
    result["replicates"] = args.replicates
    result["seconds"] = time.perf_counter() - t
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
