"""Benchmark: fm-smc against its baseline fm-is in the same run, at equal velocity evaluations.

Runs both samplers on the 16-D posterior of ``fm-smc-gmm16d`` (K = 1024, 50 Heun steps) for
``--replicates`` paired seeds and prints the ratio (fm-smc / fm-is) of the mean energy distance to
2000 exact posterior draws (with a paired percentile-bootstrap 95% interval), of the mean ESS
fraction, and of the wall time per run (one intra-op thread).

    python plugins/quadriga-fm-smc/benchmarks/bench_fm_smc.py --replicates 5
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from quadriga.seeding import derive_seed, make_generator
from quadriga.threads import single_thread


def main() -> None:
    """Run the benchmark and print one line per ratio."""
    from quadriga_fm_smc.samplers import FMSMC, FMImportanceSampling
    from quadriga_fm_smc.study import compare, make_task, summarise

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=5)
    parser.add_argument("--dim", type=int, default=16)
    args = parser.parse_args()
    task = make_task(args.dim)
    with single_thread():
        rows = compare(task, ks=(1024,), replicates=args.replicates, samplers=("fm-smc", "fm-is"))
        seconds = {}
        for name, cls in (("fm-smc", FMSMC), ("fm-is", FMImportanceSampling)):
            start = time.perf_counter()
            for i in range(args.replicates):
                cls(num_particles=1024, num_steps=50).sample(
                    task, generator=make_generator(derive_seed(0, f"t{i}"))
                )
            seconds[name] = (time.perf_counter() - start) / args.replicates
    s = summarise(rows)
    ratio, lo, hi = s["ratios"][("fm-is", 1024)]
    ess = {
        r["sampler"]: np.mean([x["ess_fraction"] for x in rows if x["sampler"] == r["sampler"]]) for r in rows
    }
    print(f"d = {args.dim}, K = 1024, n = {args.replicates} paired replicates, 100 velocity evals each")
    print(
        f"energy distance fm-smc / fm-is: {ratio:.3f} [{lo:.3f}, {hi:.3f}] (paired percentile bootstrap, 95%)"
    )
    print(f"ESS fraction: fm-smc {ess['fm-smc']:.3f}, fm-is {ess['fm-is']:.4f}")
    print(
        f"seconds per run: fm-smc {seconds['fm-smc']:.2f}, fm-is {seconds['fm-is']:.2f}, "
        f"ratio {seconds['fm-smc'] / seconds['fm-is']:.2f}"
    )


if __name__ == "__main__":
    main()
