"""Updates per CPU-second of ``qrl`` against ``gc-td-distance`` on the same maze and budget.

Usage: ``python plugins/quadriga-qrl/benchmarks/bench_qrl_speed.py [--updates 200] [--repeats 3]``

Both train on quadriga-std's default ``grid-maze`` (61 cells) from the same random-walk data with
the same budget (``--updates`` Adam steps of 256 transitions, MLPs [64, 64]), in this process,
alternating order each repeat; the median over ``--repeats`` of the per-repeat ratio of CPU-time
rates (``time.process_time``) is reported. QRL's extra work per step is the IQE head (a sort per
component) on four latent batches and the latent dynamics; the TD baseline runs one MLP on
``[s, g]`` and its target copy. Target: qrl / td >= 0.1 (measured 0.175, 100 updates, 3 repeats).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch


def _rate(learner, task, seed: int) -> float:
    from quadriga.progress import StageProgress

    start = time.process_time()
    learner.fit(task, generator=torch.Generator().manual_seed(seed), progress=StageProgress())
    return learner.num_updates / (time.process_time() - start)


def main() -> None:
    """Print the rates of each repeat and the median ratio qrl / td."""
    from quadriga_qrl.learner import QRL, GoalConditionedTD
    from quadriga_std.rl.graph_env import GridMaze

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    task = GridMaze()
    ratios = []
    for r in range(args.repeats):
        learners = [QRL(num_updates=args.updates), GoalConditionedTD(num_updates=args.updates)]
        if r % 2:
            learners.reverse()
        rates = {type(lrn).__name__: _rate(lrn, task, r) for lrn in learners}
        ratios.append(rates["QRL"] / rates["GoalConditionedTD"])
        print(f"repeat {r}: qrl {rates['QRL']:.1f} updates/s, td {rates['GoalConditionedTD']:.1f} updates/s")
    print(f"median ratio qrl / td = {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
