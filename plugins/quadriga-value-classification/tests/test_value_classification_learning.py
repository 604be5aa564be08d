"""The learners and the reward wrappers on real environment steps (short runs, fixed seeds)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from quadriga_std.learners.dqn import DQN
from quadriga_std.tasks.gym import GymEnv
from quadriga_std.tasks.reward_wrappers import GaussianRewardNoise, RewardScale, RewardWrappedGymEnv
from quadriga_value_classification.learner import CategoricalQNetwork, DQNHLGauss, DQNTwoHot

from quadriga.errors import ConfigError
from quadriga.progress import StageProgress

SHORT = {
    "total_frames": 400,
    "learning_starts": 100,
    "eps_anneal_frames": 200,
    "hidden_sizes": [16],
    "log_every": 10,
}


def _fit(learner, task, seed=0):
    return learner.fit(task, generator=torch.Generator().manual_seed(seed), progress=StageProgress())


@pytest.mark.parametrize("cls", [DQNHLGauss, DQNTwoHot])
def test_learner_trains_and_counts_clipped_targets(cls):
    # a support of [-1, 1] cannot hold CartPole's targets (1 + 0.99 Q, with Q rising from about 0), while
    # [-10, 110] holds all of them early in training
    narrow = _fit(cls(**SHORT, v_min=-1.0, v_max=1.0), GymEnv(env_id="CartPole-v1"))
    wide = _fit(cls(**SHORT, v_min=-10.0, v_max=110.0), GymEnv(env_id="CartPole-v1"))
    for fit in (narrow, wide):
        assert isinstance(fit.model, CategoricalQNetwork)
        # updates after every 10-step batch from step 100 on: batches ending at steps 100, 110, ..., 400
        assert fit.info["updates"] == 5 * 31 and fit.info["targets_seen"] == 64 * 5 * 31
        assert all(math.isfinite(v) for v in fit.history["loss"])
        q = fit.model(torch.zeros(3, 4))
        assert q.shape == (3, 2)
    assert wide.info["targets_clipped"] == 0 and wide.info["clipped_fraction"] == 0.0
    # most targets exceed the narrow support's top once Q > 0
    assert narrow.info["clipped_fraction"] > 0.3
    assert narrow.info["projection"] == cls.projection_name


def test_same_seed_same_run_and_dqn_is_unchanged_by_the_hooks():
    a = _fit(DQNHLGauss(**SHORT, v_min=-10.0, v_max=110.0), GymEnv(env_id="CartPole-v1"), seed=3)
    b = _fit(DQNHLGauss(**SHORT, v_min=-10.0, v_max=110.0), GymEnv(env_id="CartPole-v1"), seed=3)
    assert a.history["loss"] == b.history["loss"]
    # dqn builds its MLP through make_q_network: the first log of a plain dqn run is a regression loss
    d = _fit(DQN(**SHORT), GymEnv(env_id="CartPole-v1"), seed=3)
    assert isinstance(d.model, torch.nn.Sequential) and d.model(torch.zeros(1, 4)).shape == (1, 2)


def test_gaussian_reward_noise_has_the_given_moments_and_is_seeded():
    import gymnasium

    env = GaussianRewardNoise(gymnasium.make("CartPole-v1"), std=2.0)
    env.reset(seed=11)
    rewards = []
    for _ in range(4000):
        _, r, term, trunc, _ = env.step(env.action_space.sample())
        rewards.append(r)
        if term or trunc:
            env.reset()
    x = np.asarray(rewards) - 1.0  # CartPole pays 1 per step
    # mean 0 and std 2: 4000 draws, bounds at about 4 standard errors
    assert abs(x.mean()) < 4 * 2.0 / math.sqrt(4000)
    assert abs(x.std() - 2.0) < 4 * 2.0 / math.sqrt(2 * 4000)
    env2 = GaussianRewardNoise(gymnasium.make("CartPole-v1"), std=2.0)
    env2.reset(seed=11)
    env.reset(seed=11)
    assert [env.step(0)[1] for _ in range(5)] == [env2.step(0)[1] for _ in range(5)]
    with pytest.raises(ConfigError, match="std"):
        GaussianRewardNoise(gymnasium.make("CartPole-v1"), std=-1.0)


def test_reward_scale_and_the_wrapped_task():
    import gymnasium

    env = RewardScale(gymnasium.make("Acrobot-v1"), 0.1)
    env.reset(seed=0)
    assert env.step(0)[1] == pytest.approx(-0.1)
    task = RewardWrappedGymEnv(env_id="CartPole-v1", reward_noise_std=0.0, reward_scale=3.0)
    e = task.make()
    e.reset(seed=0)
    assert e.step(0)[1] == 3.0
    noisy = RewardWrappedGymEnv(env_id="CartPole-v1", reward_noise_std=1.0).make()
    noisy.reset(seed=0)
    assert noisy.step(0)[1] != 1.0
    with pytest.raises(ConfigError, match="reward_scale"):
        RewardWrappedGymEnv(env_id="CartPole-v1", reward_scale=0.0)
    with pytest.raises(ConfigError, match="reward_noise_std"):
        RewardWrappedGymEnv(env_id="CartPole-v1", reward_noise_std=-0.5)
    with pytest.raises(ConfigError, match="env_id"):
        RewardWrappedGymEnv(env_id="CartPol-v1")
