"""Sequences per CPU-second of ``gdc`` against ``reinforce-sequence`` on the same sequence space.

Usage: ``python plugins/quadriga-gdc/benchmarks/bench_gdc_speed.py [--updates 300] [--repeats 3]``

Both train the same full-context tabular policy on quadriga-std's ``sequence-space`` (V = 4, L = 5,
1024 sequences) with the same budget (``--updates`` steps of 256 sequences), in this process,
alternating order each repeat; the median over ``--repeats`` of the per-repeat ratio of CPU-time
rates (``time.process_time``) is reported. GDC's extra work per step is the importance weight
``P / q`` and, every 10 steps, the proposal check; both learners pass once over the 1024
sequences per step. Target: gdc / reinforce >= 0.7.
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
    return learner.num_updates * learner.batch_size / (time.process_time() - start)


def main() -> None:
    """Print the rates of each repeat and the median ratio gdc / reinforce."""
    from quadriga_gdc.gdc import GDC, Reinforce
    from quadriga_std.sequences.space import SequenceSpace

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    task = SequenceSpace(min_count=3)
    task.prepare(generator=torch.Generator().manual_seed(0))
    ratios = []
    for r in range(args.repeats):
        learners = [GDC(num_updates=args.updates), Reinforce(num_updates=args.updates)]
        if r % 2:
            learners.reverse()
        rates = {type(lrn).__name__: _rate(lrn, task, r) for lrn in learners}
        ratios.append(rates["GDC"] / rates["Reinforce"])
        print(f"repeat {r}: gdc {rates['GDC']:.0f} seq/s, reinforce {rates['Reinforce']:.0f} seq/s")
    print(f"median ratio gdc / reinforce = {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
