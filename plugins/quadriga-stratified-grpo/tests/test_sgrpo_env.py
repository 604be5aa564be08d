"""The search-agent environment: gymnasium's checker, spaces and dynamics in closed form."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from quadriga_stratified_grpo.env import ENV_ID, SearchAgentEnv
from quadriga_stratified_grpo.task import SearchAgent

from quadriga import ConfigError


def test_passes_gymnasium_checker_and_is_registered():
    env = SearchAgent().make()
    assert env.spec.id == ENV_ID == "quadriga/SearchAgent-v0"
    check_env(env.unwrapped, skip_render_check=False)
    assert env.observation_space.shape == (8 + 4 + 1,)
    assert env.action_space.n == 5
    assert isinstance(gymnasium.make(ENV_ID).unwrapped, SearchAgentEnv)


def test_episode_dynamics_and_rewards():
    env = SearchAgentEnv(
        prior_accuracy=(1.0, 0.25), clue_quality=(1.0, 0.0), num_answers=4, max_tool_calls=2, tool_cost=0.1
    )
    obs, info = env.reset(seed=0, options={"question": 0})
    assert obs[:2].tolist() == [1.0, 0.0] and info == {"question": 0, "tool_calls": 0}
    # question 0: the answer is the prior mode 0 and the clue is always right
    obs, r, term, trunc, info = env.step(0)
    assert r == pytest.approx(-0.1) and not term and not trunc and info["tool_calls"] == 1
    assert obs[2:6].tolist() == [0.5, 0.0, 0.0, 0.0] and obs[-1] == pytest.approx(0.5)
    env.step(0)
    obs, r, term, _, info = env.step(0)  # budget exhausted: ends unanswered, no cost
    assert term and r == 0.0 and info == {"question": 0, "tool_calls": 2, "correct": False, "answered": False}
    env.reset(seed=1, options={"question": 0})
    _, r, term, _, info = env.step(1)
    assert term and r == 1.0 and info["correct"]
    with pytest.raises(RuntimeError):
        env.step(1)


def test_prior_accuracy_and_clue_quality_frequencies():
    env = SearchAgentEnv(prior_accuracy=(0.7,), clue_quality=(0.6,), num_answers=4)
    n, correct, clue_right = 4000, 0, 0
    for i in range(n):
        env.reset(seed=i, options={"question": 0})
        obs, *_ = env.step(0)
        clue = int(np.argmax(obs[1:5]))
        clue_right += clue == env._answer
        correct += env._answer == 0
    # P(answer = mode) = 0.7; P(clue right) = 0.6 + 0.4/4 = 0.7; 4 standard errors ~ 0.029
    assert abs(correct / n - 0.7) < 0.03
    assert abs(clue_right / n - 0.7) < 0.03


def test_bad_tables_are_config_errors():
    with pytest.raises(ConfigError, match="clue_quality"):
        SearchAgent(prior_accuracy=[0.5, 0.5], clue_quality=[0.5])
    with pytest.raises(ConfigError, match="prior_accuracy"):
        SearchAgent(prior_accuracy=[0.1], clue_quality=[0.5])
    with pytest.raises(ConfigError, match="max_tool_calls"):
        SearchAgent(max_tool_calls=0)
    with pytest.raises(ValueError):
        SearchAgentEnv().reset(options={"question": 99})


def test_bayes_optimal_values_closed_forms():
    # uniform prior, one search of quality c: answer the clue, right with prob c + (1 - c)/A
    env = SearchAgentEnv(
        prior_accuracy=(0.25, 0.25, 0.7),
        clue_quality=(1.0, 0.6, 0.0),
        num_answers=4,
        max_tool_calls=1,
        tool_cost=0.1,
    )
    values = env.optimal_values()
    assert values[0] == pytest.approx(1.0 - 0.1)
    assert values[1] == pytest.approx(0.6 + 0.4 / 4 - 0.1)
    assert values[2] == pytest.approx(0.7)  # a useless tool is never worth its cost
    default = SearchAgentEnv().optimal_values()
    assert np.all(default >= SearchAgentEnv().prior_accuracy - 1e-12)
    assert default.mean() == pytest.approx(0.7597, abs=1e-4)


def test_plugin_module_imports_nothing_heavy():
    import subprocess
    import sys

    code = (
        "import sys, quadriga_stratified_grpo.plugin; "
        "print(sorted(m for m in ('torch', 'numpy', 'gymnasium') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
