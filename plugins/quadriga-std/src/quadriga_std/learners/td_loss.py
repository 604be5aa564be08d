"""A torchrl DQN loss whose TD target comes from a pluggable rule.

torchrl's :class:`~torchrl.objectives.DQNLoss` computes its target through a value
estimator that only ever sees the *target* network's next-state values (Double DQN
is a hard-wired special case). Rules such as online bootstrapping or MINTO need the
online and the target network's Q-values of the next state side by side, so this
subclass keeps everything else of ``DQNLoss`` (functional online/target parameters,
which :class:`~torchrl.objectives.HardUpdate` and :class:`~torchrl.objectives.SoftUpdate`
update; ``distance_loss``; the ``td_error`` priority key) and replaces only the
target computation by a callable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import torch
from tensordict import TensorDict
from torchrl.objectives import DQNLoss
from torchrl.objectives.utils import distance_loss

__all__ = ["TDLossTerms", "TDTargetDQNLoss", "check_target_shape"]

#: ``fn(next_q_online, next_q_target, reward, done, gamma) -> (target, info)``
TDTargetFn = Callable[[Any, Any, Any, Any, float], tuple[Any, dict[str, Any]]]


class TDLossTerms(NamedTuple):
    """What one DQN update computes from a minibatch of ``B`` transitions.

    Attributes:
        loss: the scalar loss (with gradient).
        q_taken: ``Tensor[B]`` Q(s, a) of the taken actions (return units).
        td_target: ``Tensor[B]`` TD targets y (return units, no gradient).
        info: diagnostics of this update, ``{name: 0-d Tensor}`` (those of the ``td_target`` rule and
            of the loss); the learner averages each per logging interval into its history.
    """

    loss: torch.Tensor
    q_taken: torch.Tensor
    td_target: torch.Tensor
    info: dict[str, torch.Tensor]


class TDTargetDQNLoss(DQNLoss):
    """DQN regression loss ``mean(distance(Q_theta(s, a), y))`` with ``y`` from ``td_target``.

    Args:
        value_network: a torchrl ``QValueActor`` reading ``"observation"`` and writing
            ``"action_value"`` (``Tensor[B, num_actions]``).
        q_network: the ``nn.Module`` inside ``value_network`` mapping ``Tensor[B, obs_dim]`` to
            ``Tensor[B, num_actions]``; called directly with the swapped-in parameters.
        td_target: ``fn(next_q_online, next_q_target, reward, done, gamma) -> (Tensor[B], info)`` where
            the Q tensors are ``Tensor[B, num_actions]`` (or ``None`` when not requested), ``reward``
            and ``done`` are ``Tensor[B]`` (float; ``done`` is the *termination* flag, so truncated
            episodes still bootstrap) and ``info`` is a dict of 0-d tensors (diagnostics of the rule,
            e.g. MINTO's binding fraction; ``{}`` for none).
        gamma: discount factor in [0, 1].
        needs_online: compute the online network's next-state Q-values (one more forward pass).
        needs_target: compute the target network's next-state Q-values.
        loss_function: ``"l2"``, ``"l1"`` or ``"smooth_l1"`` (Huber), as in ``DQNLoss``.

    The whole target is computed under ``torch.no_grad()``: no gradient flows through
    either branch (stop-gradient on the online branch, as MINTO requires).

    Source: Mnih et al. 2015, Algorithm 1 (loss); torchrl ``objectives/dqn.py`` (everything reused).
    """

    def __init__(
        self,
        value_network: Any,
        *,
        q_network: Any,
        td_target: TDTargetFn,
        gamma: float,
        needs_online: bool,
        needs_target: bool,
        loss_function: str = "l2",
    ) -> None:
        super().__init__(
            value_network, loss_function=loss_function, delay_value=True, action_space="categorical"
        )
        self._q_network = q_network
        self._td_target = td_target
        self._gamma = float(gamma)
        self._needs_online, self._needs_target = bool(needs_online), bool(needs_target)
        self._plan: list[tuple[Any, int]] | None = None
        self._online: list[torch.Tensor] = []
        self._target: list[torch.Tensor] = []
        self._bound = False  # bound on first use, once a target updater is associated

    def _fast_plan(self) -> list[tuple[Any, int]] | None:
        """Layers of a ``Sequential`` of ``Linear`` and parameter-free modules, or ``None`` otherwise.

        Each entry is ``(module, index of its weight in the parameter lists)``, ``-1`` for a layer
        without parameters.
        """
        net = self._q_network
        if not isinstance(net, torch.nn.Sequential):
            return None
        plan, i = [], 0
        for layer in net:
            if type(layer) is torch.nn.Linear:
                plan.append((layer, i))
                i += 1 if layer.bias is None else 2
            elif any(True for _ in layer.parameters()) or any(True for _ in layer.buffers()):
                return None
            else:
                plan.append((layer, -1))
        return plan

    def _bind(self) -> None:
        """Cache the online and target parameter lists in the order of ``q_network.parameters()``.

        The online leaves of ``value_network_params`` are the Q-network's own parameters, and the
        target updaters (``HardUpdate``, ``SoftUpdate``) write the target leaves in place, so the
        cached lists stay valid for the life of the loss.
        """
        self._bound = True
        online = self.value_network_params.flatten_keys(".")
        target = self.target_value_network_params.flatten_keys(".")
        key_of = {id(v): k for k, v in online.items()}
        params = list(self._q_network.parameters())
        if len(key_of) != len(params) or any(id(p) not in key_of for p in params):
            self._plan = None
            return
        self._online = params
        self._target = [target[key_of[id(p)]] for p in params]
        self._plan = self._fast_plan()

    def _run(self, params: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        """The Q-network on ``x`` with ``params`` in place of its own (same numbers, no module swap)."""
        assert self._plan is not None
        for layer, i in self._plan:
            if i < 0:
                x = layer(x)
            else:
                x = torch.nn.functional.linear(
                    x, params[i], params[i + 1] if layer.bias is not None else None
                )
        return x

    def q_online(self, obs: torch.Tensor) -> torch.Tensor:
        """Online Q-values ``Tensor[..., obs_dim] -> Tensor[..., num_actions]`` (with gradient if enabled)."""
        if not self._bound:
            self._bind()
        if self._plan is None:
            return self._q_values(self.value_network_params, obs)
        return self._run(self._online, obs)

    def q_target(self, obs: torch.Tensor) -> torch.Tensor:
        """Target-network Q-values ``Tensor[..., obs_dim] -> Tensor[..., num_actions]``."""
        if not self._bound:
            self._bind()
        if self._plan is None:
            return self._q_values(self.target_value_network_params, obs)
        return self._run(self._target, obs)

    def _q_values(self, params: Any, obs: torch.Tensor) -> torch.Tensor:
        # swap the (online or target) parameters into the actor and call its Q-network on the
        # observation tensor directly: same numbers as running the actor on a TensorDict, less overhead
        with params.to_module(self.value_network, preserve_module_state=False):
            return self._q_network(obs)

    def targets(
        self, next_obs: torch.Tensor, reward: torch.Tensor, done: torch.Tensor
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """TD targets ``y`` from the ``td_target`` rule on plain tensors, without gradient.

        Args:
            next_obs: ``Tensor[B, obs_dim]`` next observations s'.
            reward: ``Tensor[B]`` float rewards (reward units).
            done: ``Tensor[B]`` float termination flags.

        Returns:
            ``(Tensor[B] targets (return units), info)``: ``info`` as the rule returned it.

        Raises:
            TypeError: the ``td_target`` rule did not return a ``(target, info)`` pair.
        """
        with torch.no_grad():
            q_next_online = self.q_online(next_obs) if self._needs_online else None
            q_next_target = self.q_target(next_obs) if self._needs_target else None
            out = self._td_target(q_next_online, q_next_target, reward, done, self._gamma)
        if not (isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], dict)):
            raise TypeError(
                f"td_target must return (target Tensor[B], info dict), got {type(out).__name__}; "
                "return (y, {}) when the rule has no diagnostics."
            )
        return out

    def td_targets(self, tensordict: Any) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The TD targets ``y`` of a replay-buffer batch, from the ``td_target`` rule, without gradient.

        Args:
            tensordict: ``B`` transitions with ``("next", "observation")``, ``("next", "reward")``
                ``Tensor[B, 1]`` and ``("next", "terminated")`` ``Tensor[B, 1]`` (bool).

        Returns:
            ``(Tensor[B] targets (return units), info)`` as :meth:`targets`.
        """
        return self.targets(
            tensordict.get(("next", "observation")),
            tensordict.get(("next", "reward")).reshape(-1).float(),
            tensordict.get(("next", "terminated")).reshape(-1).float(),
        )

    def loss_terms(
        self,
        obs: torch.Tensor,
        action: torch.Tensor,
        next_obs: torch.Tensor,
        reward: torch.Tensor,
        done: torch.Tensor,
    ) -> TDLossTerms:
        """The loss on plain tensors (what :meth:`forward` computes, without the TensorDicts).

        The learner calls this once per update; a variant with another loss (e.g. a cross-entropy
        over value bins) overrides it and reads its targets from :meth:`targets`.

        Args:
            obs: ``Tensor[B, obs_dim]`` observations s.
            action: ``Tensor[B]`` int64 actions a.
            next_obs: ``Tensor[B, obs_dim]`` next observations s'.
            reward: ``Tensor[B]`` float rewards r (reward units).
            done: ``Tensor[B]`` float termination flags (1 where s' is terminal).

        Returns:
            :class:`TDLossTerms`: the scalar loss (with gradient), ``Tensor[B]`` Q(s, a) (with
            gradient), ``Tensor[B]`` TD targets y (no gradient) and the rule's ``info``.

        Raises:
            RuntimeError: ``td_target`` returned a tensor of the wrong shape.
            TypeError: ``td_target`` did not return a ``(target, info)`` pair.

        Source: Mnih et al. 2015, Algorithm 1 (loss).
        """
        q = self.q_online(obs)
        q_taken = q.gather(-1, action.reshape(-1, 1)).squeeze(-1)
        target, info = self.targets(next_obs, reward, done)
        check_target_shape(target, q_taken)
        return TDLossTerms(distance_loss(q_taken, target, self.loss_function).mean(), q_taken, target, info)

    def forward(self, tensordict: Any) -> TensorDict:
        """Loss on a replay-buffer batch.

        Args:
            tensordict: ``B`` transitions with ``"observation"`` ``Tensor[B, obs_dim]``, ``"action"``
                ``Tensor[B]`` (int64), ``("next", "observation")``, ``("next", "reward")`` ``Tensor[B, 1]``,
                ``("next", "terminated")`` ``Tensor[B, 1]`` (bool).

        Returns:
            ``TensorDict`` with ``"loss"`` (scalar), ``"q_taken"`` (mean Q(s, a), detached),
            ``"td_target"`` (mean y, detached) and the update's ``info`` entries (0-d); writes
            ``"td_error"`` (``Tensor[B, 1]``) into ``tensordict``.
        """
        loss, q_taken, target, info = self.loss_terms(
            tensordict.get("observation"),
            tensordict.get("action").long(),
            tensordict.get(("next", "observation")),
            tensordict.get(("next", "reward")).reshape(-1).float(),
            tensordict.get(("next", "terminated")).reshape(-1).float(),
        )
        tensordict.set("td_error", (q_taken - target).detach().pow(2).unsqueeze(-1), inplace=True)
        return TensorDict(loss=loss, q_taken=q_taken.detach().mean(), td_target=target.mean(), **info)


def check_target_shape(target: torch.Tensor, q_taken: torch.Tensor) -> None:
    """Check that the TD targets have the shape of ``Q(s, a)`` (``Tensor[B]``).

    Raises:
        RuntimeError: the shapes differ (a ``td_target`` rule that kept a dimension, say).
    """
    if target.shape != q_taken.shape:
        raise RuntimeError(f"td_target returned shape {tuple(target.shape)}, expected {tuple(q_taken.shape)}")
