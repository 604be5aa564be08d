"""Benchmark: MAGIC's cost in training runs and against exact-Hessian influence functions, in one run.

On a digits MLP (32 GELU units, 200 full-batch steps, ``--train`` points, ``--targets`` targets),
times one training run, MAGIC's metagradients of every target and influence functions with one
damping. Prints MAGIC / one training run (its cost in training-run equivalents) and MAGIC / IF.
Usage::

    python plugins/quadriga-magic/benchmarks/bench_magic_cost.py [--train 300] [--targets 20]
"""

from __future__ import annotations

import argparse
import time


def main() -> dict[str, float]:
    """Run the benchmark and print the ratios; returns the measured numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=300)
    parser.add_argument("--targets", type=int, default=20)
    args = parser.parse_args()

    import torch
    from quadriga_magic.magic import metagradients
    from quadriga_std.attribution import AttributionTask, influence_scores

    from quadriga.seeding import make_generator
    from quadriga.threads import single_thread

    task = AttributionTask(
        dataset="digits",
        num_train=args.train,
        num_targets=args.targets,
        hidden_sizes=(32,),
        learning_rate=0.5,
        weight_decay=1e-3,
        cache_dir="",
    )
    task.prepare(generator=make_generator(0))
    tmap = task.training_map()
    with single_thread():
        start = time.perf_counter()
        with torch.no_grad():
            tmap.train(torch.ones(tmap.n, dtype=torch.float64))
        run_s = time.perf_counter() - start
        start = time.perf_counter()
        metagradients(tmap, *task.targets())
        magic_s = time.perf_counter() - start
        start = time.perf_counter()
        influence_scores(tmap, *task.targets(), dampings=(0.01,))
        if_s = time.perf_counter() - start
    out = {"run_s": run_s, "magic_s": magic_s, "influence_s": if_s}
    print(
        f"one training run: {run_s:.2f} s; MAGIC ({args.targets} targets): {magic_s:.2f} s; IF: {if_s:.2f} s"
    )
    print(
        f"MAGIC / one run: {magic_s / run_s:.1f}x ({magic_s / run_s / args.targets:.2f} per target); "
        f"MAGIC / IF: {magic_s / if_s:.2f}x"
    )
    return out


if __name__ == "__main__":
    main()
