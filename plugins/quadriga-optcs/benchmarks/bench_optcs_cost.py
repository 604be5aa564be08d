"""Cost of OptCS against its baselines, in one run.

1. The OptCS-MSel p-value step (``optcs_msel``: K auxiliary BH runs per test unit, vectorised over
   the test units) against a literal port of the official per-unit loop
   (``simulation/MSel/choosescore_Jin.py``) on the same scores: both give the same ``R_j``; the
   printed ratio is loop time / vectorised time.
2. A whole ``optcs`` estimate against a ``split-selection`` estimate on the same dataset and
   candidates (models fitted once and shared, as in a pipeline replicate): the printed ratio is
   OptCS time / split time, i.e. what the correction for the data reuse costs on top of the baseline.

Setting: Jin-Candès setting 2, d = 20, n_train = 500, n = 100 calibration, m = 100 test units,
K = 6 candidates, q = 0.1 and 0.2 (the ``optcs-synthetic`` pipeline). Best of ``--repeats`` runs.

Run: ``.venv/bin/python plugins/quadriga-optcs/benchmarks/bench_optcs_cost.py [--repeats 3]``
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np
import torch
from quadriga_optcs.estimators import OptCS, SplitSelection
from quadriga_optcs.selection import benjamini_hochberg, optcs_msel
from quadriga_optcs.synthetic import SyntheticSelection

MODELS = [
    "ridge",
    "lasso",
    "random-forest-shallow",
    "random-forest-small",
    "gradient-boosting-small",
    "knn-50",
]


def official_loop(vc: np.ndarray, vt: np.ndarray, q: float) -> np.ndarray:
    """``R_j = max_k |BH(aux^{k, j})|`` computed unit by unit as the official code does."""
    K, m = vt.shape
    n = vc.shape[1]
    best = np.zeros(m, int)
    for j in range(m):
        for k in range(K):
            aux = (np.sum(vc[k][None, :] <= vt[k][:, None], axis=1) + (vt[k, j] <= vt[k])) / (n + 1)
            aux[j] = 0.0
            best[j] = max(best[j], int(benjamini_hochberg(aux, q).sum()))
    return best


def best_of(fn, repeats: int) -> float:
    """The shortest of ``repeats`` wall-clock times of ``fn()`` (seconds; garbage collection left on)."""
    return min(timeit.repeat(fn, setup="gc.enable()", number=1, repeat=repeats))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    data = SyntheticSelection(setting=2, dim=20, n_train=500, n_calibration=100, n_test=100)
    data.prepare(generator=torch.Generator().manual_seed(0))
    optcs = OptCS(models=MODELS, threshold=0.0)
    split = SplitSelection(models=MODELS, threshold=0.0)
    s, mu_cal, mu_test, _ = optcs._prepare(data, torch.Generator().manual_seed(1))  # fits once
    vc, vt = optcs._scores(s, mu_cal, mu_test)
    rng = np.random.default_rng(0)
    assert (optcs_msel(vc, vt, 0.2, rng)[1] == official_loop(vc, vt, 0.2)).all()
    t_vec = best_of(lambda: optcs_msel(vc, vt, 0.2, rng), args.repeats)
    t_loop = best_of(lambda: official_loop(vc, vt, 0.2), args.repeats)
    print(
        f"p-value step, K = {len(MODELS)}, n = 100, m = 100: vectorised {t_vec * 1e3:.1f} ms, "
        f"official loop {t_loop * 1e3:.1f} ms, ratio {t_loop / t_vec:.1f}x"
    )
    t_opt = best_of(lambda: optcs.estimate(data, generator=torch.Generator().manual_seed(1)), args.repeats)
    t_split = best_of(lambda: split.estimate(data, generator=torch.Generator().manual_seed(1)), args.repeats)
    print(
        f"estimate (candidates fitted once, shared): optcs {t_opt * 1e3:.1f} ms, "
        f"split-selection {t_split * 1e3:.1f} ms, ratio {t_opt / t_split:.2f}x"
    )


if __name__ == "__main__":
    main()
