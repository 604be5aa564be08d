"""Tabular orchestrated value mapping: the mapping's closed forms and convergence to Q*."""

from __future__ import annotations

import numpy as np
import pytest
from quadriga_std.rl.tabular import TabularMDP, random_mdp, value_iteration
from quadriga_value_mapping.mapping import EPS_LOG, forward, inverse, polar_decomposition
from quadriga_value_mapping.tabular import TabularValueMapping, map_q_learning

from quadriga import api
from quadriga.errors import ConfigError


def test_loglin_mapping_is_continuous_invertible_and_log_below_one():
    q = np.linspace(EPS_LOG, 50.0, 2001)
    for name in ("identity", "log", "loglin"):
        np.testing.assert_allclose(inverse(name, forward(name, q)), q, rtol=1e-12)
    np.testing.assert_allclose(forward("loglin", np.array([0.25, 1.0, 3.0])), [0.5 * np.log(0.25), 0.0, 1.0])
    # slope 0.5 / q below the break meets slope 0.5 above it
    h = 1e-6
    left = (forward("loglin", 1.0) - forward("loglin", 1.0 - h)) / h
    right = (forward("loglin", 1.0 + h) - forward("loglin", 1.0)) / h
    assert left == pytest.approx(0.5, rel=1e-4) and right == pytest.approx(0.5, rel=1e-9)
    ch, lam = polar_decomposition(np.array([-2.0, 0.0, 3.0]))
    np.testing.assert_allclose(ch @ lam, [-2.0, 0.0, 3.0])
    assert np.all(ch >= 0)


def scaled_mdp(seed: int) -> TabularMDP:
    """A random MDP (S = 10, A = 3) whose mean rewards span 10^-3 .. 1, with reward noise std 0.1."""
    rng = np.random.default_rng(seed)
    m = random_mdp(10, 3, rng)
    R = m.R * 10.0 ** rng.uniform(-3, 0, size=m.R.shape)
    cov = np.broadcast_to(0.01 * np.eye(1), (10, 3, 1, 1)).copy()
    return TabularMDP(P=m.P, R=R, terminal=m.terminal, reward_cov=cov)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_log_mapped_q_learning_converges_to_q_star(seed):
    mdp = scaled_mdp(seed)
    q_star, _ = value_iteration(mdp, 0.9)
    early = map_q_learning(mdp, 0.9, 200, np.random.default_rng(100 + seed))
    q = map_q_learning(mdp, 0.9, 5000, np.random.default_rng(100 + seed))
    # measured 0.019-0.027 at T = 5000 (Q* up to 2.8); the error falls with T
    assert np.max(np.abs(q - q_star)) < 0.035
    assert np.max(np.abs(q - q_star)) < 0.5 * np.max(np.abs(early - q_star))


def test_mapped_step_size_one_makes_the_mapping_a_no_op():
    # beta_f = 1: Q~ <- f(U), so Q = U (plain Q-learning), except where the eps_log clip of the
    # (here always zero) negative channel binds: it keeps that channel at eps_log instead of 0
    mdp = scaled_mdp(0)
    plain = map_q_learning(mdp, 0.9, 500, np.random.default_rng(7), mapping="identity")
    mapped = map_q_learning(mdp, 0.9, 500, np.random.default_rng(7), mapping="loglin", share=1.0)
    assert np.max(np.abs(plain - mapped)) <= EPS_LOG + 1e-9
    # with beta_f < 1 some averaging happens in the mapped space, and the mapping changes the estimates
    half = map_q_learning(mdp, 0.9, 500, np.random.default_rng(7), mapping="loglin", share=0.5)
    assert np.max(np.abs(half - mapped)) > 1e-3


def test_all_averaging_in_mapped_space_is_refused():
    with pytest.raises(ConfigError, match="share = 0"):
        TabularValueMapping(share=0.0)
    TabularValueMapping(share=0.0, mapping="identity")  # plain Q-learning: allowed
    with pytest.raises(ValueError, match="share = 0"):
        map_q_learning(scaled_mdp(0), 0.9, 1, np.random.default_rng(0), share=0.0)


def test_ready_pipeline_runs_and_both_learners_reach_q_star(tmp_path):
    overrides = ["stage.value-mapping.iterations=1500", "stage.q-learning.iterations=1500"]
    result = api.run("value-mapping-tabular-chain", out=tmp_path, overrides=overrides)
    values = result.results["stages"]["q-error"]["values"]
    for arm in ("value-mapping", "q-learning"):
        # Q* at the start is 0.9^4 * 1.001 = 0.657; the greedy policy is "right" in every live cell
        assert values[f"{arm}/max_abs_error_mean"] < 0.05, values
        assert values[f"{arm}/greedy_agreement_mean"] == 1.0
