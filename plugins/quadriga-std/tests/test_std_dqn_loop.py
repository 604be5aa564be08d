"""The DQN loop (gymnasium stepped directly): stored transitions, schedule and the fast Q-network path.

The stored transitions are replayed in a fresh gymnasium environment with the same seed and the
same actions; every observation, reward and flag must match exactly. The loss's functional
forward pass is compared with torchrl's parameter swap (``to_module``) it replaces.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch
from quadriga_std.learners.dqn import DQN, periodic_hard_update
from quadriga_std.tasks.gym import GymEnv

from quadriga.progress import StageProgress
from quadriga.seeding import int_seed


class _Recording(DQN):
    """DQN that keeps a reference to its replay buffer (for inspection)."""

    def _replay_buffer(self, sample_size, device="cpu"):
        self.__dict__.setdefault("_buffers", []).append(super()._replay_buffer(sample_size, device))
        return self.__dict__["_buffers"][-1]


def _stored(frames: int, seed: int, **kw):
    learner = _Recording(total_frames=frames, buffer_size=frames, **kw)
    fit = learner.fit(
        GymEnv(env_id="CartPole-v1"), generator=torch.Generator().manual_seed(seed), progress=StageProgress()
    )
    (buffer,) = learner.__dict__["_buffers"]
    data = buffer[: len(buffer)]
    return fit, data


@pytest.mark.parametrize("seed", [0, 5])
def test_stored_transitions_match_a_direct_gymnasium_rollout(seed):
    frames = 700
    fit, data = _stored(frames, seed, learning_starts=200, frames_per_batch=10, num_updates_per_batch=2)
    assert len(data) == frames == fit.info["env_steps"]
    obs, act = data["observation"].numpy(), data["action"].numpy()
    nxt, rew = data["next", "observation"].numpy(), data["next", "reward"].numpy().ravel()
    term = data["next", "terminated"].numpy().ravel()
    trunc = data["next", "truncated"].numpy().ravel()
    assert np.array_equal(data["next", "done"].numpy().ravel(), term | trunc)
    gen = torch.Generator().manual_seed(seed)
    int_seed(gen)  # the torch seed; the second draw seeds the environment
    env = gymnasium.make("CartPole-v1")
    o, _ = env.reset(seed=int_seed(gen))
    returns, ret, ends = [], 0.0, []
    for i in range(frames):
        assert np.array_equal(obs[i], o), i
        o2, r, te, tr, _ = env.step(int(act[i]))
        assert np.array_equal(nxt[i], o2) and rew[i] == r and term[i] == te and trunc[i] == tr, i
        ret += r
        if te or tr:
            returns.append(ret)
            ends.append(i + 1)
            ret = 0.0
            o, _ = env.reset()
        else:
            o = o2
    assert fit.history["episode_return"] == returns and fit.history["env_step"] == ends
    assert fit.info["updates"] == 2 * ((frames - 200) // 10 + 1)


def test_random_rounds_then_epsilon_greedy_actions():
    """Before learning_starts the actions are uniform; once epsilon is 0 they are the greedy ones.

    With no updates the network stays as initialised, so every action after the annealing is the
    argmax of the returned model at the stored observation.
    """
    frames, start = 1200, 400
    learner = _Recording(
        total_frames=frames,
        buffer_size=frames,
        learning_starts=start,
        eps_init=1.0,
        eps_end=0.0,
        eps_anneal_frames=500,
        frames_per_batch=10,
        num_updates_per_batch=0,
    )
    fit = learner.fit(
        GymEnv(env_id="CartPole-v1"), generator=torch.Generator().manual_seed(1), progress=StageProgress()
    )
    data = learner.__dict__["_buffers"][0][:frames]
    act = data["action"].numpy()
    # uniform over 2 actions in the first 400 steps: mean 0.5, sd 0.025; 4 sd is 0.1
    assert abs(act[:start].mean() - 0.5) < 0.1
    with torch.no_grad():
        greedy = fit.model(data["observation"][500:]).argmax(-1).numpy()
    assert np.array_equal(act[500:], greedy) and fit.info["updates"] == 0
    # between 400 and 500 epsilon falls from 0.2 to 0.01: some actions differ from the greedy ones
    # only by exploration; at least 80 % of them are greedy
    with torch.no_grad():
        mid = fit.model(data["observation"][start:500]).argmax(-1).numpy()
    assert (act[start:500] == mid).mean() >= 0.8
    assert learner.epsilon(0) == 1.0 and learner.epsilon(250) == 0.5 and learner.epsilon(10_000) == 0.0


def test_epsilon_matches_torchrl_egreedy_annealing():
    from torchrl.data import Categorical
    from torchrl.modules import EGreedyModule

    learner = DQN(eps_init=1.0, eps_end=0.05, eps_anneal_frames=800)
    module = EGreedyModule(Categorical(2), eps_init=1.0, eps_end=0.05, annealing_num_steps=800)
    for frames in range(0, 1200, 10):
        assert learner.epsilon(frames) == pytest.approx(float(module.eps), abs=1e-5), frames
        module.step(10)


def _loss(cls=DQN, hidden=(16, 16)):
    from quadriga_std.learners.td_loss import TDTargetDQNLoss
    from torchrl.data import Categorical
    from torchrl.modules import MLP, QValueActor

    torch.manual_seed(0)
    net = MLP(in_features=4, out_features=3, num_cells=list(hidden), activation_class=torch.nn.ReLU)
    actor = QValueActor(net, in_keys=["observation"], spec=Categorical(3))
    learner = cls()
    loss = TDTargetDQNLoss(
        actor,
        q_network=net,
        td_target=learner.td_target,
        gamma=0.9,
        needs_online=cls.needs_next_q_online,
        needs_target=cls.needs_next_q_target,
        loss_function="smooth_l1",
    )
    return net, loss


@pytest.mark.parametrize("soft", [False, True])
def test_functional_forward_equals_the_parameter_swap_after_target_updates(soft):
    from torchrl.objectives import SoftUpdate

    net, loss = _loss()
    updater = SoftUpdate(loss, tau=0.3) if soft else periodic_hard_update(loss, 2)
    x = torch.randn(7, 4)
    for _ in range(5):
        with torch.no_grad():
            for p in net.parameters():
                p.add_(0.1 * torch.randn_like(p))
        updater.step()
        assert torch.equal(loss.q_online(x), net(x))
        assert torch.equal(loss.q_target(x), loss._q_values(loss.target_value_network_params, x))
    assert not torch.equal(loss.q_online(x), loss.q_target(x))


def test_tensor_loss_equals_the_tensordict_loss_and_its_gradient():
    from quadriga_std.learners.dqn import DoubleDQN
    from tensordict import TensorDict

    for cls in (DQN, DoubleDQN):
        net, loss = _loss(cls)
        periodic_hard_update(loss, 3)
        b = 9
        g = torch.Generator().manual_seed(2)
        obs, nxt = torch.randn(b, 4, generator=g), torch.randn(b, 4, generator=g)
        act = torch.randint(0, 3, (b,), generator=g)
        rew, term = torch.randn(b, 1, generator=g), torch.rand(b, 1, generator=g) < 0.3
        td = TensorDict(
            {
                "observation": obs,
                "action": act,
                "next": {"observation": nxt, "reward": rew, "terminated": term},
            },
            batch_size=[b],
        )
        l_td = loss(td)["loss"]
        grads_td = torch.autograd.grad(l_td, list(net.parameters()))
        l_t, q_taken, y, info = loss.loss_terms(obs, act, nxt, rew.ravel(), term.ravel().float())
        assert info == {}
        grads_t = torch.autograd.grad(l_t, list(net.parameters()))
        # reference: the swap path computed by hand
        with torch.no_grad():
            q_next_t = loss._q_values(loss.target_value_network_params, nxt)
            q_next_o = net(nxt)
        ref_y, _ = cls().td_target(q_next_o, q_next_t, rew.ravel(), term.ravel().float(), 0.9)
        torch.testing.assert_close(y, ref_y, rtol=0, atol=0)
        torch.testing.assert_close(q_taken, net(obs).gather(-1, act[:, None]).squeeze(-1), rtol=0, atol=0)
        assert torch.equal(l_td, l_t)
        for a, b_ in zip(grads_td, grads_t, strict=True):
            assert torch.equal(a, b_)


def test_a_variant_with_its_own_loss_gets_every_update_and_its_info_is_averaged():
    """A loss subclass that replaces ``loss_terms`` (another loss) gets every update's minibatch;
    the ``info`` of each update is averaged per ``log_every`` updates into the history and over the
    run into ``Fitted.info``; the learner's own fields are left as they were."""
    import attrs
    from quadriga_std.learners.td_loss import TDLossTerms, TDTargetDQNLoss

    calls = []

    class CountingLoss(TDTargetDQNLoss):
        def loss_terms(self, obs, action, next_obs, reward, done):
            calls.append(obs.shape[0])
            terms = super().loss_terms(obs, action, next_obs, reward, done)
            # the update's index as its diagnostic: interval means are closed forms
            return TDLossTerms(*terms[:3], {**terms.info, "index": torch.tensor(float(len(calls)))})

    class Variant(DQN):
        def make_loss_module(self, actor, qnet):
            return CountingLoss(
                actor,
                q_network=qnet,
                td_target=self.td_target,
                gamma=self.gamma,
                needs_online=False,
                needs_target=True,
                loss_function=self.loss_function,
            )

    learner = Variant(
        total_frames=300,
        learning_starts=100,
        frames_per_batch=10,
        num_updates_per_batch=3,
        batch_size=16,
        log_every=10,
    )
    before = attrs.asdict(learner)
    fit = learner.fit(
        GymEnv(env_id="CartPole-v1"), generator=torch.Generator().manual_seed(0), progress=StageProgress()
    )
    assert fit.info["updates"] == len(calls) == 3 * 21 and set(calls) == {16}
    # 63 updates: 6 full intervals of 10 (means 5.5, 15.5, ..., 55.5); the mean of 1..63 is 32
    assert fit.history["index"] == [10 * k + 5.5 for k in range(6)]
    assert len(fit.history["update_step"]) == 6 and fit.info["index"] == 32.0
    assert attrs.asdict(learner) == before


def test_a_td_target_rule_returning_a_bare_tensor_is_an_error():
    class Old(DQN):
        def td_target(self, next_q_online, next_q_target, reward, done, gamma):
            return reward

    with pytest.raises(TypeError, match=r"td_target must return \(target"):
        Old(total_frames=120, learning_starts=100, frames_per_batch=10).fit(
            GymEnv(env_id="CartPole-v1"), generator=torch.Generator().manual_seed(0), progress=StageProgress()
        )
