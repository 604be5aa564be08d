"""DQN (quadriga-std defaults) solves CartPole-v1 within a fixed budget at a fixed seed."""

from __future__ import annotations

import pytest
import torch
from quadriga_std.evaluators.rl import EpisodeReturn
from quadriga_std.learners.dqn import DQN
from quadriga_std.tasks.gym import GymEnv

from quadriga.progress import StageProgress


@pytest.mark.slow
def test_dqn_solves_cartpole_in_20k_steps():
    task = GymEnv(env_id="CartPole-v1")
    fit = DQN(total_frames=20_000).fit(
        task, generator=torch.Generator().manual_seed(0), progress=StageProgress()
    )
    fit.info["component"] = "dqn"
    metrics = EpisodeReturn(num_episodes=10).evaluate(
        {"dqn-s0": fit}, task, generator=torch.Generator().manual_seed(0)
    )
    # CartPole-v1 counts as solved at an average return of 195 (gymnasium's reward_threshold is 475 for v1)
    assert metrics.values["dqn-s0/mean_return"] >= 195.0
    assert fit.info["env_steps"] == 20_000 and len(fit.history["episode_return"]) > 50
