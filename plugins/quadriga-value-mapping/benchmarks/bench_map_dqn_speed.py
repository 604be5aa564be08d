"""Environment steps per CPU-second of ``map-dqn`` against ``dqn`` on the same reward-scaled task.

Usage: ``python plugins/quadriga-value-mapping/benchmarks/bench_map_dqn_speed.py [--frames N] [--repeats R]``

Both train on CartPole-v1 with rewards x 0.01 (quadriga-std's ``reward-wrapped-gym-env``) with dqn's
defaults (MLP 128-128, batch 64, 5 updates per 10 steps) at gamma 0.96 and the same budget, in this
process, alternating order each repeat; the median over ``--repeats`` of the per-repeat ratio of
CPU-time rates (``time.process_time``) is reported. Map-DQN's extra cost is its doubled head (A x 2
outputs), the inverse mapping of the online and target networks' outputs and the per-channel
targets with their diagnostics; measured 2026-12-02: ratio 0.59-0.61 (median 0.60, 3 repeats).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch


def _rate(cls, frames: int, seed: int) -> float:
    from quadriga_std.tasks.reward_wrappers import RewardWrappedGymEnv

    from quadriga.progress import StageProgress

    learner = cls(total_frames=frames, learning_starts=200, eps_anneal_frames=frames // 2, gamma=0.96)
    task = RewardWrappedGymEnv(env_id="CartPole-v1", reward_scale=0.01)
    start = time.process_time()
    learner.fit(task, generator=torch.Generator().manual_seed(seed), progress=StageProgress())
    return frames / (time.process_time() - start)


def main() -> None:
    """Print the rates of each repeat and the median ratio map-dqn / dqn."""
    from quadriga_std.learners.dqn import DQN
    from quadriga_value_mapping.deep import MapDQN

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    ratios = []
    for r in range(args.repeats):
        arms = [("dqn", DQN), ("map-dqn", MapDQN)]
        rates = {name: _rate(cls, args.frames, r) for name, cls in (arms if r % 2 == 0 else arms[::-1])}
        ratios.append(rates["map-dqn"] / rates["dqn"])
        print(
            f"repeat {r}: dqn {rates['dqn']:.0f} steps/s, map-dqn {rates['map-dqn']:.0f} steps/s, "
            f"ratio {ratios[-1]:.3f}"
        )
    print(f"median ratio map-dqn / dqn over {args.repeats} repeats: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
