"""Map-DQN: the torch mappings, the target rule against DQN's at its limit, a smoke run."""

from __future__ import annotations

import numpy as np
import torch
from quadriga_value_mapping.deep import MapDQN, torch_forward, torch_inverse
from quadriga_value_mapping.mapping import forward, inverse

from quadriga.progress import StageProgress
from quadriga.testing import cheap_dqn, parametrize_with_checks, plugin_cases

CHEAP = cheap_dqn()


def test_torch_mappings_match_numpy():
    q = np.linspace(0.01687, 30.0, 500)
    y = np.linspace(-2.0, 10.0, 500)
    for name in ("identity", "log", "loglin"):
        np.testing.assert_allclose(torch_forward(name, torch.tensor(q)).numpy(), forward(name, q), rtol=1e-12)
        np.testing.assert_allclose(torch_inverse(name, torch.tensor(y)).numpy(), inverse(name, y), rtol=1e-12)


def test_identity_mapping_with_unit_regular_step_is_the_dqn_target():
    # f = identity and beta_reg = 1: U_j = r_j + gamma (1 - done) Q_j(s', a*), and sum_j lambda_j U_j is
    # DQN's r + gamma (1 - done) max_a Q_target(s', a) (a* maximises the summed Q of the target network)
    torch.manual_seed(0)
    learner = MapDQN(mapping="identity", beta_reg=1.0, hidden_sizes=[16], gamma=0.9)
    qnet, loss, _ = learner._networks(4, 3)
    obs, next_obs = torch.randn(32, 4), torch.randn(32, 4)
    reward, done = torch.randn(32), (torch.rand(32) < 0.3).float()
    terms = loss.loss_terms(obs, torch.randint(0, 3, (32,)), next_obs, reward, done)
    expected = reward + 0.9 * (1 - done) * loss.q_target(next_obs).max(-1).values
    torch.testing.assert_close(terms.td_target, expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(qnet(obs), (qnet.mapped(obs) * torch.tensor([1.0, -1.0])).sum(-1))


def test_smoke_fit_on_a_reward_scaled_task_is_finite():
    from quadriga_std.tasks.reward_wrappers import RewardWrappedGymEnv

    task = RewardWrappedGymEnv(env_id="CartPole-v1", reward_scale=0.01)
    fitted = MapDQN(**{**CHEAP, "total_frames": 200, "learning_starts": 50}).fit(
        task, generator=torch.Generator().manual_seed(0), progress=StageProgress()
    )
    assert np.isfinite(fitted.history["loss"]).all() and 0.0 <= fitted.info["clipped_fraction"] <= 1.0
    q = fitted.model(torch.zeros(1, 4))
    assert q.shape == (1, 2) and torch.isfinite(q).all()


@parametrize_with_checks(
    plugin_cases(
        "quadriga-value-mapping",
        setup={
            ("learner", "tabular-value-mapping"): {
                "params": {"iterations": 20},
                "task": {"use": "vector-reward-chain"},
            },
            ("learner", "map-dqn"): {"params": CHEAP},
        },
    )
)
def test_conformance(case, check):
    check(case)
