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
from typing import Any

import torch
from tensordict import TensorDict
from torchrl.objectives import DQNLoss
from torchrl.objectives.utils import distance_loss

__all__ = ["TDTargetDQNLoss"]

TDTargetFn = Callable[[Any, Any, Any, Any, float], Any]


class TDTargetDQNLoss(DQNLoss):
    """DQN regression loss ``mean(distance(Q_theta(s, a), y))`` with ``y`` from ``td_target``.

    Args:
        value_network: a torchrl ``QValueActor`` reading ``"observation"`` and writing
            ``"action_value"`` (``Tensor[B, num_actions]``).
        q_network: the ``nn.Module`` inside ``value_network`` mapping ``Tensor[B, obs_dim]`` to
            ``Tensor[B, num_actions]``; called directly with the swapped-in parameters.
        td_target: ``fn(next_q_online, next_q_target, reward, done, gamma) -> Tensor[B]`` where the
            Q tensors are ``Tensor[B, num_actions]`` (or ``None`` when not requested), ``reward`` and
            ``done`` are ``Tensor[B]`` (float; ``done`` is the *termination* flag, so truncated
            episodes still bootstrap).
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

    def _q_values(self, params: Any, obs: torch.Tensor) -> torch.Tensor:
        # swap the (online or target) parameters into the actor and call its Q-network on the
        # observation tensor directly: same numbers as running the actor on a TensorDict, less overhead
        with params.to_module(self.value_network, preserve_module_state=False):
            return self._q_network(obs)

    def td_targets(self, tensordict: Any) -> torch.Tensor:
        """The TD targets ``y`` of a replay-buffer batch, from the ``td_target`` rule, without gradient.

        Args:
            tensordict: ``B`` transitions with ``("next", "observation")``, ``("next", "reward")``
                ``Tensor[B, 1]`` and ``("next", "terminated")`` ``Tensor[B, 1]`` (bool).

        Returns:
            ``Tensor[B]`` targets (return units). A subclass that replaces the regression loss
            (e.g. a cross-entropy over value bins) calls this for the target.
        """
        next_obs = tensordict.get(("next", "observation"))
        reward = tensordict.get(("next", "reward")).reshape(-1).float()
        done = tensordict.get(("next", "terminated")).reshape(-1).float()
        with torch.no_grad():
            q_next_online = (
                self._q_values(self.value_network_params.data, next_obs) if self._needs_online else None
            )
            q_next_target = (
                self._q_values(self.target_value_network_params, next_obs) if self._needs_target else None
            )
            return self._td_target(q_next_online, q_next_target, reward, done, self._gamma)

    def forward(self, tensordict: Any) -> TensorDict:
        """Loss on a replay-buffer batch.

        Args:
            tensordict: ``B`` transitions with ``"observation"`` ``Tensor[B, obs_dim]``, ``"action"``
                ``Tensor[B]`` (int64), ``("next", "observation")``, ``("next", "reward")`` ``Tensor[B, 1]``,
                ``("next", "terminated")`` ``Tensor[B, 1]`` (bool).

        Returns:
            ``TensorDict`` with ``"loss"`` (scalar), ``"q_taken"`` (mean Q(s, a), detached) and
            ``"td_target"`` (mean y, detached); writes ``"td_error"`` (``Tensor[B, 1]``) into ``tensordict``.
        """
        obs = tensordict.get("observation")
        action = tensordict.get("action").long()
        q = self._q_values(self.value_network_params, obs)
        q_taken = q.gather(-1, action.reshape(-1, 1)).squeeze(-1)
        target = self.td_targets(tensordict)
        if target.shape != q_taken.shape:
            raise RuntimeError(
                f"td_target returned shape {tuple(target.shape)}, expected {tuple(q_taken.shape)}"
            )
        loss = distance_loss(q_taken, target, self.loss_function).mean()
        tensordict.set("td_error", (q_taken - target).detach().pow(2).unsqueeze(-1), inplace=True)
        return TensorDict(loss=loss, q_taken=q_taken.detach().mean(), td_target=target.mean())
