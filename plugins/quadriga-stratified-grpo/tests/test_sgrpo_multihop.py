"""The multi-hop search agent: gymnasium's checker, dynamics, exact values, and the cross-stratum bias."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from quadriga_stratified_grpo.multihop import ENV_ID, MultiHopSearchEnv, cross_stratum_bias
from quadriga_stratified_grpo.task import MultiHopSearch

from quadriga import ConfigError


def test_passes_gymnasium_checker_and_is_registered():
    env = MultiHopSearch().make()
    assert env.spec.id == ENV_ID == "quadriga/MultiHopSearch-v0"
    check_env(env.unwrapped, skip_render_check=False)
    assert env.observation_space.shape == (6 + 4 + 2,) and env.action_space.n == 4
    assert isinstance(gymnasium.make(ENV_ID).unwrapped, MultiHopSearchEnv)


def test_episode_dynamics_rewards_and_forced_searches():
    # question 1 always needs 2 searches; its good query is 1; clues from the good query are always right
    env = MultiHopSearchEnv(
        prior_accuracy=(0.25, 0.25),
        hop_probs=((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
        good_quality=1.0,
        bad_quality=0.0,
        tool_cost=0.1,
    )
    obs, info = env.reset(seed=3, options={"question": 1})
    assert obs[:2].tolist() == [0.0, 1.0] and obs[-1] == 0.0 and info["tool_calls"] == 0
    answer = env._answer
    obs, r, term, _, info = env.step(1)  # good query
    assert r == pytest.approx(-0.1) and not term and info["tool_calls"] == 1
    assert obs[2 + answer] == pytest.approx(0.5) and obs[-2] == pytest.approx(0.5) and obs[-1] == 0.0
    obs, r, term, _, _ = env.step(1)
    assert not term and obs[2 + answer] == pytest.approx(1.0) and obs[-1] == 1.0  # answer phase
    _, r, term, _, info = env.step(answer)
    assert term and r == 1.0 and info == {"question": 1, "tool_calls": 2, "correct": True, "answered": True}
    with pytest.raises(RuntimeError):
        env.step(0)
    env.reset(seed=0, options={"question": 0})  # no search needed: the first action is the answer
    _, r, term, _, info = env.step(0)
    assert term and info["tool_calls"] == 0 and r in (0.0, 1.0)


def test_optimal_values_match_the_oracle_policy_by_simulation():
    env = MultiHopSearchEnv()
    exact = env.optimal_stratum_values()
    # closed forms: no evidence -> the prior's mode; one good clue on a uniform-ish prior (q = 2)
    assert exact[0, 0] == pytest.approx(0.9) and exact[2, 0] == pytest.approx(0.25)
    assert exact[2, 1] == pytest.approx(0.85 + 0.15 / 4 - 0.1)
    n = 4000
    for q, h in ((0, 2), (2, 1), (5, 2)):
        rows = np.zeros(3)
        rows[h] = 1.0
        env.hop_probs = np.tile(rows, (env.num_questions, 1))
        returns = []
        for i in range(n):
            env.reset(seed=i, options={"question": q})
            total, done = 0.0, False
            while not done:
                _, r, done, _, _ = env.step(env.oracle_action())
                total += r
            returns.append(total)
        se = np.std(returns) / np.sqrt(n)
        assert abs(np.mean(returns) - exact[q, h]) < 4 * se


def test_global_normalisation_is_biased_across_strata_and_san_is_not():
    """Fixed seed, 300 groups of 8: per-stratum mean advantage with BCa intervals over groups."""
    out = cross_stratum_bias(MultiHopSearchEnv(), policy="uniform", num_groups=300, seed=0)
    glob, san = out["global"], out["san"]
    # uniform policy: accuracy 1/4 in every stratum, so E[R | h] = 0.25 - 0.1 h; the offset is
    # (E[R | h] - E[R]) / std(R), about +0.3 for h = 0 and -0.3 for h = 2 (std about 0.42)
    assert glob[0].low > 0.15 and glob[2].high < -0.15
    assert glob[0].estimate - glob[2].estimate == pytest.approx(0.2 / 0.42, abs=0.15)
    assert all(abs(san[h].estimate) < 1e-9 and abs(san[h].high - san[h].low) < 1e-9 for h in san)
    assert 0.2 < out["between_share"] < 0.6
    oracle = cross_stratum_bias(MultiHopSearchEnv(), policy="oracle", num_groups=300, seed=0)
    # at the optimal policy one search pays most (0.79 against 0.49 with none and 0.72 with two)
    assert oracle["global"][1].low > 0.15 and oracle["global"][0].high < 0 and oracle["global"][2].high < 0


def test_task_validation_names_the_key():
    with pytest.raises(ConfigError, match="hop_probs") as err:
        MultiHopSearch(hop_probs=[[0.5, 0.4, 0.0]] * 6)
    assert err.value.key == "hop_probs"
    with pytest.raises(ConfigError, match="one of each per question"):
        MultiHopSearch(prior_accuracy=[0.5, 0.5])
    with pytest.raises(ConfigError, match="prior_accuracy"):
        MultiHopSearch(prior_accuracy=[0.1] * 6)
    with pytest.raises(ValueError, match="policy"):
        cross_stratum_bias(MultiHopSearchEnv(), policy="greedy")
