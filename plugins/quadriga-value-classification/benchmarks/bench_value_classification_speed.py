"""Environment steps per CPU second of ``dqn-hlgauss`` and ``dqn-twohot`` against quadriga-std's ``dqn``.

Usage: ``python plugins/quadriga-value-classification/benchmarks/bench_value_classification_speed.py
[--frames 3000] [--repeats 2]``

All three train on CartPole-v1 with the same trunk (MLP 128-128), batch size, update ratio and budget,
one after the other in this process (after an untimed warm-up run of each); the categorical learners use
51 bins on [-10, 110]. The best of ``--repeats`` CPU times (``time.process_time``, robust to other load
on the machine) is reported; every arm makes the same number of updates for the same budget.
Target: hlgauss / dqn >= 0.8 and twohot / dqn >= 0.8 (the extra cost is the wider last layer,
num_actions x 51 outputs, the softmax for Q and the target projection).
"""

from __future__ import annotations

import argparse
import time

import torch

SETTINGS = {
    "frames_per_batch": 10,
    "num_updates_per_batch": 5,
    "batch_size": 64,
    "learning_starts": 500,
}


def train(name: str, frames: int, seed: int) -> int:
    """Train learner ``name`` (``dqn``, ``dqn-hlgauss`` or ``dqn-twohot``); returns the env steps taken."""
    from quadriga_std.learners.dqn import DQN
    from quadriga_std.tasks.gym import GymEnv
    from quadriga_value_classification.learner import DQNHLGauss, DQNTwoHot

    from quadriga.progress import StageProgress

    common = {**SETTINGS, "total_frames": frames, "eps_anneal_frames": frames // 2}
    learner = {
        "dqn": lambda: DQN(**common, loss_function="l2"),
        "dqn-hlgauss": lambda: DQNHLGauss(**common, v_min=-10.0, v_max=110.0),
        "dqn-twohot": lambda: DQNTwoHot(**common, v_min=-10.0, v_max=110.0),
    }[name]()
    fit = learner.fit(
        GymEnv(env_id="CartPole-v1"), generator=torch.Generator().manual_seed(seed), progress=StageProgress()
    )
    return fit.info["env_steps"]


def main() -> None:
    """Run the benchmark and print the rates and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(1)
    names = ("dqn", "dqn-hlgauss", "dqn-twohot")
    for name in names:  # untimed warm-up: imports and first-call costs are not charged to the first arm
        train(name, SETTINGS["learning_starts"] + 100, 0)
    best: dict[str, float] = {}
    for rep in range(args.repeats):
        for name in names:
            start = time.process_time()
            steps = train(name, args.frames, rep)
            best[name] = max(best.get(name, 0.0), steps / (time.process_time() - start))
    for name, rate in best.items():
        print(f"{name:12s} {rate:8.0f} env steps per CPU second")
    print(f"dqn-hlgauss / dqn = {best['dqn-hlgauss'] / best['dqn']:.3f}  (target >= 0.8)")
    print(f"dqn-twohot / dqn  = {best['dqn-twohot'] / best['dqn']:.3f}  (target >= 0.8)")


if __name__ == "__main__":
    main()
