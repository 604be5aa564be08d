"""quadriga-std's offline-data collector (``quadriga_std.rl.offline``): closed forms and bounds.

On the one-source ``vector-reward-chain`` (deterministic moves, Gaussian step noise) the target at
``target_epsilon = 0`` always moves right: its occupancy is geometric and its return law Gaussian
in closed form (``right_policy_return_law``).
"""

from __future__ import annotations

import numpy as np
import pytest
from quadriga_std.rl.offline import (
    OfflineRLDataset,
    collect_offline,
    coverage,
    discounted_occupancy,
    epsilon_greedy,
    monte_carlo_return_law,
)
from quadriga_std.rl.vector_env import VectorRewardChain, right_policy_return_law
from scipy import stats

GAMMA = 0.8


def chain_task(**kw):
    env = VectorRewardChain(num_sources=1, goal_reward=[1.0], step_reward=[0.0], noise_std=0.5, length=5)
    return OfflineRLDataset(environment=env, gamma=GAMMA, target_epsilon=0.0, **kw)


def exact_law(task):
    """Mean and std of the always-right return from cell 0 (the target at target_epsilon = 0)."""
    mean, cov = right_policy_return_law(task.environment.env(), GAMMA)
    return float(mean[0]), float(np.sqrt(cov[0, 0]))


def test_epsilon_greedy_probabilities_and_omitted_action():
    mu = epsilon_greedy(np.array([0, 2]), 3, 0.3)
    np.testing.assert_allclose(mu, [[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]])
    mu = epsilon_greedy(np.array([0, 2]), 3, 0.3, omit_action=2)
    np.testing.assert_allclose(mu, [[0.8 / 0.9, 0.1 / 0.9, 0.0], [0.5, 0.5, 0.0]])
    with pytest.raises(ValueError, match="no action"):
        epsilon_greedy(np.array([1]), 2, 0.0, omit_action=1)


def test_collection_counts_and_nesting():
    task = chain_task()
    beh = task.behaviour_policy()
    big = collect_offline(task.mdp(), beh, 3000, np.random.default_rng(1), horizon=20)
    small = collect_offline(task.mdp(), beh, 700, np.random.default_rng(1), horizon=20)
    np.testing.assert_array_equal(big.s[:700], small.s)
    np.testing.assert_array_equal(big.a[:700], small.a)
    np.testing.assert_allclose(big.r[:700], small.r)
    np.testing.assert_array_equal(big.head(700).counts, small.counts)
    assert big.counts.sum() == 3000 and big.counts[-1].sum() == 0  # the terminal cell is never left
    # episodes start at cell 0; every terminated transition lands on the goal
    assert np.all(big.s[big.first] == 0) and np.all(big.s_next[big.terminated] == 4)
    # the behaviour's action frequencies match mu (binomial 4-sigma bound per state)
    for s in range(4):
        n_s = big.counts[s].sum()
        freq = big.counts[s] / n_s
        assert np.all(np.abs(freq - beh[s]) <= 4 * np.sqrt(beh[s] * (1 - beh[s]) / n_s) + 1e-12)


def test_occupancy_of_always_right_is_geometric():
    task = chain_task()
    d = discounted_occupancy(task.mdp(), task.target_policy(), GAMMA)
    expected = (1 - GAMMA) * GAMMA ** np.arange(4)
    np.testing.assert_allclose(d[:4, 2], expected, atol=1e-12)
    assert d[:, [0, 1]].sum() == 0 and d[4].sum() == 0


def test_coverage_reports_uncovered_target_mass():
    occ = np.array([[0.5, 0.0], [0.3, 0.2]])
    cov = coverage(np.array([[10, 3], [0, 5]]), occ)
    assert cov["min_target_count"] == 0 and cov["uncovered_pairs"] == 1 and cov["target_pairs"] == 3
    assert cov["uncovered_mass"] == pytest.approx(0.3) and cov["concentrability"] == np.inf
    cov = coverage(np.array([[10, 0], [5, 5]]), occ)
    assert cov["concentrability"] == pytest.approx(max(0.5 / 0.5, 0.3 / 0.25, 0.2 / 0.25))


def test_behaviour_without_right_action_does_not_cover():
    task = chain_task(omit_action=2)
    data = task.collect(2000, np.random.default_rng(0))
    cov = task.coverage_of(data)
    assert data.counts[:, 2].sum() == 0
    # the target only ever moves right: all its occupancy (1 - gamma^4 before the goal) is uncovered
    assert cov["uncovered_mass"] == pytest.approx(1 - GAMMA**4)


def test_monte_carlo_law_matches_the_closed_form():
    task = chain_task()
    g = monte_carlo_return_law(task.mdp(), task.target_policy(), GAMMA, 20000, np.random.default_rng(0))
    mean, sd = exact_law(task)
    assert abs(g.mean() - mean) < 4 * sd / np.sqrt(g.size)
    assert abs(g.std() - sd) < 0.02 * sd
    assert stats.kstest(g, "norm", args=(mean, sd)).pvalue > 1e-3
