"""Cost of Prospect against its baselines in one run: seconds per pass and seconds to 1e-6.

Same task, same index stream: superquantile (q = 0.5) least squares on load_diabetes
(354 train rows, ``spectral-risk-data`` defaults), step size 0.03 for every method (the value the
shared grid picks for the variance-reduced ones there). Prints, per method, the best-of-``repeats`` wall time
of ``passes`` passes, seconds per pass, and the seconds to reach relative suboptimality 1e-6
against the L-BFGS optimum, then the ratios Prospect / baseline. Prospect re-sorts the loss table
and runs one isotonic regression per step (O(n log n)), so its per-pass cost is above LSVRG's
per-step O(d) work even though LSVRG evaluates three gradients per step.

    .venv/bin/python plugins/quadriga-prospect/benchmarks/bench_prospect_cost.py [--passes 40] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from quadriga_prospect.evaluators import relative_suboptimality
from quadriga_prospect.optimizers import METHODS, lbfgs_optimum
from quadriga_prospect.tasks import SpectralRiskData

from quadriga.threads import single_thread


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.03)
    args = parser.parse_args()
    task = SpectralRiskData(dataset="diabetes")
    task.prepare(generator=torch.Generator().manual_seed(0))
    obj = task.objective("train")
    f_star, _ = lbfgs_optimum(obj)
    rows = {}
    with single_thread():
        for name, run in METHODS.items():
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                trace = run(obj, args.lr, args.passes, np.random.default_rng(0))
                times.append(time.perf_counter() - start)
            per_pass = min(times) / (len(trace.objective) - 1)
            rel = relative_suboptimality(trace.objective, f_star)
            hit = np.flatnonzero(rel <= 1e-6)
            rows[name] = (
                per_pass,
                per_pass * hit[0] if hit.size else float("inf"),
                int(hit[0]) if hit.size else None,
            )
    print(f"diabetes n = {obj.n}, lr = {args.lr}, {args.passes} passes, best of {args.repeats}")
    print(f"{'method':12s} {'s/pass':>9s} {'passes to 1e-6':>15s} {'s to 1e-6':>10s}")
    for name, (per_pass, to_tol, passes) in rows.items():
        print(f"{name:12s} {per_pass:9.4f} {passes if passes is not None else '-':>15} {to_tol:10.3f}")
    base = rows["prospect"]
    for name, (per_pass, to_tol, _) in rows.items():
        if name != "prospect":
            to = f"{base[1] / to_tol:.2f}x" if np.isfinite(to_tol) else f"n/a ({name} did not reach 1e-6)"
            print(f"prospect / {name}: time per pass {base[0] / per_pass:.2f}x, time to 1e-6 {to}")


if __name__ == "__main__":
    main()
