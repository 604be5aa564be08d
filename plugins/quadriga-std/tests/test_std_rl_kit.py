"""The RL kit: exact tabular answers, the correlated-sources chain, Monte-Carlo return laws, evaluators."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from quadriga_std.rl.evaluators import QError, energy_distance, joint_return_errors, q_table
from quadriga_std.rl.returns import correlation_matrix, monte_carlo_returns
from quadriga_std.rl.tabular import (
    GenerativeModel,
    TabularMDP,
    policy_evaluation,
    random_mdp,
    value_iteration,
)
from quadriga_std.rl.vector_env import RIGHT, VectorRewardChain

from quadriga import Fitted
from quadriga.errors import ConfigError


def two_state_mdp() -> TabularMDP:
    """s0: a0 stays (r = 1), a1 moves to s1 (r = 0); s1 absorbs with r = 2 under both actions."""
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[0, 1, 1] = P[1, 0, 1] = P[1, 1, 1] = 1.0
    R = np.array([[[1.0], [0.0]], [[2.0], [2.0]]])
    return TabularMDP(P=P, R=R, terminal=np.zeros(2, bool))


def test_value_iteration_matches_the_closed_form_of_a_two_state_mdp():
    # V(s1) = 2 / (1 - 0.9) = 20; Q(s0, a1) = 0.9 * 20 = 18; Q(s0, a0) = 1 + 0.9 * 18 = 17.2
    q, pi = value_iteration(two_state_mdp(), 0.9, tol=1e-12)
    np.testing.assert_allclose(q, [[17.2, 18.0], [20.0, 20.0]], atol=1e-10)
    assert pi[0] == 1


def test_policy_evaluation_of_the_optimal_policy_is_q_star_and_solves_bellman():
    rng = np.random.default_rng(0)
    mdp = random_mdp(10, 3, rng, num_sources=2)
    q_star, pi = value_iteration(mdp, 0.9, tol=1e-12)
    q_pi = policy_evaluation(mdp, pi, 0.9)  # [S, A, K]
    np.testing.assert_allclose(q_pi.sum(-1), q_star, atol=1e-9)
    residual = mdp.scalar_rewards() + 0.9 * mdp.P @ q_star.max(-1) - q_star
    assert np.max(np.abs(residual)) < 1e-9
    # a uniformly random policy is worse everywhere (Q* dominates Q^pi)
    q_uni = policy_evaluation(mdp, np.full((10, 3), 1 / 3), 0.9).sum(-1)
    assert np.all(q_uni <= q_star + 1e-9) and np.max(q_star - q_uni) > 0.1


def test_generative_model_moments_match_the_mdp():
    env = VectorRewardChain(rho=-0.5, noise_std=2.0).env()
    mdp = env.tabular()
    gm = GenerativeModel(mdp, np.random.default_rng(1))
    n = 20_000
    s_next, r = gm.sample(np.full(n, 3), np.full(n, RIGHT))
    assert np.all(s_next == 4)
    # mean 0 per source, covariance 4 * [[1, -0.5], [-0.5, 1]]: 5-sigma bounds at n = 20k
    assert np.all(np.abs(r.mean(0)) < 5 * 2.0 / np.sqrt(n))
    np.testing.assert_allclose(np.cov(r, rowvar=False), 4 * np.array([[1, -0.5], [-0.5, 1]]), atol=0.2)
    s_all, r_all = gm.sample_all()
    assert s_all.shape == (6, 3) and r_all.shape == (6, 3, 2)


def test_chain_q_star_is_go_right_with_the_closed_form_value():
    task = VectorRewardChain(goal_reward=[1.0, 0.5])
    q, pi = value_iteration(task.tabular(), 0.9)
    assert np.all(pi[:-1] == RIGHT)
    mean, _ = task.return_law(0.9)  # gamma^4 * goal
    np.testing.assert_allclose(mean, 0.9**4 * np.array([1.0, 0.5]))
    assert q[0, RIGHT] == pytest.approx(mean.sum(), abs=1e-9)


def test_deterministic_chain_has_a_point_mass_return_distribution():
    task = VectorRewardChain(noise_std=0.0, goal_reward=[2.0, -1.0], step_reward=[-0.1, 0.0])
    g = monte_carlo_returns(task, lambda obs: RIGHT, num_episodes=20, gamma=0.8, seed=0)
    mean, cov = task.return_law(0.8)
    np.testing.assert_allclose(g, np.broadcast_to(mean, g.shape), atol=1e-12)
    assert np.all(cov == 0)
    assert correlation_matrix(g)[0, 1] == 0.0  # a point mass is uncorrelated with anything


@pytest.mark.parametrize("rho", [-0.6, 0.0, 0.6])
def test_monte_carlo_joint_returns_match_the_gaussian_closed_form(rho):
    task = VectorRewardChain(rho=rho)
    g = monte_carlo_returns(task, lambda obs: RIGHT, num_episodes=4000, gamma=0.9, seed=1)
    mean, cov = task.return_law(0.9)
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(g.mean(0) - mean) < 4.5 * sd / np.sqrt(4000))
    # the sample correlation's sd is about (1 - rho^2) / sqrt(n) <= 0.016 at n = 4000
    assert correlation_matrix(g)[0, 1] == pytest.approx(rho, abs=0.07)
    # marginal law: W1 to exact Gaussian draws is small against the return sd (about 1.85)
    exact = np.random.default_rng(2).multivariate_normal(mean, cov, 4000)
    errs = joint_return_errors(g, exact)
    assert errs["w1_mean"] < 0.15 and errs["correlation_error"] < 0.07


def test_energy_distance_matches_scipy_in_one_dimension_and_correlation_error_sees_coupling():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(300, 1)), rng.normal(0.5, 1.0, size=(200, 1))
    assert energy_distance(x, y) == pytest.approx(scipy.stats.energy_distance(x[:, 0], y[:, 0]), rel=1e-10)
    joint = rng.multivariate_normal([0, 0], [[1, 0.8], [0.8, 1]], 5000)
    product = np.stack([rng.permutation(joint[:, 0]), rng.permutation(joint[:, 1])], axis=1)
    errs = joint_return_errors(product, joint)
    # identical marginals (W1 = 0 exactly: the same values), correlation lost: error about 0.8
    assert errs["w1_mean"] == pytest.approx(0.0, abs=1e-12)
    assert errs["correlation_error"] == pytest.approx(0.8, abs=0.06)
    assert joint_return_errors(joint, joint)["energy_distance"] == pytest.approx(0.0, abs=1e-9)


def test_q_error_is_zero_at_q_star_and_the_gap_otherwise():
    import torch

    task = VectorRewardChain()
    mdp = task.tabular()
    q_star, _ = value_iteration(mdp, 0.9)
    ev = QError()
    g = torch.Generator().manual_seed(0)
    m = ev.evaluate({"exact": Fitted(model=q_star, info={"gamma": 0.9})}, task, generator=g).values
    assert m["exact/max_abs_error"] == pytest.approx(0.0, abs=1e-9) and m["exact/greedy_agreement"] == 1.0
    shifted = q_star.copy()
    shifted[2, 0] += 0.5  # state 2 now prefers "left"
    m = ev.evaluate({"off": Fitted(model=shifted, info={"gamma": 0.9})}, task, generator=g).values
    assert m["off/max_abs_error"] == pytest.approx(0.5) and m["off/greedy_agreement"] == pytest.approx(4 / 5)
    net = torch.nn.Linear(6, 3)
    np.testing.assert_allclose(
        q_table(net, mdp), net.weight.detach().numpy().T + net.bias.detach().numpy(), atol=1e-6
    )


def test_chain_task_refuses_bad_settings():
    with pytest.raises(ConfigError, match="rho"):
        VectorRewardChain(rho=-0.8, num_sources=3)
    with pytest.raises(ConfigError, match="goal_reward"):
        VectorRewardChain(num_sources=3)
