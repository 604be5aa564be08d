"""MINTO: the DQN target from the per-action minimum of the target and online networks."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import torch
from quadriga_std.learners.dqn import DQN

__all__ = ["MINTO"]


@attrs.define(kw_only=True)
class MINTO(DQN):
    """DQN whose TD target bootstraps from min(target, online) per action, then maximises.

    y = r + gamma (1 - done) max_a' min(Q_target(s', a'), sg[Q_online(s', a')]).
    Everything else (network, replay buffer, epsilon-greedy exploration, hard target copies every
    ``target_update_period`` updates, hyperparameters, artifact) is the ``dqn`` baseline's; the
    only extra cost is one forward pass of the online network on s'.

    Diagnostic: ``min_binds_fraction``, the fraction of replay rows in which the minimum *binds*,
    i.e. the MINTO bootstrap max_a' min(Q_target, Q_online)(s', a') is strictly below DQN's
    max_a' Q_target(s', a') (the two targets differ; terminal rows are counted too, where both
    bootstraps are masked). :meth:`td_target` returns it with each target; the ``dqn`` learner
    averages it into ``info["min_binds_fraction"]`` (over all updates, in [0, 1]) and
    ``history["min_binds_fraction"]`` (over each block of ``log_every`` updates, aligned with
    ``history["update_step"]``).

    Raises:
        ConfigError: as :class:`quadriga_std.learners.dqn.DQN` (bad hyperparameters, continuous actions).

    Source: Hendawy, Metternich, Vincent, Kallel, Peters & D'Eramo 2025, "Use the Online Network
    If You Can: Towards Fast and Stable Reinforcement Learning" (arXiv 2510.02590), the MINTO target.
    """

    needs_next_q_online: ClassVar[bool] = True
    needs_next_q_target: ClassVar[bool] = True

    def td_target(
        self, next_q_online: Any, next_q_target: Any, reward: Any, done: Any, gamma: float
    ) -> tuple[Any, dict[str, Any]]:
        """MINTO target.

        Args:
            next_q_online: ``Tensor[B, A]`` Q_online(s', .) (computed without gradient).
            next_q_target: ``Tensor[B, A]`` Q_target(s', .).
            reward: ``Tensor[B]`` rewards.
            done: ``Tensor[B]`` float termination flags.
            gamma: discount factor.

        Returns:
            ``(y, {"min_binds_fraction": 0-d Tensor})``: ``Tensor[B]`` targets
            r + gamma (1 - done) max_a' min(Q_target(s', a'), Q_online(s', a')) (the min is taken per
            action before the max; taking it after the max is a different operator) and the fraction
            of rows where the min binds (0-d float32, kept on the device: no synchronisation).
        """
        bootstrap = torch.minimum(next_q_target, next_q_online.detach()).amax(dim=-1)
        binds = torch.lt(bootstrap, next_q_target.amax(dim=-1)).float().mean()
        return reward + gamma * (1.0 - done) * bootstrap, {"min_binds_fraction": binds}
