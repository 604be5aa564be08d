"""Environment steps per CPU second of quadriga-std's ``dqn`` against a plain CleanRL-style PyTorch loop.

Usage: ``python plugins/quadriga-std/benchmarks/bench_dqn_speed.py [--frames 3000] [--repeats 3]``

Both train on CartPole-v1 with the same work: MLP 128-128 (ReLU), Adam (lr 2.5e-3), batch 64,
replay capacity 50 000, 5 updates after every 10 environment steps once 500 steps are stored,
Huber loss, gradient-norm clip 10, hard target copy every 100 updates, epsilon annealed linearly
from 1 to 0.05 over half the budget. The baseline is written the way CleanRL's ``dqn.py`` is
(Huang et al. 2022, "CleanRL: High-quality Single-file Implementations of Deep Reinforcement
Learning Algorithms", JMLR 23(274)): gymnasium stepped directly, a numpy replay buffer, a second
``nn.Module`` as target network. Repeats alternate the order of the two arms (A B, B A, ...) so
that other load on the machine hits both; the ratio dqn / baseline of steps per CPU second
(``time.process_time``) is reported per repeat and as their median (target >= 0.95).
"""

from __future__ import annotations

import argparse
import statistics
import time

FRAMES_PER_BATCH, UPDATES_PER_BATCH, BATCH_SIZE, LEARNING_STARTS = 10, 5, 64, 500
BUFFER, LR, GAMMA, TARGET_PERIOD, CLIP = 50_000, 2.5e-3, 0.99, 100, 10.0


def cleanrl_loop(frames: int, seed: int) -> int:
    """DQN as a single-file CleanRL-style loop; returns the number of environment steps taken."""
    import random

    import gymnasium as gym
    import numpy as np
    import torch
    import torch.nn.functional as F

    torch.manual_seed(seed)
    random.seed(seed)
    env = gym.make("CartPole-v1")
    obs_dim, n_actions = env.observation_space.shape[0], int(env.action_space.n)

    def net() -> torch.nn.Module:
        return torch.nn.Sequential(
            torch.nn.Linear(obs_dim, 128),
            torch.nn.ReLU(),
            torch.nn.Linear(128, 128),
            torch.nn.ReLU(),
            torch.nn.Linear(128, n_actions),
        )

    q_network, target_network = net(), net()
    target_network.load_state_dict(q_network.state_dict())
    optimizer = torch.optim.Adam(q_network.parameters(), lr=LR)
    obs_buf = np.zeros((BUFFER, obs_dim), np.float32)
    next_buf = np.zeros((BUFFER, obs_dim), np.float32)
    act_buf = np.zeros(BUFFER, np.int64)
    rew_buf = np.zeros(BUFFER, np.float32)
    done_buf = np.zeros(BUFFER, np.float32)
    pos = size = updates = 0
    anneal = frames // 2
    obs, _ = env.reset(seed=seed)
    for step in range(frames):
        epsilon = max(0.05, 1.0 - 0.95 * (step // FRAMES_PER_BATCH * FRAMES_PER_BATCH) / anneal)
        if step < LEARNING_STARTS or random.random() < epsilon:
            action = random.randrange(n_actions)
        else:
            with torch.no_grad():
                action = int(q_network(torch.from_numpy(obs)).argmax())
        next_obs, reward, terminated, truncated, _ = env.step(action)
        obs_buf[pos], next_buf[pos], act_buf[pos] = obs, next_obs, action
        rew_buf[pos], done_buf[pos] = reward, float(terminated)
        pos, size = (pos + 1) % BUFFER, min(size + 1, BUFFER)
        obs = env.reset()[0] if terminated or truncated else next_obs
        if step + 1 >= LEARNING_STARTS and (step + 1) % FRAMES_PER_BATCH == 0:
            for _ in range(UPDATES_PER_BATCH):
                idx = np.random.randint(0, size, BATCH_SIZE)
                b_obs, b_next = torch.from_numpy(obs_buf[idx]), torch.from_numpy(next_buf[idx])
                b_act, b_rew = torch.from_numpy(act_buf[idx]), torch.from_numpy(rew_buf[idx])
                b_done = torch.from_numpy(done_buf[idx])
                with torch.no_grad():
                    target_max = target_network(b_next).max(dim=1).values
                    td_target = b_rew + GAMMA * target_max * (1 - b_done)
                old_val = q_network(b_obs).gather(1, b_act.unsqueeze(1)).squeeze()
                loss = F.smooth_l1_loss(old_val, td_target)
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(q_network.parameters(), CLIP)
                optimizer.step()
                updates += 1
                if updates % TARGET_PERIOD == 0:
                    target_network.load_state_dict(q_network.state_dict())
    env.close()
    return frames


def quadriga_dqn(frames: int, seed: int) -> int:
    """Train quadriga-std's ``dqn`` with the settings above; returns the number of environment steps."""
    import torch
    from quadriga_std.learners.dqn import DQN
    from quadriga_std.tasks.gym import GymEnv

    from quadriga.progress import StageProgress

    learner = DQN(
        total_frames=frames,
        frames_per_batch=FRAMES_PER_BATCH,
        num_updates_per_batch=UPDATES_PER_BATCH,
        batch_size=BATCH_SIZE,
        buffer_size=BUFFER,
        learning_starts=LEARNING_STARTS,
        learning_rate=LR,
        gamma=GAMMA,
        target_update_period=TARGET_PERIOD,
        max_grad_norm=CLIP,
        loss_function="smooth_l1",
        eps_anneal_frames=frames // 2,
    )
    fit = learner.fit(
        GymEnv(env_id="CartPole-v1"), generator=torch.Generator().manual_seed(seed), progress=StageProgress()
    )
    return int(fit.info["env_steps"])


def cpu_seconds_per_step(fn, frames: int, seed: int) -> float:
    """CPU seconds (this process) per environment step of ``fn(frames, seed)``."""
    import torch

    torch.set_num_threads(1)
    start = time.process_time()
    steps = fn(frames, seed)
    return (time.process_time() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    arms = {"cleanrl": cleanrl_loop, "dqn": quadriga_dqn}
    cpu_seconds_per_step(arms["dqn"], 600, 0)  # warm-up: imports
    ratios = []
    for rep in range(args.repeats):
        order = list(arms) if rep % 2 == 0 else list(arms)[::-1]
        t = {name: cpu_seconds_per_step(arms[name], args.frames, rep) for name in order}
        ratios.append(t["cleanrl"] / t["dqn"])
        print(f"repeat {rep}: cleanrl {1 / t['cleanrl']:7.0f} steps/s, dqn {1 / t['dqn']:7.0f} steps/s")
    print(
        f"dqn / cleanrl steps per CPU second: median {statistics.median(ratios):.3f} "
        f"over {args.repeats} repeats {[round(r, 3) for r in ratios]} (target >= 0.95)"
    )


if __name__ == "__main__":
    main()
