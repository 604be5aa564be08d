"""Deep Q-networks on torchrl, with the TD-target rule as an overridable method.

The learner steps the gymnasium environment directly (acting greedily under
``torch.inference_mode`` on a plain observation tensor) and composes torchrl's pieces for
learning: ``TensorDictReplayBuffer`` over ``LazyTensorStorage`` (replay buffer, one ``extend``
per round of ``frames_per_batch`` steps), ``HardUpdate``/``SoftUpdate`` (target network) and a
``DQNLoss`` subclass (:class:`~quadriga_std.learners.td_loss.TDTargetDQNLoss`) called on plain
tensors. The schedule is the one of torchrl's ``Collector`` + ``EGreedyModule`` (random rounds
until ``learning_starts``, epsilon annealed per collected step). Only the TD target is computed
here, by :meth:`DQN.td_target`: torchrl's value estimators see the target network alone, while
online bootstrapping and MINTO need both networks' next-state values. A variant is a subclass
that overrides ``td_target`` (and says which networks it reads), or ``make_q_network`` and
``make_loss_module`` for another value head and loss.
"""

from __future__ import annotations

import os
import time
from typing import Any, ClassVar

import attrs

from quadriga import Fitted, Learner, param
from quadriga.errors import ConfigError
from quadriga.interfaces import Environment
from quadriga.validators import non_negative, non_negative_int, one_of, positive, positive_int, probability
from quadriga_std.learners.target_update import periodic_hard_update

# torchrl logs every replay-buffer allocation at INFO; keep the terminal for progress and results
# (set RL_LOGGING_LEVEL=INFO to see them). Read by torchrl when it is first imported, in fit().
os.environ.setdefault("RL_LOGGING_LEVEL", "WARNING")

__all__ = ["DQN", "DQNOnline", "DoubleDQN", "periodic_hard_update"]


def _hidden_sizes(instance: Any, attribute: Any, value: Any) -> None:
    if not value or any(int(h) <= 0 for h in value):
        raise ConfigError(
            f"hidden_sizes must be a non-empty list of positive ints, got {value!r}; "
            "e.g. hidden_sizes = [64, 64].",
            key="hidden_sizes",
        )


def _reward_dim(task: Any, who: str) -> int:
    """Number of reward sources ``K`` of a vector-reward environment (its ``reward_space`` ``Box(K)``).

    Raises:
        ConfigError: the environment has no ``reward_space`` (a scalar-reward environment).
    """
    env = task.make()
    try:
        space = getattr(env.unwrapped, "reward_space", None)
    finally:
        env.close()
    if space is None or len(getattr(space, "shape", ())) != 1:
        raise ConfigError(
            f"{who} learns from per-source rewards and needs a vector-reward environment (a "
            "reward_space Box(K) and info['vector_reward']), e.g. the vector-reward-chain task.",
            key="task",
        )
    return int(space.shape[0])


