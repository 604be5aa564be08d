"""Environment steps per CPU-second of ``md3qn`` against ``dqn`` (summed reward) on the same chain.

Usage: ``python plugins/quadriga-md3qn/benchmarks/bench_md3qn_speed.py [--frames 2000] [--repeats 3]``

Both train on quadriga-std's ``vector-reward-chain`` (2 sources, rho 0.6) with the same MLP trunk
(64-64), batch size, update ratio and budget, in this process, alternating order each repeat; the
median over ``--repeats`` of the per-repeat ratio of CPU-time rates (``time.process_time``) is
reported. MD3QN's extra cost is its head (A x N x K outputs) and the MMD^2 over N x N particle
pairs per transition; the target is md3qn / dqn >= 0.15 at N = 32 (measured: 0.19-0.20).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch


def _rate(cls, frames: int, seed: int, **extra) -> float:
    from quadriga_std.rl.vector_env import VectorRewardChain

    from quadriga.progress import StageProgress

    learner = cls(
        total_frames=frames,
        learning_starts=200,
        eps_anneal_frames=frames // 2,
        gamma=0.9,
        learning_rate=1e-3,
        hidden_sizes=[64, 64],
        batch_size=32,
        **extra,
    )
    start = time.process_time()
    learner.fit(VectorRewardChain(), generator=torch.Generator().manual_seed(seed), progress=StageProgress())
    return frames / (time.process_time() - start)


def main() -> None:
    """Print the rates of each repeat and the median ratio md3qn / dqn."""
    from quadriga_md3qn.learner import MD3QN
    from quadriga_std.learners.dqn import DQN

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    ratios = []
    for r in range(args.repeats):
        arms = [("dqn", DQN, {}), ("md3qn", MD3QN, {"num_particles": 32})]
        rates = {
            name: _rate(cls, args.frames, r, **kw) for name, cls, kw in (arms if r % 2 == 0 else arms[::-1])
        }
        ratios.append(rates["md3qn"] / rates["dqn"])
        print(
            f"repeat {r}: dqn {rates['dqn']:.0f} steps/s, md3qn {rates['md3qn']:.0f} steps/s, "
            f"ratio {ratios[-1]:.3f}"
        )
    print(f"median ratio md3qn / dqn over {args.repeats} repeats: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
