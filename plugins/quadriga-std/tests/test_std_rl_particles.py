"""The particle DQN of the RL kit: the distributional Bellman target, vector rewards, a tiny run."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
import torch
from quadriga_std.learners._dqn_loop import Rollout
from quadriga_std.rl.evaluators import ReturnDistributionError
from quadriga_std.rl.particles import ParticleDQN, greedy_particle_target
from quadriga_std.rl.vector_env import VectorRewardChain
from quadriga_std.tasks.gym import GymEnv

from quadriga.errors import ConfigError
from quadriga.progress import StageProgress


@attrs.define(kw_only=True)
class EnergyParticleDQN(ParticleDQN):
    """A particle DQN whose distance is the (V-statistic) energy distance, for the kit's tests."""

    def particle_distance(self, z, t):
        d = lambda a, b: torch.cdist(a, b).mean((-1, -2))  # noqa: E731
        return 2 * d(z, t) - d(z, z) - d(t, t)


TINY = dict(
    total_frames=300,
    learning_starts=100,
    eps_anneal_frames=200,
    batch_size=16,
    num_updates_per_batch=2,
    hidden_sizes=[16],
    num_particles=8,
    target_update_period=20,
)


def test_greedy_particle_target_is_the_distributional_bellman_update_at_the_summed_mean_argmax():
    # two actions; action 1 has the larger summed mean (3 + (-1) = 2 > 0 + 1 = 1)
    z = torch.tensor([[[[0.0, 0.0], [0.0, 2.0]], [[2.0, -2.0], [4.0, 0.0]]]])  # [B=1, A=2, N=2, K=2]
    r, done = torch.tensor([[1.0, -1.0]]), torch.tensor([0.0])
    t = greedy_particle_target(z, r, done, 0.5)
    torch.testing.assert_close(t, torch.tensor([[[2.0, -2.0], [3.0, -1.0]]]))
    t_done = greedy_particle_target(z, r, torch.tensor([1.0]), 0.5)
    torch.testing.assert_close(t_done, r.unsqueeze(1).expand(1, 2, 2))


def test_rollout_stores_per_source_rewards_and_sums_them_in_the_episode_return():
    task = VectorRewardChain(noise_std=0.0, goal_reward=[1.0, 2.0], length=2)
    roll = Rollout(task.make(), 0, 2, 3, 4, reward_dim=2)
    td, finished = roll.collect(
        lambda x: torch.tensor([0.0, 0.0, 1.0]), np.random.default_rng(0), uniform=False, epsilon=0.0
    )
    assert td.get(("next", "reward")).shape == (4, 2)
    np.testing.assert_allclose(td.get(("next", "reward")).numpy(), [[1.0, 2.0]] * 4)
    assert [ret for _, ret in finished] == [3.0] * 4


def test_particle_dqn_refuses_scalar_environments_and_a_wrong_number_of_sources():
    g = torch.Generator().manual_seed(0)
    with pytest.raises(ConfigError, match="vector-reward"):
        EnergyParticleDQN(**TINY).fit(GymEnv(env_id="CartPole-v1"), generator=g, progress=StageProgress())
    with pytest.raises(ConfigError, match="num_sources"):
        EnergyParticleDQN(**TINY, num_sources=3).fit(
            VectorRewardChain(), generator=g, progress=StageProgress()
        )


def test_tiny_particle_run_learns_shapes_and_is_evaluated_against_monte_carlo():
    task = VectorRewardChain(rho=0.6)
    fitted = EnergyParticleDQN(**TINY, gamma=0.9).fit(
        task, generator=torch.Generator().manual_seed(0), progress=StageProgress()
    )
    net = fitted.model
    assert net.particles(torch.eye(6)).shape == (6, 3, 8, 2)
    torch.testing.assert_close(net(torch.eye(6)), net.particles(torch.eye(6)).mean(-2).sum(-1))
    # updates follow every round that ends at or after learning_starts: rounds ending at 100, 110, ..., 300
    assert fitted.info["updates"] == 2 * ((300 - 100) // 10 + 1) and fitted.info["particle_spread"] > 0
    m = (
        ReturnDistributionError(num_episodes=200)
        .evaluate({"p[0]": fitted, "p[1]": fitted}, task, generator=torch.Generator().manual_seed(1))
        .values
    )
    # numbers, not verdicts: finite distances; correlations in [-1, 1]
    assert all(np.isfinite(m[f"p[0]/{k}"]) for k in ("w1_mean", "energy_distance", "correlation_error"))
    assert -1 <= m["p[0]/model_correlation"] <= 1 and m["p/w1_mean_mean"] == pytest.approx(m["p[0]/w1_mean"])
