"""Fast checks of quadriga-std's RL pieces: gym task errors, TD-target rules, RL evaluators."""

from __future__ import annotations

import math

import gymnasium
import numpy as np
import pytest
import torch
from quadriga_std.evaluators.rl import EpisodeReturn, QOverestimation, ReturnCurve, discounted_returns
from quadriga_std.learners.dqn import DQN, DoubleDQN, DQNOnline
from quadriga_std.tasks.gym import GymEnv

from quadriga import Fitted
from quadriga.errors import ConfigError
from quadriga.progress import StageProgress

# --- tasks -------------------------------------------------------------------------------------


def test_unknown_env_id_suggests_close_match():
    with pytest.raises(ConfigError) as err:
        GymEnv(env_id="CartPol-v1")
    assert "CartPole-v1" in str(err.value) and err.value.key == "env_id"


def test_make_and_torchrl_wrapper_match_the_space():
    task = GymEnv(env_id="CartPole-v1", max_episode_steps=7)
    env = task.make()
    assert env.spec.max_episode_steps == 7 and task.time_limit == 7
    wrapped = task.make_torchrl()
    td = wrapped.rollout(50)  # random policy; the 7-step limit ends the rollout
    assert td["observation"].shape[-1] == 4 and td.shape[0] <= 7


def test_continuous_actions_fail_before_training():
    with pytest.raises(ConfigError, match="discrete action space"):
        DQN(total_frames=2000).fit(
            GymEnv(env_id="Pendulum-v1"), generator=torch.Generator().manual_seed(0), progress=StageProgress()
        )


def test_bad_hyperparameters_fail_when_built():
    with pytest.raises(ConfigError, match="learning_starts"):
        DQN(total_frames=100, learning_starts=100)
    with pytest.raises(ConfigError, match="hidden_sizes"):
        DQN(hidden_sizes=[])


# --- TD-target rules (hand-computed) ----------------------------------------------------------

Q_ONLINE = torch.tensor([[1.0, 3.0], [2.0, 0.5]])
Q_TARGET = torch.tensor([[2.0, 1.5], [4.0, -1.0]])
REWARD = torch.tensor([1.0, -1.0])
DONE = torch.tensor([0.0, 1.0])


def test_td_target_dqn():
    y, info = DQN().td_target(Q_ONLINE, Q_TARGET, REWARD, DONE, 0.5)
    torch.testing.assert_close(y, torch.tensor([1.0 + 0.5 * 2.0, -1.0]))
    assert info == {}
    y, _ = DQN().td_target(Q_ONLINE, Q_TARGET, REWARD, torch.zeros(2), 0.5)
    torch.testing.assert_close(y, torch.tensor([2.0, -1.0 + 0.5 * 4.0]))


def test_td_target_online():
    y, info = DQNOnline().td_target(Q_ONLINE, Q_TARGET, REWARD, torch.zeros(2), 0.5)
    assert info == {}
    torch.testing.assert_close(y, torch.tensor([1.0 + 0.5 * 3.0, -1.0 + 0.5 * 2.0]))


def test_td_target_double():
    # online argmax: action 1 then action 0; target values 1.5 and 4.0
    y, info = DoubleDQN().td_target(Q_ONLINE, Q_TARGET, REWARD, torch.zeros(2), 0.5)
    assert info == {}
    torch.testing.assert_close(y, torch.tensor([1.0 + 0.5 * 1.5, -1.0 + 0.5 * 4.0]))


def test_short_training_is_deterministic_and_logs():
    task = GymEnv(env_id="CartPole-v1")
    kw = dict(
        total_frames=600, learning_starts=200, frames_per_batch=20, num_updates_per_batch=2, log_every=10
    )
    runs = []
    for _ in range(2):
        records: list[dict] = []
        progress = StageProgress(on_log=records.append)
        fit = DQN(**kw).fit(task, generator=torch.Generator().manual_seed(3), progress=progress)
        runs.append(fit)
    a, b = runs
    assert (
        a.history["episode_return"] == b.history["episode_return"] and a.history["loss"] == b.history["loss"]
    )
    assert a.info["env_steps"] == 600 and a.info["updates"] == 2 * (600 - 200) // 20 + 2
    assert sum(a.history["episode_return"]) <= 600 and len(a.history["loss"]) > 0
    assert progress.completed == 600 and any("episode_return" in r for r in records)
    q = a.model(torch.zeros(5, 4))
    assert q.shape == (5, 2)


