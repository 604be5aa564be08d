"""Map-DQN: orchestrated value mapping with function approximation, on quadriga-std's ``dqn`` hooks.

The Q-network has one head per reward channel in the mapped space, ``Q~(s, .) in R^{A x J}``; its
``forward`` returns ``Q(s, a) = sum_j lambda_j f^-1(Q~_j(s, a))``, which acting and the evaluators read.
The loss regresses the taken action's mapped values on the mapped regular-space targets (the
paper's Algorithm 1 with a network; ``beta_f`` is the optimiser's learning rate):

    Q_j(s', .) = f^-1(Q~_j^target(s', .)),  a* = argmax_a sum_j lambda_j Q_j(s', a)
    U_j        = Q_j(s, a) + beta_reg (r_j + gamma (1 - done) Q_j(s', a*) - Q_j(s, a))   # no gradient
    loss       = mean_b sum_j distance(Q~_j(s_b, a_b), f(max(U_j, eps_log)))

with ``r_j`` the polar channels of the scalar reward. Everything else (trunk, replay, exploration,
target copies, optimiser, budget) is ``dqn``'s.

Paper against code: the code (``map_rl/map_dqn_agent.py``, ``_build_target_q_op``) also clips each
channel's target to ``[0, 1/(1 - gamma)]``, which assumes channel rewards in [0, 1] (Atari's clipped
rewards); the paper's method has no upper clip, and reward-scaled tasks would be distorted by it, so
only the lower clip at ``eps_log`` (needed by the logarithm) is kept.

Source: Fatemi & Tavakoli 2022, "Orchestrated Value Mapping for Reinforcement Learning" (ICLR, arXiv
2203.07171), Section 5 (the deep agent) and Algorithm 1.
"""

from __future__ import annotations

from typing import Any

import attrs
import torch
from quadriga_std.learners.dqn import DQN
from quadriga_std.learners.td_loss import TDLossTerms, TDTargetDQNLoss
from torchrl.objectives.utils import distance_loss

from quadriga import param
from quadriga.validators import in_range, one_of
from quadriga_value_mapping.mapping import EPS_LOG, MAPPINGS

__all__ = ["MapDQN", "MappedQNetwork", "MappedTDLoss", "torch_forward", "torch_inverse"]

_C = 0.5
_LAMBDA = (1.0, -1.0)


def torch_forward(name: str, q: torch.Tensor) -> torch.Tensor:
    """``f(q)`` in torch (as :func:`quadriga_value_mapping.mapping.forward`, ``c = 0.5, d = 0``)."""
    if name == "identity":
        return q
    if name == "log":
        return _C * torch.log(q)
    return torch.where(q <= 1.0, _C * torch.log(q.clamp(max=1.0)), _C * q - _C)


def torch_inverse(name: str, y: torch.Tensor) -> torch.Tensor:
    """``f^-1(y)`` in torch (as :func:`quadriga_value_mapping.mapping.inverse`)."""
    if name == "identity":
        return y
    if name == "log":
        return torch.exp(y / _C)
    return torch.where(y <= 0.0, torch.exp(y.clamp(max=0.0) / _C), (y + _C) / _C)


class MappedQNetwork(torch.nn.Module):
    """An MLP giving mapped channel values ``Tensor[..., A, J]``; ``forward`` gives Q ``Tensor[..., A]``.

    Args:
        obs_dim: observation size.
        num_actions: ``A``.
        hidden_sizes: ReLU trunk widths.
        mapping: the value mapping of every channel.

    Source: Fatemi & Tavakoli 2022, Section 5 (one head per channel).
    """

    def __init__(self, obs_dim: int, num_actions: int, hidden_sizes: list[int], mapping: str) -> None:
        from torchrl.modules import MLP

        super().__init__()
        self.num_actions, self.mapping = int(num_actions), mapping
        self.register_buffer("weights", torch.tensor(_LAMBDA))
        self.trunk = MLP(
            in_features=obs_dim,
            out_features=self.num_actions * len(_LAMBDA),
            num_cells=list(hidden_sizes),
            activation_class=torch.nn.ReLU,
        )

    def mapped(self, obs: torch.Tensor) -> torch.Tensor:
        """Mapped channel values ``Q~`` ``Tensor[..., A, J]``."""
        return self.trunk(obs).unflatten(-1, (self.num_actions, len(_LAMBDA)))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """``Q = sum_j lambda_j f^-1(Q~_j)`` ``Tensor[..., A]`` (return units)."""
        return (torch_inverse(self.mapping, self.mapped(obs)) * self.weights).sum(-1)