@attrs.define(kw_only=True)
class DQN(Learner):
    """Deep Q-network with a target network (y = r + gamma (1 - done) max_a' Q_target(s', a')).

    ``fit(task)`` takes a discrete-action :class:`~quadriga_std.tasks.gym.GymEnv` and returns
    ``Fitted(model, history, info)``: ``model`` is the Q-network ``nn.Module`` mapping observations
    ``Tensor[..., obs_dim]`` to Q-values ``Tensor[..., num_actions]`` (units of return);
    ``history`` has ``env_step``/``episode_return`` (one entry per finished training episode,
    return in reward units), ``update_step``/``loss``/``q_mean`` (one entry per logged update) and,
    for each key of the ``info`` that :meth:`td_target` returns, its mean over each ``log_every``
    updates; ``info`` has ``env_steps``, ``updates``, ``seconds``, ``gamma``, ``num_actions``,
    ``obs_dim``, ``episodes`` and each such key's mean over all updates.

    Raises:
        ConfigError: bad hyperparameters (when built); a continuous-action or non-vector-observation
            environment (before any environment step).

    The defaults solve CartPole-v1 (greedy return above 195) in 20k environment steps, about
    45 CPU-seconds: 5 updates of batch 64 per 10 steps, target copy every 100 updates.

    Source: Mnih et al. 2015, "Human-level control through deep reinforcement learning", Algorithm 1.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Environment,)}
    needs_next_q_online: ClassVar[bool] = False
    needs_next_q_target: ClassVar[bool] = True
    #: the learner reads the per-source rewards ``info["vector_reward"]`` (``Tensor[B, K]`` in
    #: ``td_target``) of a vector-reward environment; ``False`` learns from the summed (scalar) reward
    reward_sources: ClassVar[bool] = False

    total_frames: int = param(20_000, doc="training budget (environment steps)", validator=positive_int)
    frames_per_batch: int = param(
        10, doc="environment steps collected between rounds of updates", validator=positive_int
    )
    buffer_size: int = param(50_000, doc="replay buffer capacity (transitions)", validator=positive_int)
    batch_size: int = param(64, doc="transitions per gradient update", validator=positive_int)
    learning_rate: float = param(2.5e-3, doc="Adam learning rate", validator=positive)
    gamma: float = param(0.99, doc="discount factor (per env step)", validator=probability)
    hidden_sizes: list[int] = param(
        factory=lambda: [128, 128], doc="MLP hidden layer widths", validator=_hidden_sizes
    )
    target_update_period: int = param(
        100,
        doc="hard target-network copy every this many gradient updates (used when tau = 0)",
        validator=positive_int,
    )
    tau: float = param(
        0.0, doc="soft target update rate per gradient update; 0 uses hard copies", validator=probability
    )
    eps_init: float = param(1.0, doc="initial exploration epsilon", validator=probability)
    eps_end: float = param(0.05, doc="final exploration epsilon", validator=probability)
    eps_anneal_frames: int = param(
        8_000, doc="environment steps over which epsilon decays linearly", validator=positive_int
    )
    num_updates_per_batch: int = param(
        5, doc="gradient updates after each collected batch", validator=non_negative_int
    )
    learning_starts: int = param(
        1_000,
        doc="environment steps of uniformly random actions before the first update",
        validator=non_negative_int,
    )
    loss_function: str = param(
        "smooth_l1",
        doc="regression loss: 'l2', 'l1' or 'smooth_l1' (Huber)",
        validator=one_of(("l2", "l1", "smooth_l1")),
    )
    max_grad_norm: float = param(10.0, doc="gradient-norm clip (0 disables)", validator=non_negative)
    log_every: int = param(
        100, doc="log loss and mean Q every this many gradient updates", validator=positive_int
    )

    def __attrs_post_init__(self) -> None:
        if self.learning_starts >= self.total_frames:
            raise ConfigError(
                f"learning_starts ({self.learning_starts}) must be below total_frames "
                f"({self.total_frames}); lower it or raise the budget.",
                key="learning_starts",
            )

    def td_target(
        self, next_q_online: Any, next_q_target: Any, reward: Any, done: Any, gamma: float
    ) -> tuple[Any, dict[str, Any]]:
        """TD target ``y = r + gamma (1 - done) max_a' Q_target(s', a')``.

        Args:
            next_q_online: ``Tensor[B, A]`` online-network Q(s', .) (``None`` unless the class sets
                ``needs_next_q_online``).
            next_q_target: ``Tensor[B, A]`` target-network Q(s', .) (``None`` unless ``needs_next_q_target``).
            reward: ``Tensor[B]`` rewards r (reward units).
            done: ``Tensor[B]`` float, 1 where s' is terminal (truncation is not termination).
            gamma: discount factor.

        Returns:
            ``(y, info)``: ``Tensor[B]`` targets y (no gradient) and the rule's diagnostics,
            ``{name: 0-d Tensor}`` (none here). The learner averages each ``info`` key per
            ``log_every`` updates into ``history[name]`` and over the run into ``info[name]``; a
            rule keeps nothing on the learner.

        Source: Mnih et al. 2015, Algorithm 1.
        """
        return reward + gamma * (1.0 - done) * next_q_target.max(dim=-1).values, {}

    def make_q_network(self, obs_dim: int, num_actions: int) -> Any:
        """The Q-network: a ReLU MLP ``Tensor[..., obs_dim] -> Tensor[..., num_actions]`` (``hidden_sizes``).

        A variant with another value head (e.g. a categorical distribution over value bins whose mean
        is Q) overrides this together with :meth:`make_loss_module`; the module's ``forward`` must
        still return Q-values, which acting, bootstrapping and the evaluators read.
        """
        import torch
        from torchrl.modules import MLP

        return MLP(
            in_features=obs_dim,
            out_features=num_actions,
            num_cells=list(self.hidden_sizes),
            activation_class=torch.nn.ReLU,
        )

    def make_loss_module(self, actor: Any, qnet: Any) -> Any:
        """The loss: :class:`~quadriga_std.learners.td_loss.TDTargetDQNLoss` with :meth:`td_target`.

        Args:
            actor: the ``QValueActor`` around ``qnet``.
            qnet: the module from :meth:`make_q_network`.

        Returns:
            A ``TDTargetDQNLoss`` (or subclass: the target-network updaters apply to it) whose
            ``loss_terms`` the learner calls once per update.
        """
        from quadriga_std.learners.td_loss import TDTargetDQNLoss

        return TDTargetDQNLoss(
            actor,
            q_network=qnet,
            td_target=self.td_target,
            gamma=self.gamma,
            needs_online=self.needs_next_q_online,
            needs_target=self.needs_next_q_target,
            loss_function=self.loss_function,
        )

    def fit(self, task: Any, *, generator: Any, progress: Any) -> Fitted:
        """Train on ``task`` (see the class docstring for the artifact).

        Args:
            task: a :class:`~quadriga_std.tasks.gym.GymEnv` with a ``Discrete`` action space.
            generator: ``torch.Generator``; seeds network initialisation, exploration, replay
                sampling (torch's global generator, forked and restored) and the environment. Its
                device is where the networks, the replay buffer and the updates live (the
                environment steps on the CPU; each observation is moved to the device to act).
            progress: the stage's progress; total = ``total_frames``.

        Returns:
            :class:`quadriga.Fitted`.

        Raises:
            ConfigError: the environment is not discrete-action with vector observations.
        """
        import torch

        from quadriga.seeding import int_seed
        from quadriga.threads import single_thread
        from quadriga_std.tasks.gym import check_discrete_actions

        probe = task.make()
        num_actions = check_discrete_actions(probe, type(self).__name__)
        obs_dim = int(probe.observation_space.shape[0])
        probe.close()
        torch_seed, env_seed = int_seed(generator), int_seed(generator)
        device = generator.device
        # small MLPs: intra-op threads only add synchronisation cost; torch.manual_seed seeds every
        # device's generator, so the stage's device is forked and restored too
        fork = (
            torch.random.fork_rng(devices=[])
            if device.type == "cpu"
            else torch.random.fork_rng(devices=[device], device_type=device.type)
        )
        with single_thread(), fork:
            torch.manual_seed(torch_seed)
            return self._train(task, obs_dim, num_actions, env_seed, progress, device)

    def epsilon(self, frames: int) -> float:
        """Exploration epsilon after ``frames`` environment steps (linear decay, then constant).

        ``eps_init - (eps_init - eps_end) frames / eps_anneal_frames``, floored at ``eps_end``: the
        schedule of torchrl's ``EGreedyModule`` advanced by ``frames`` steps, in float64.
        """
        decayed = self.eps_init - (self.eps_init - self.eps_end) * frames / self.eps_anneal_frames
        return max(self.eps_end, decayed)

    def _replay_buffer(self, sample_size: int, device: Any = "cpu") -> Any:
        """torchrl's ``TensorDictReplayBuffer`` over ``LazyTensorStorage(buffer_size)`` on ``device``.

        Args:
            sample_size: rows returned by each ``sample()`` (uniform, with replacement).
            device: where the stored transitions live (``extend`` moves them there).
        """
        from torchrl.data import LazyTensorStorage, TensorDictReplayBuffer

        return TensorDictReplayBuffer(
            storage=LazyTensorStorage(self.buffer_size, device=device), batch_size=sample_size
        )

    def _train(
        self,
        task: Any,
        obs_dim: int,
        num_actions: int,
        env_seed: int,
        progress: Any,
        device: Any = "cpu",
    ) -> Fitted:
        """The DQN loop: gymnasium stepped directly, torchrl's replay buffer, loss and target updater.

        Each round collects ``frames_per_batch`` steps (uniformly random actions while fewer than
        ``learning_starts`` steps were taken before the round, else epsilon-greedy with the epsilon
        of the steps taken before the round) and stores them with one ``extend``; then, once
        ``learning_starts`` steps are stored, it makes ``num_updates_per_batch`` updates on
        independent uniform minibatches (one draw of ``num_updates_per_batch * batch_size`` rows
        with replacement, which has the same law).

        Source: Mnih et al. 2015, Algorithm 1.
        """
        import numpy as np
        import torch

        from quadriga_std.learners._dqn_loop import Rollout, TrainingRecord, minibatches

        q_network, loss_module, target_network = self._networks(obs_dim, num_actions, device)
        params = list(loss_module.parameters())
        optimizer = torch.optim.Adam(params, lr=self.learning_rate)
        k, batch_size = self.num_updates_per_batch, self.batch_size
        buffer = self._replay_buffer(max(1, k) * batch_size, device)  # one draw serves a round's k updates
        explore = np.random.default_rng(int(torch.randint(0, 2**62, ()).item()))
        record = TrainingRecord(self.log_every, progress, self.epsilon)
        progress.start(self.total_frames, description=type(self).__name__)
        start = time.perf_counter()
        reward_dim = _reward_dim(task, type(self).__name__) if self.reward_sources else None
        rollout = Rollout(
            task.make(), env_seed, obs_dim, num_actions, self.frames_per_batch, reward_dim, device=device
        )
        try:
            while rollout.frames < self.total_frames:
                uniform, eps = rollout.frames < self.learning_starts, self.epsilon(rollout.frames)
                transitions, finished = rollout.collect(
                    loss_module.q_online, explore, uniform=uniform, epsilon=eps
                )
                buffer.extend(transitions)
                record.episodes(finished)
                learning = rollout.frames >= self.learning_starts and k > 0
                for s, a, s_next, r, done in (
                    minibatches(buffer.sample(), k, batch_size, vector_reward=self.reward_sources)
                    if learning
                    else ()
                ):
                    # Algorithm 1: y = td_target(Q(s', .), Q_target(s', .), r, done); descend on |Q(s, a) - y|
                    terms = loss_module.loss_terms(s, a, s_next, r, done)  # loss, q_taken, td_target, info
                    optimizer.zero_grad(set_to_none=True)
                    terms.loss.backward()
                    if self.max_grad_norm > 0:
                        torch.nn.utils.clip_grad_norm_(params, self.max_grad_norm)
                    optimizer.step()
                    target_network.step()  # Q_target <- Q every target_update_period updates (or Polyak)
                    record.update(rollout.frames, terms.loss, terms.q_taken, terms.info)
                progress.advance(self.frames_per_batch)
        finally:
            rollout.close()
        q_network.eval()
        return Fitted(
            model=q_network,
            history=record.history,
            info=record.info(
                env_steps=rollout.frames,
                seconds=time.perf_counter() - start,
                gamma=self.gamma,
                num_actions=num_actions,
                obs_dim=obs_dim,
            )
            | self.fit_info(loss_module),
        )

    def _networks(self, obs_dim: int, num_actions: int, device: Any = "cpu") -> tuple[Any, Any, Any]:
        """``(q_network, loss_module, target_network)``: the Q-network, its loss and the target updater.

        ``target_network`` is torchrl's ``SoftUpdate`` (``tau > 0``) or :func:`periodic_hard_update`;
        its ``step()`` after each optimiser step moves the loss's target parameters.

        Raises:
            TypeError: :meth:`make_loss_module` did not return a ``TDTargetDQNLoss``.
        """
        from torchrl.data import Categorical
        from torchrl.modules import QValueActor
        from torchrl.objectives import SoftUpdate

        from quadriga_std.learners.td_loss import TDTargetDQNLoss

        q_network = self.make_q_network(obs_dim, num_actions)
        actor = QValueActor(q_network, in_keys=["observation"], spec=Categorical(num_actions))
        loss_module = self.make_loss_module(actor, q_network)
        if not isinstance(loss_module, TDTargetDQNLoss):
            raise TypeError(
                f"{type(self).__name__}.make_loss_module must return a TDTargetDQNLoss (subclass), "
                f"got {type(loss_module).__name__}"
            )
        loss_module.to(device)  # in place: the Q-network (inside it) and the target parameters
        target_network = (
            SoftUpdate(loss_module, tau=self.tau)
            if self.tau > 0
            else periodic_hard_update(loss_module, self.target_update_period)
        )
        return q_network, loss_module, target_network

    def fit_info(self, loss_module: Any) -> dict[str, Any]:
        """Entries added last to ``Fitted.info``, read from the trained loss module (none here).

        A variant whose loss counts something over the run (e.g. clipped targets) overrides this
        instead of keeping run state on the learner; its entries replace the per-update means of
        the same name.

        Args:
            loss_module: the run's :class:`~quadriga_std.learners.td_loss.TDTargetDQNLoss`.
        """
        return {}


@attrs.define(kw_only=True)
class DQNOnline(DQN):
    """DQN bootstrapping from the online network alone: y = r + gamma (1 - done) max_a' Q_online(s', a').

    Same artifact and errors as :class:`DQN`; the target network is kept but never read.

    Source: Mnih et al. 2015 (the "no target network" ablation, Extended Data Table 3).
    """

    needs_next_q_online: ClassVar[bool] = True
    needs_next_q_target: ClassVar[bool] = False

    def td_target(
        self, next_q_online: Any, next_q_target: Any, reward: Any, done: Any, gamma: float
    ) -> tuple[Any, dict[str, Any]]:
        """``(y, {})``, ``y = r + gamma (1 - done) max_a' Q_online(s', a')`` (as :meth:`DQN.td_target`)."""
        return reward + gamma * (1.0 - done) * next_q_online.max(dim=-1).values, {}


@attrs.define(kw_only=True)
class DoubleDQN(DQN):
    """Double DQN: the online network picks a', the target network values it.

    y = r + gamma (1 - done) Q_target(s', argmax_a' Q_online(s', a')). Artifact and errors as :class:`DQN`.

    Source: van Hasselt, Guez & Silver 2016, "Deep Reinforcement Learning with Double Q-learning", eq. 4.
    """

    needs_next_q_online: ClassVar[bool] = True
    needs_next_q_target: ClassVar[bool] = True

    def td_target(
        self, next_q_online: Any, next_q_target: Any, reward: Any, done: Any, gamma: float
    ) -> tuple[Any, dict[str, Any]]:
        """``(y, {})`` with ``y = r + gamma (1 - done) Q_target(s', argmax Q_online(s', .))``.

        Shapes as in :meth:`DQN.td_target`.
        """
        best = next_q_online.argmax(dim=-1, keepdim=True)
        return reward + gamma * (1.0 - done) * next_q_target.gather(-1, best).squeeze(-1), {}