# --- evaluators --------------------------------------------------------------------------------


class _Chain(gymnasium.Env):
    """Reward 1 each step, never terminates by itself; observation is the step count."""

    observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (1,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0], np.float32), {}

    def step(self, action):
        self.t += 1
        return np.array([float(self.t)], np.float32), 1.0, False, False, {}


class _ChainTask:
    time_limit = 2

    def make(self, max_episode_steps=None):
        return gymnasium.wrappers.TimeLimit(_Chain(), max_episode_steps or self.time_limit)


def _constant_q(values):
    net = torch.nn.Linear(1, len(values))
    with torch.no_grad():
        net.weight.zero_()
        net.bias.copy_(torch.tensor(values))
    return net


def test_discounted_returns():
    assert discounted_returns([1.0, 2.0, 3.0], 0.5) == [1 + 0.5 * 2 + 0.25 * 3, 2 + 0.5 * 3, 3.0]


def test_q_overestimation_against_hand_computed_returns():
    gamma = 0.5
    fitted = Fitted(
        model=_constant_q([2.0, 1.0]), info={"gamma": gamma, "component": "toy", "stage": "toy-s0"}
    )
    m = QOverestimation(num_episodes=2, tail_steps=3).evaluate(
        fitted, _ChainTask(), generator=torch.Generator().manual_seed(0)
    )
    # scored states t = 0, 1 (time limit 2); rollouts extended to 5 steps of reward 1
    g0 = sum(gamma**k for k in range(5))
    g1 = sum(gamma**k for k in range(4))
    assert m.values["toy-s0/q_overestimation"] == pytest.approx(2.0 - (g0 + g1) / 2)
    assert m.values["toy-s0/q_overestimation_stderr"] == pytest.approx(0.0)
    assert m.values["toy-s0/mc_return_mean"] == pytest.approx((g0 + g1) / 2)


def test_episode_return_on_toy_chain():
    subjects = {
        f"toy[{i}]": Fitted(model=_constant_q([0.0, 1.0]), info={"component": "toy"}) for i in range(2)
    }
    subjects["toy[lr=0.1][0]"] = Fitted(model=_constant_q([1.0, 0.0]), info={"component": "toy"})
    m = EpisodeReturn(num_episodes=3).evaluate(
        subjects, _ChainTask(), generator=torch.Generator().manual_seed(0)
    )
    assert m.values["toy[0]/mean_return"] == 2.0 and m.values["toy/mean_return_mean"] == 2.0
    # another configuration of the same component is its own group, not pooled into "toy"
    assert "toy[lr=0.1]/mean_return_mean" in m.values and "toy[lr=0.1][0]/mean_return" in m.values
    assert len(m.tables["episode_return"]) == 3 and "episode_return" in m.figures


def test_return_curve_auc_and_bands():
    a = Fitted(
        model=None,
        history={"env_step": [10, 20, 30], "episode_return": [1.0, 2.0, 3.0]},
        info={"component": "x", "env_steps": 30},
    )
    b = Fitted(
        model=None,
        history={"env_step": [5, 30], "episode_return": [3.0, 5.0]},
        info={"component": "x", "env_steps": 40},
    )
    m = ReturnCurve(num_points=3, smoothing_episodes=1).evaluate(
        {"x[0]": a, "x[1]": b}, generator=torch.Generator().manual_seed(0)
    )
    # common grid [10, 20, 30]; curves [1, 2, 3] and [3, 3, 5]; trapezoid / range
    assert m.values["x[0]/auc"] == pytest.approx((1.5 * 10 + 2.5 * 10) / 20)
    assert m.values["x[1]/auc"] == pytest.approx((3 * 10 + 4 * 10) / 20)
    assert m.values["x/auc_mean"] == pytest.approx(2.75)
    assert m.values["x/auc_stderr"] == pytest.approx(math.sqrt(2 * 0.75**2) / math.sqrt(2))
    assert m.values["x[1]/final_return"] == 5.0 and "return_curve" in m.figures
    with pytest.raises(ConfigError, match="episode history"):
        ReturnCurve().evaluate(Fitted(model=None, history={}), generator=torch.Generator().manual_seed(0))
