"""Sequences per CPU-second of ``flowrl`` against ``grpo-sequence`` on the same sequence space.

Usage: ``python plugins/quadriga-flowrl/benchmarks/bench_flowrl_speed.py [--updates 300] [--repeats 3]``

Both train the same full-context tabular policy on quadriga-std's ``sequence-space`` (the
pipeline's test bed: V = 4, L = 3, 4 correct answers) with the same budget (``--updates`` updates
of 16 sequences), in this process, alternating order each repeat; the median over ``--repeats``
of the per-repeat ratio of CPU-time rates (``time.process_time``) is reported. FlowRL's extra work
per update is the residual and the scalar ``log Z``; GRPO's is the per-token clipped ratio.
Target: flowrl / grpo >= 0.7.
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
    return learner.num_updates * learner.group_size / (time.process_time() - start)


def main() -> None:
    """Print the rates of each repeat and the median ratio flowrl / grpo."""
    from quadriga_flowrl.flowrl import FlowRL, GRPOSequence
    from quadriga_std.sequences.space import SequenceSpace

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    task = SequenceSpace(
        vocab_size=4,
        length=3,
        base_model="tabular",
        concentration=10.0,
        feature_kind="answers",
        answer_skew=3.0,
    )
    task.prepare(generator=torch.Generator().manual_seed(0))
    ratios = []
    for r in range(args.repeats):
        learners = [
            FlowRL(num_updates=args.updates, beta=1.0, learning_rate=0.05),
            GRPOSequence(num_updates=args.updates, learning_rate=0.05),
        ]
        if r % 2:
            learners.reverse()
        rates = {type(lrn).__name__: _rate(lrn, task, r) for lrn in learners}
        ratios.append(rates["FlowRL"] / rates["GRPOSequence"])
        print(f"repeat {r}: flowrl {rates['FlowRL']:.0f} seq/s, grpo {rates['GRPOSequence']:.0f} seq/s")
    print(f"median ratio flowrl / grpo = {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