class MappedTDLoss(TDTargetDQNLoss):
    """Regression of the taken action's mapped channel values on ``f(max(U_j, eps_log))`` (see module).

    Args:
        value_network, q_network: the actor and its :class:`MappedQNetwork`.
        beta_reg: the regular-space step size.
        loss_function, gamma, td_target, needs_online, needs_target: as ``TDTargetDQNLoss``
            (``td_target`` is not used: the target is the two-step rule above).
    """

    def __init__(self, value_network: Any, *, q_network: Any, beta_reg: float, **kw: Any) -> None:
        super().__init__(value_network, q_network=q_network, **kw)
        self._beta_reg = float(beta_reg)

    def _mapped(self, params: Any, obs: torch.Tensor) -> torch.Tensor:
        with params.to_module(self.value_network, preserve_module_state=False):
            return self._q_network.mapped(obs)

    def loss_terms(
        self,
        obs: torch.Tensor,
        action: torch.Tensor,
        next_obs: torch.Tensor,
        reward: torch.Tensor,
        done: torch.Tensor,
    ) -> TDLossTerms:
        """The mapped regression loss on plain tensors (arguments as ``TDTargetDQNLoss.loss_terms``).

        Returns:
            ``TDLossTerms``: ``loss`` (scalar), ``q_taken`` (``Tensor[B]``, Q(s, a) in regular space,
            detached), ``td_target`` (``Tensor[B]``, ``sum_j lambda_j U_j``) and ``info`` with
            ``"clipped_fraction"`` (0-d: share of channel targets raised to ``eps_log``) and
            ``"log_branch_fraction"`` (0-d: share of the channel targets above ``eps_log``, of the
            channels with a reward in the batch, that lie below the log-lin break at 1, where the
            mapping is logarithmic; 1 for ``log``, 0 for ``identity``): the test bed's check that the
            mapping is non-linear where it acts (an unrewarded channel, such as ``r-`` on
            CartPole-v1, decays towards ``eps_log`` and would count on any task).
        """
        mapping, lam = self._q_network.mapping, self._q_network.weights
        action = action.long().reshape(-1)
        rows = torch.arange(action.numel())
        taken = self._mapped(self.value_network_params, obs)[rows, action]  # [B, J]
        with torch.no_grad():
            q_taken = torch_inverse(mapping, taken)  # Q_j(s, a)
            q_next = torch_inverse(
                mapping, self._mapped(self.target_value_network_params, next_obs)
            )  # [B, A, J]
            a_star = (q_next * lam).sum(-1).argmax(-1)
            channels = torch.stack([reward.clamp(min=0.0), (-reward).clamp(min=0.0)], dim=-1)  # polar, eq. 13
            u = q_taken + self._beta_reg * (
                channels + self._gamma * (1.0 - done)[:, None] * q_next[rows, a_star] - q_taken
            )
            low = u < EPS_LOG
            if mapping != "identity":
                u = u.clamp(min=EPS_LOG)
            target = torch_forward(mapping, u)
        loss = distance_loss(taken, target, self.loss_function).sum(-1).mean()
        clipped = low.float().mean() if mapping != "identity" else torch.zeros(())
        live = ~low & (channels > 0).any(0)  # unclipped targets of the channels rewarded in the batch
        if mapping == "identity" or not bool(live.any()):
            log_branch = torch.zeros(())
        else:
            log_branch = (u[live] < 1.0).float().mean() if mapping == "loglin" else torch.ones(())
        info = {"clipped_fraction": clipped, "log_branch_fraction": log_branch}
        return TDLossTerms(loss, (q_taken * lam).sum(-1), (u * lam).sum(-1), info)


@attrs.define(kw_only=True)
class MapDQN(DQN):
    """Map-DQN: ``dqn`` with per-channel heads in a mapped (log-lin) space and two step sizes.

    Artifact as ``dqn``'s (``model`` is a :class:`MappedQNetwork` whose ``forward`` gives Q); ``info``
    adds ``clipped_fraction`` and ``log_branch_fraction`` (run means, see :class:`MappedTDLoss`),
    ``mapping`` and ``beta_reg``. ``beta_f`` is the optimiser's ``learning_rate``.

    Shapes:
        ``model``: ``Tensor[..., obs_dim] -> Tensor[..., num_actions]`` (``mapped``: ``[..., A, 2]``).

    Units:
        Q in return units (the environment's reward units, discount ``gamma``).

    Raises:
        ConfigError: as ``dqn``.

    Source: Fatemi & Tavakoli 2022 (ICLR), Section 5 and Algorithm 1; defaults of ``map_dqn.gin``
    (log-lin mapping, polar decomposition, beta_reg = 0.1).
    """

    mapping: str = param("loglin", doc="value mapping of both channels", validator=one_of(MAPPINGS))
    beta_reg: float = param(
        0.1,
        doc="regular-space step size (the code's alpha / learning rate)",
        validator=in_range(0.0, 1.0, low_open=True),
    )

    def fit_info(self, loss_module: Any) -> dict[str, Any]:
        """``dqn``'s entries plus ``mapping`` and ``beta_reg`` (the claims' precondition reads them)."""
        return {**super().fit_info(loss_module), "mapping": self.mapping, "beta_reg": self.beta_reg}

    def make_q_network(self, obs_dim: int, num_actions: int) -> MappedQNetwork:
        """A :class:`MappedQNetwork` with ``dqn``'s trunk (``hidden_sizes``)."""
        return MappedQNetwork(obs_dim, num_actions, list(self.hidden_sizes), self.mapping)

    def make_loss_module(self, actor: Any, qnet: Any) -> MappedTDLoss:
        """A :class:`MappedTDLoss` with ``beta_reg`` and ``dqn``'s regression loss."""
        return MappedTDLoss(
            actor,
            q_network=qnet,
            beta_reg=self.beta_reg,
            td_target=self.td_target,
            gamma=self.gamma,
            needs_online=self.needs_next_q_online,
            needs_target=self.needs_next_q_target,
            loss_function=self.loss_function,
        )
