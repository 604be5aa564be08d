"""Environment steps per second of ``minto`` against ``dqn`` and against a plain torchrl DQN loop.

Usage: ``python plugins/quadriga-minto/benchmarks/bench_minto_speed.py [--frames 4000] [--repeats 3]``

All three train on CartPole-v1 with the same network (MLP 128-128), batch size, update ratio and
budget, in this process, the arms alternating order each repeat; the median over ``--repeats`` of
the per-repeat ratios of CPU-time rates (``time.process_time``) is reported. Targets: minto / dqn
>= 0.95 (the extra forward pass of the online network is MINTO's only cost) and dqn / plain torchrl
>= 0.9 (the framework's overhead; ``benchmarks/run_all.py`` compares dqn with a CleanRL-style loop).
"""

from __future__ import annotations

import argparse
import time

import torch

FRAMES_PER_BATCH, UPDATES_PER_BATCH, BATCH_SIZE, LEARNING_STARTS = 10, 5, 64, 500


def plain_torchrl(frames: int, seed: int) -> int:
    """A DQN loop written directly against torchrl (DQNLoss, Collector, replay buffer, HardUpdate)."""
    from tensordict.nn import TensorDictSequential
    from torchrl.collectors import Collector
    from torchrl.data import LazyTensorStorage, TensorDictReplayBuffer
    from torchrl.envs import GymEnv
    from torchrl.modules import MLP, EGreedyModule, QValueActor
    from torchrl.objectives import DQNLoss, HardUpdate

    torch.manual_seed(seed)
    env = GymEnv("CartPole-v1", categorical_action_encoding=True)
    env.set_seed(seed)
    qnet = MLP(in_features=4, out_features=2, num_cells=[128, 128], activation_class=torch.nn.ReLU)
    actor = QValueActor(qnet, in_keys=["observation"], spec=env.action_spec)
    explore = EGreedyModule(env.action_spec, eps_init=1.0, eps_end=0.05, annealing_num_steps=frames // 2)
    loss = DQNLoss(actor, loss_function="smooth_l1", delay_value=True, action_space="categorical")
    loss.make_value_estimator(gamma=0.99)
    updater = HardUpdate(loss, value_network_update_interval=100)
    optim = torch.optim.Adam(loss.parameters(), lr=2.5e-3)
    buffer = TensorDictReplayBuffer(storage=LazyTensorStorage(50_000), batch_size=BATCH_SIZE)
    collector = Collector(
        env,
        TensorDictSequential(actor, explore),
        frames_per_batch=FRAMES_PER_BATCH,
        total_frames=frames,
        init_random_frames=LEARNING_STARTS,
        auto_register_policy_transforms=False,
    )
    seen = 0
    for batch in collector:
        buffer.extend(batch.reshape(-1))
        seen += batch.numel()
        explore.step(batch.numel())
        if seen >= LEARNING_STARTS:
            for _ in range(UPDATES_PER_BATCH):
                out = loss(buffer.sample())
                optim.zero_grad()
                out["loss"].backward()
                torch.nn.utils.clip_grad_norm_(loss.parameters(), 10.0)
                optim.step()
                updater.step()
    collector.shutdown()
    return seen


def quadriga_learner(name: str, frames: int, seed: int) -> int:
    """Train the registered learner ``name`` (``dqn`` or ``minto``) with the same settings."""
    from quadriga_minto.learner import MINTO
    from quadriga_std.learners.dqn import DQN
    from quadriga_std.tasks.gym import GymEnv

    from quadriga.progress import StageProgress

    cls = {"dqn": DQN, "minto": MINTO}[name]
    learner = cls(
        total_frames=frames,
        frames_per_batch=FRAMES_PER_BATCH,
        num_updates_per_batch=UPDATES_PER_BATCH,
        batch_size=BATCH_SIZE,
        learning_starts=LEARNING_STARTS,
        eps_anneal_frames=frames // 2,
    )
    fit = learner.fit(
        GymEnv(env_id="CartPole-v1"), generator=torch.Generator().manual_seed(seed), progress=StageProgress()
    )
    return fit.info["env_steps"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    arms = {
        "plain-torchrl": lambda s: plain_torchrl(args.frames, s),
        "dqn": lambda s: quadriga_learner("dqn", args.frames, s),
        "minto": lambda s: quadriga_learner("minto", args.frames, s),
    }
    import statistics

    rates: dict[str, list[float]] = {name: [] for name in arms}
    for rep in range(args.repeats):  # the order alternates, so that other load hits every arm
        order = list(arms) if rep % 2 == 0 else list(arms)[::-1]
        for name in order:
            start = time.process_time()
            steps = arms[name](rep)
            rates[name].append(steps / (time.process_time() - start))
    for name, rate in rates.items():
        print(
            f"{name:14s} {statistics.median(rate):8.0f} env steps per CPU second (median of {args.repeats})"
        )
    minto = [m / d for m, d in zip(rates["minto"], rates["dqn"], strict=True)]
    dqn = [d / p for d, p in zip(rates["dqn"], rates["plain-torchrl"], strict=True)]
    print(f"minto / dqn          = {statistics.median(minto):.3f}  (target >= 0.95; per repeat {minto})")
    print(f"dqn / plain torchrl  = {statistics.median(dqn):.3f}  (per repeat {dqn})")


if __name__ == "__main__":
    main()
