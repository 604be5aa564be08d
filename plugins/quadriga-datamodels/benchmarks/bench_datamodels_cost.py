"""Benchmark: datamodels' cost and LDS against exact-Hessian influence functions, in one run.

On breast cancer (logistic regression, 400 training points, 50 targets), times datamodels
from ``m`` fresh subset models (nothing cached) and influence functions with one damping, and
scores both on the same 100 fresh half subsets. Prints the time ratio datamodels / IF and
both LDS (mean over targets with a Student-t interval). Usage::

    python plugins/quadriga-datamodels/benchmarks/bench_datamodels_cost.py [--models 500]
"""

from __future__ import annotations

import argparse
import time


def main() -> dict[str, float]:
    """Run the benchmark and print the ratio; returns the measured numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=500)
    parser.add_argument("--targets", type=int, default=50)
    args = parser.parse_args()

    from quadriga_datamodels.datamodels import Datamodels
    from quadriga_std.attribution import LDS, AttributionTask, InfluenceFunctions

    from quadriga.seeding import make_generator
    from quadriga.threads import single_thread

    task = AttributionTask(num_train=400, num_targets=args.targets, cache_dir="")
    task.prepare(generator=make_generator(0))
    with single_thread():
        start = time.perf_counter()
        dm = Datamodels(num_models=args.models).estimate(task, generator=make_generator(1))
        dm_s = time.perf_counter() - start
        start = time.perf_counter()
        inf = InfluenceFunctions().estimate(task, generator=make_generator(2))
        if_s = time.perf_counter() - start
        m = LDS(num_subsets=100).evaluate(
            {"datamodels": dm, "influence": inf}, task, generator=make_generator(3)
        )
    v = m.values
    out = {"datamodels_s": dm_s, "influence_s": if_s, "ratio": dm_s / if_s}
    print(
        f"datamodels (m = {args.models}): {dm_s:.2f} s, LDS {v['datamodels/lds']:.3f} "
        f"[{v['datamodels/lds_low']:.3f}, {v['datamodels/lds_high']:.3f}]"
    )
    print(
        f"influence functions:         {if_s:.2f} s, LDS {v['influence/lds']:.3f} "
        f"[{v['influence/lds_low']:.3f}, {v['influence/lds_high']:.3f}]"
    )
    print(f"time ratio datamodels / IF: {out['ratio']:.1f}x")
    return out


if __name__ == "__main__":
    main()
