"""DQN (quadriga-std defaults) solves CartPole-v1 within a fixed budget at a fixed seed."""

from __future__ import annotations

import pytest
import torch
from quadriga_std.evaluators.rl import EpisodeReturn
from quadriga_std.learners.dqn import DQN
from quadriga_std.tasks.gym import GymEnv

from quadriga.progress import StageProgress


@pytest.mark.slow
def test_dqn_solves_cartpole_in_20k_steps():
    task = GymEnv(env_id="CartPole-v1")
    fit = DQN(total_frames=20_000).fit(
        task, generator=torch.Generator().manual_seed(0), progress=StageProgress()
    )
    fit.info["component"] = "dqn"
    metrics = EpisodeReturn(num_episodes=10).evaluate({"dqn-s0": fit}, task)
    # CartPole-v1 counts as solved at an average return of 195 (gymnasium's reward_threshold is 475 for v1)
    assert metrics.values["dqn-s0/mean_return"] >= 195.0
    assert fit.info["env_steps"] == 20_000 and len(fit.history["episode_return"]) > 50


def test_periodic_hard_update_copies_exactly_floor_updates_over_period():
    """2000 updates at period 500: 4 copies, at updates 500, 1000, 1500, 2000 (torchrl's own: 3)."""
    from quadriga_std.learners.dqn import periodic_hard_update
    from torchrl.data import Categorical
    from torchrl.modules import MLP, QValueActor
    from torchrl.objectives import DQNLoss, HardUpdate

    def make():
        torch.manual_seed(0)
        net = MLP(in_features=2, out_features=2, num_cells=[4])
        actor = QValueActor(net, in_keys=["observation"], spec=Categorical(2))
        return net, DQNLoss(actor, action_space="categorical", delay_value=True)

    def copies(updater, net, loss, n):
        count, copied_at = 0, []
        for i in range(1, n + 1):
            with torch.no_grad():
                for p in net.parameters():
                    p.add_(1.0)  # the online network moves every update
            updater.step()
            target = next(iter(loss.target_value_network_params.values(True, True)))
            online = next(iter(loss.value_network_params.values(True, True)))
            if torch.equal(target, online):
                count += 1
                copied_at.append(i)
        return count, copied_at

    net, loss = make()
    upd = periodic_hard_update(loss, 500)
    n, at = copies(upd, net, loss, 2000)
    assert (n, at, upd.copies) == (4, [500, 1000, 1500, 2000], 4)
    net, loss = make()
    assert copies(HardUpdate(loss, value_network_update_interval=500), net, loss, 2000)[0] == 3
    net, loss = make()
    assert copies(periodic_hard_update(loss, 1), net, loss, 7)[0] == 7
