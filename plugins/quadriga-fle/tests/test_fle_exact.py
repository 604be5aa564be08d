"""Closed forms and statistical bounds for FLE, its models and its baselines.

The chain task (quadriga-std's ``vector-reward-chain`` with one source) moves deterministically;
its "always right" policy has a Gaussian return law in closed form (``right_policy_return_law``),
which FLE's Gaussian-mixture model can represent, so FLE's error there is statistical only.
"""

from __future__ import annotations

import numpy as np
import pytest
from quadriga_fle.baselines import categorical_evaluation, fitted_q_evaluation
from quadriga_fle.fle import FLE, fitted_likelihood_estimation, start_weights
from quadriga_fle.models import CellHistogram, CellMixture, mixture_quantiles, quantile_levels
from quadriga_std.rl.offline import (
    OfflineRLDataset,
)
from quadriga_std.rl.tabular import policy_evaluation
from quadriga_std.rl.vector_env import VectorRewardChain, right_policy_return_law
from scipy import stats
from scipy.stats import wasserstein_distance

from quadriga.seeding import make_generator

GAMMA = 0.8


def chain_task(**kw):
    env = VectorRewardChain(num_sources=1, goal_reward=[1.0], step_reward=[0.0], noise_std=0.5, length=5)
    return OfflineRLDataset(environment=env, gamma=GAMMA, target_epsilon=0.0, **kw)


def exact_law(task):
    """Mean and std of the always-right return from cell 0 (the target at target_epsilon = 0)."""
    mean, cov = right_policy_return_law(task.environment.env(), GAMMA)
    return float(mean[0]), float(np.sqrt(cov[0, 0]))


def test_mixture_quantiles_of_one_gaussian_are_normal_quantiles():
    lv = quantile_levels(50)
    q = mixture_quantiles(np.array([1.0]), np.array([0.3]), np.array([2.0]), lv)
    np.testing.assert_allclose(q, stats.norm.ppf(lv, 0.3, 2.0), atol=2e-3)


def test_em_recovers_a_two_component_mixture_per_cell():
    rng = np.random.default_rng(0)
    n = 8000
    cells = rng.integers(0, 2, n)
    comp = rng.random(n) < 0.3
    z = np.where(comp, rng.normal(-2.0, 0.5, n), rng.normal(1.0, 0.7, n)) + 5.0 * cells
    model = CellMixture.point_mass(2, 2, em_steps=100).fit(cells, z)
    for c in range(2):
        order = np.argsort(model.mu[c])
        np.testing.assert_allclose(model.mu[c, order], [-2.0 + 5 * c, 1.0 + 5 * c], atol=0.08)
        np.testing.assert_allclose(model.sd[c, order], [0.5, 0.7], atol=0.08)
        np.testing.assert_allclose(model.w[c, order], [0.3, 0.7], atol=0.03)


def test_histogram_mle_is_the_bin_frequency():
    h = CellHistogram.point_mass(1, 4, -1.0, 1.0).fit(np.zeros(4, int), np.array([-0.9, -0.2, 0.1, 0.2]))
    np.testing.assert_allclose(h.probs[0], [0.25, 0.25, 0.5, 0.0])
    np.testing.assert_allclose(h.quantiles(np.ones(1), np.array([0.125, 0.5])), [-0.75, 0.0])


def test_fqe_converges_to_exact_values_with_much_data():
    task = chain_task()
    data = task.collect(20000, np.random.default_rng(3))
    pi = task.target_policy()
    q = fitted_q_evaluation(data, pi, GAMMA, 60)
    exact = policy_evaluation(task.mdp(), pi, GAMMA)[..., 0]
    # rewards have std 0.5; each of the 12 live pairs has about 1000+ samples
    assert np.max(np.abs(q[:4] - exact[:4])) < 0.05


def test_categorical_fit_preserves_the_fqe_mean():
    """The Cramer projection keeps the mean of laws inside the support: same mean as FQE, to rounding."""
    task = chain_task()
    data = task.collect(1000, np.random.default_rng(4))
    pi = task.target_policy()
    atoms = np.linspace(-20.0, 20.0, 201)
    p = categorical_evaluation(data, pi, GAMMA, atoms, 20, 0)
    q = fitted_q_evaluation(data, pi, GAMMA, 20)
    live = data.counts.ravel() > 0
    np.testing.assert_allclose((p @ atoms)[live], q.ravel()[live], atol=1e-9)


def test_fle_recovers_the_gaussian_return_law_of_the_chain():
    task = chain_task()
    data = task.collect(3000, np.random.default_rng(5))
    pi = task.target_policy()
    model, history = fitted_likelihood_estimation(
        data,
        pi,
        GAMMA,
        CellMixture.point_mass(15, 3),
        np.random.default_rng(6),
        iterations=25,
        samples_per_transition=3,
    )
    q = model.quantiles(start_weights(pi, 0), quantile_levels(400))
    mean, sd = exact_law(task)
    exact_q = stats.norm.ppf(quantile_levels(400), mean, sd)
    # about 750 transitions at (0, right): the mean error alone is ~ sd / sqrt(750) ~ 0.04 sd
    assert wasserstein_distance(q, exact_q) < 0.12 * sd
    assert abs(history[-1] - mean) < 0.15 * sd
    # sampling, not averaging: the fitted law keeps the spread (a mean target would collapse it)
    assert abs(np.std(q) - sd) < 0.1 * sd


def test_fle_estimator_is_paired_across_arms_and_reports_coverage():
    task = chain_task()
    est = FLE(num_transitions=300, iterations=5, samples_per_transition=2, num_quantiles=100)
    a = est.estimate(task, generator=make_generator(0))
    b = est.estimate(task, generator=make_generator(0))
    np.testing.assert_array_equal(a.value, b.value)
    assert a.value.shape == (100,) and np.all(np.diff(a.value) >= 0)
    assert a.info["num_transitions"] == 300 and a.info["uncovered_mass"] == 0.0
    assert a.info["min_target_count"] >= 1


def test_bad_inputs_name_the_key():
    from quadriga_fle.baselines import FQE

    from quadriga.errors import ConfigError

    with pytest.raises(ConfigError, match="min_sd"):
        FLE(min_sd=0.0)
    with pytest.raises(ConfigError, match="support"):
        FLE(support=[0.5, 1.5])  # 0 (the initial law delta_0) must lie inside
    with pytest.raises(ConfigError, match="offline-rl-dataset") as info:
        FQE(num_transitions=10).estimate(VectorRewardChain(), generator=make_generator(0))
    assert info.value.key == "data"
