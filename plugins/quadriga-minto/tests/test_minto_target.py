"""The MINTO target against hand-computed values, and the plugin's registration and bad input."""

from __future__ import annotations

import attrs
import pytest
import torch
from quadriga_minto.learner import MINTO
from quadriga_std.learners.dqn import DQN

from quadriga.errors import ConfigError

Q_ONLINE = torch.tensor([[1.0, 3.0], [2.0, 0.5]])
Q_TARGET = torch.tensor([[2.0, 1.5], [4.0, -1.0]])
REWARD = torch.tensor([1.0, -1.0])


def test_minto_target_min_per_action_then_max():
    # per-action minima: [1.0, 1.5] and [2.0, -1.0] -> max 1.5 and 2.0
    y, _ = MINTO().td_target(Q_ONLINE, Q_TARGET, REWARD, torch.zeros(2), 0.5)
    torch.testing.assert_close(y, torch.tensor([1.0 + 0.5 * 1.5, -1.0 + 0.5 * 2.0]))
    # the min after the max would give min(3, 2) = 2 for the first row: a different operator
    after = torch.minimum(Q_ONLINE.max(-1).values, Q_TARGET.max(-1).values)
    assert after[0] == 2.0 and y[0] != 1.0 + 0.5 * after[0]


def test_minto_target_masks_terminal_states():
    y, _ = MINTO().td_target(Q_ONLINE, Q_TARGET, REWARD, torch.tensor([1.0, 1.0]), 0.99)
    torch.testing.assert_close(y, REWARD)


def test_minto_no_gradient_through_online_branch():
    q_online = Q_ONLINE.clone().requires_grad_(True)
    y, info = MINTO().td_target(q_online, Q_TARGET, REWARD, torch.zeros(2), 0.5)
    assert not y.requires_grad and not info["min_binds_fraction"].requires_grad


def test_minto_is_a_dqn_with_its_hyperparameters():
    m = MINTO(total_frames=5000, target_update_period=100)
    assert isinstance(m, DQN) and m.needs_next_q_online and m.needs_next_q_target
    with pytest.raises(ConfigError, match="learning_starts"):
        MINTO(total_frames=100, learning_starts=500)


def test_registered_and_pipelines_check():
    from quadriga import api
    from quadriga.registry import get_registry

    reg = get_registry()
    names = {c.name for c in reg.claims()}
    assert {"minto-auc", "minto-overestimation"} <= names
    for name in ("cartpole-minto", "acrobot-minto"):
        api.check(name)


def test_unknown_env_id_in_pipeline_suggests_close_match():
    from quadriga import api

    with pytest.raises(ConfigError, match="CartPole-v1"):
        api.check("cartpole-minto", overrides=["task.env.env_id=CartPol-v1"])


def test_continuous_actions_fail_before_training(tmp_path):
    from quadriga import api

    with pytest.raises(Exception, match="discrete action space"):
        api.run("cartpole-minto", overrides=["task.env.env_id=Pendulum-v1"], runs_root=tmp_path)


def test_binding_diagnostic_counts_rows_where_the_min_lowers_the_bootstrap():
    m = MINTO()
    before = attrs.asdict(m)

    def binds(q_online):
        _, info = m.td_target(q_online, Q_TARGET, REWARD, torch.zeros(2), 0.5)
        assert set(info) == {"min_binds_fraction"} and info["min_binds_fraction"].shape == ()
        return float(info["min_binds_fraction"])

    # both rows bind: bootstraps 1.5 < 2.0 and 2.0 < 4.0
    assert binds(Q_ONLINE) == 1.0
    # online above target everywhere: the min is the target, nothing binds
    assert binds(Q_TARGET + 1.0) == 0.0
    # row 0 binds (min max 1.0 < 2.0); row 1: online [5, -2] -> min [4, -2], max 4 = target max
    assert binds(torch.tensor([[1.0, 0.0], [5.0, -2.0]])) == 0.5
    # nothing is kept on the learner
    assert attrs.asdict(m) == before and not getattr(m, "__dict__", {})


def test_fit_logs_the_binding_fraction_per_logged_update_block():
    from quadriga_std.tasks.gym import GymEnv

    from quadriga.progress import StageProgress

    m = MINTO(total_frames=700, learning_starts=200, eps_anneal_frames=300, log_every=51)
    before = attrs.asdict(m)
    fitted = m.fit(
        GymEnv(env_id="Acrobot-v1"), generator=torch.Generator().manual_seed(0), progress=StageProgress()
    )
    blocks = fitted.history["min_binds_fraction"]
    # updates from step 200 on: 51 rounds of 5 updates = 255, 5 logged blocks of 51 (the whole run)
    assert fitted.info["updates"] == 255 and len(blocks) == len(fitted.history["update_step"]) == 5
    assert all(0.0 <= b <= 1.0 for b in blocks)
    assert abs(fitted.info["min_binds_fraction"] - sum(blocks) / 5) < 1e-12
    assert attrs.asdict(m) == before
