"""Particle (distributional) DQN on quadriga-std's ``dqn`` hooks, for one or several reward sources.

The Q-network outputs, for each action ``a``, ``N`` particles ``z_1..z_N`` of the return *vector*
``Z(s, a)`` in ``R^K`` (``K`` reward sources; ``K = 1`` is a scalar return law); ``Q(s, a)`` is the
sum over sources of the particle means, so acting, bootstrapping and every Q-value evaluator read it
unchanged. The target particles are the distributional Bellman update at the greedy action of the
*target* network on the summed means:

    t_j = r + gamma (1 - done) z^-_j(s', a*),   a* = argmax_a sum_k mean_j z^-_{j,k}(s', a),

and the loss is a distance between the particle sets ``{z_i(s, a)}`` and ``{t_j}`` that a variant
supplies (:meth:`ParticleDQN.particle_distance`; MD3QN's MMD^2, QR-DQN's quantile loss, ...). A
variant overrides :meth:`ParticleDQN.particle_distance` and, where its particles have no joint
meaning across sources, sets ``coupling = "independent"`` (the model's joint law is then the product
of its marginals).

Source: Bellemare, Dabney & Munos 2017 (distributional Bellman operator, eq. 1 and Algorithm 1 with
greedy action on the mean); Nguyen et al. 2021 (MMDQN, particles and the target of Algorithm 1);
Zhang et al. 2021 (MD3QN, the joint return vector and the greedy action on the summed means).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np
import torch

from quadriga import param
from quadriga.validators import int_at_least, one_of
from quadriga_std.learners.dqn import DQN
from quadriga_std.learners.td_loss import TDLossTerms, TDTargetDQNLoss

__all__ = ["ParticleDQN", "ParticleQNetwork", "ParticleTDLoss", "greedy_particle_target"]


class ParticleQNetwork(torch.nn.Module):
    """An MLP giving ``N`` particles of the ``K``-source return vector per action; ``forward`` gives Q.

    Args:
        obs_dim: observation size.
        num_actions: ``A``.
        num_particles: ``N``.
        num_sources: ``K``.
        hidden_sizes: ReLU trunk widths (as ``dqn``'s MLP).
        coupling: ``"joint"`` (particle ``i`` is one draw of the return vector) or ``"independent"``
            (each source's particles are a marginal law; the joint law is their product).

    Shapes:
        :meth:`particles` ``Tensor[..., obs_dim] -> Tensor[..., A, N, K]``; ``forward``
        ``Tensor[..., obs_dim] -> Tensor[..., A]`` with ``Q(s, a) = sum_k mean_i z_{i,k}(s, a)``.

    Units:
        Return units (discounted sum of each source's rewards).
    """

    def __init__(
        self,
        obs_dim: int,
        num_actions: int,
        num_particles: int,
        num_sources: int,
        hidden_sizes: list[int],
        coupling: str = "joint",
    ) -> None:
        from torchrl.modules import MLP

        super().__init__()
        self.num_actions, self.num_particles, self.num_sources = (
            int(num_actions),
            int(num_particles),
            int(num_sources),
        )
        self.coupling = coupling
        self.trunk = MLP(
            in_features=obs_dim,
            out_features=self.num_actions * self.num_particles * self.num_sources,
            num_cells=list(hidden_sizes),
            activation_class=torch.nn.ReLU,
        )

    def particles(self, obs: torch.Tensor) -> torch.Tensor:
        """Particles ``Tensor[..., A, N, K]``."""
        return self.trunk(obs).unflatten(-1, (self.num_actions, self.num_particles, self.num_sources))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Q-values ``Tensor[..., A]``: the sum over sources of the particle means."""
        return self.particles(obs).mean(-2).sum(-1)

    def return_particles(self, obs: Any, rng: np.random.Generator) -> np.ndarray:
        """Draws of the return vector at ``obs`` under the greedy action: ``ndarray[N, K]``.

        ``"joint"``: the particles as they are. ``"independent"``: each source's column is permuted
        independently with ``rng`` (a draw from the product of the marginal particle laws), since
        the pairing of particle indices across sources carries no meaning there.
        """
        with torch.no_grad():
            z = self.particles(torch.as_tensor(np.asarray(obs), dtype=torch.float32))
        z = z[int(z.mean(-2).sum(-1).argmax())].double().numpy()
        if self.coupling == "independent":
            z = np.stack([rng.permutation(z[:, k]) for k in range(z.shape[1])], axis=1)
        return z


def greedy_particle_target(
    next_z_target: torch.Tensor, reward: torch.Tensor, done: torch.Tensor, gamma: float
) -> torch.Tensor:
    """Target particles ``r + gamma (1 - done) z^-(s', a*)``, ``a*`` greedy on the summed means.

    Args:
        next_z_target: ``Tensor[B, A, N, K]`` target-network particles at ``s'``.
        reward: ``Tensor[B, K]`` per-source rewards.
        done: ``Tensor[B]`` termination flags (float).
        gamma: discount.

    Returns:
        ``Tensor[B, N, K]``.

    Source: Zhang et al. 2021 (MD3QN), Algorithm 1 (``target_estimator='mean'`` in the official code).
    """
    a_star = next_z_target.mean(-2).sum(-1).argmax(-1)
    z = next_z_target[torch.arange(a_star.numel()), a_star]
    return reward.unsqueeze(-2) + gamma * (1.0 - done)[:, None, None] * z


class ParticleTDLoss(TDTargetDQNLoss):
    """``mean_b distance({z_i(s_b, a_b)}, {t_j})`` with target particles from the learner's ``td_target``.

    Args:
        value_network: the ``QValueActor`` around ``q_network``.
        q_network: a :class:`ParticleQNetwork`.
        distance: ``fn(z Tensor[B, N, K], t Tensor[B, N', K]) -> Tensor[B]`` (with gradient in ``z``).
        td_target: ``fn(next_z_online, next_z_target, reward [B, K], done [B], gamma)`` returning
            ``(t [B, N', K], info)``
            with ``next_z_*`` ``Tensor[B, A, N, K]`` or ``None`` (not requested).
        gamma, needs_online, needs_target: as in ``TDTargetDQNLoss``.

    Source: Nguyen et al. 2021 (MMDQN), Algorithm 1 (the update on particle sets).
    """

    def __init__(self, value_network: Any, *, q_network: Any, distance: Any, **kw: Any) -> None:
        super().__init__(value_network, q_network=q_network, **kw)
        self._distance = distance

    def _particles(self, params: Any, obs: torch.Tensor) -> torch.Tensor:
        with params.to_module(self.value_network, preserve_module_state=False):
            return self._q_network.particles(obs)

    def particle_targets(
        self, next_obs: torch.Tensor, reward: torch.Tensor, done: torch.Tensor
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        """Target particles ``Tensor[B, N', K]`` and the rule's info, without gradient.

        Raises:
            RuntimeError: the rule returned something other than ``Tensor[B, N', K]``.
        """
        with torch.no_grad():
            z_on = self._particles(self.value_network_params, next_obs) if self._needs_online else None
            z_tg = self._particles(self.target_value_network_params, next_obs) if self._needs_target else None
            target, info = self._td_target(z_on, z_tg, reward, done, self._gamma)
        if target.ndim != 3 or target.shape[0] != next_obs.shape[0] or target.shape[-1] != reward.shape[-1]:
            raise RuntimeError(f"td_target returned shape {tuple(target.shape)}, expected [B, N, K]")
        return target, info

    def loss_terms(
        self,
        obs: torch.Tensor,
        action: torch.Tensor,
        next_obs: torch.Tensor,
        reward: torch.Tensor,
        done: torch.Tensor,
    ) -> TDLossTerms:
        """The particle loss on plain tensors (``reward`` ``Tensor[B, K]``; else as ``TDTargetDQNLoss``).

        Returns:
            ``TDLossTerms``: ``loss`` (scalar), ``q_taken`` and ``td_target`` (``Tensor[B]``: summed
            means of the taken action's particles and of the target particles, return units) and the
            rule's ``info`` plus ``"particle_spread"`` (0-d, mean per-source std of the taken particles).
        """
        action = action.long().reshape(-1)
        z = self._particles(self.value_network_params, obs)[torch.arange(action.numel()), action]  # [B, N, K]
        target, info = self.particle_targets(next_obs, reward, done)
        loss = self._distance(z, target).mean()
        zd = z.detach()
        info = {**info, "particle_spread": zd.std(-2).mean()}
        return TDLossTerms(loss, zd.mean(-2).sum(-1), target.mean(-2).sum(-1), info)


@attrs.define(kw_only=True)
class ParticleDQN(DQN):
    """Base of particle DQNs on ``K`` reward sources: ``dqn`` with a :class:`ParticleQNetwork`.

    ``fit(task)`` needs a vector-reward environment (``reward_space`` ``Box(K)``, ``info["vector_reward"]``);
    otherwise it is ``dqn``'s (artifact, schedule, replay, target copies). ``Fitted.model`` is the
    :class:`ParticleQNetwork` (``forward`` gives Q; ``return_particles`` the learned return law).
    A subclass supplies :meth:`particle_distance`.

    Raises:
        ConfigError: as :class:`~quadriga_std.learners.dqn.DQN`; a scalar-reward environment (at ``fit``).
    """

    reward_sources: ClassVar[bool] = True
    coupling: ClassVar[str] = "joint"

    num_particles: int = param(50, doc="particles N per action", validator=int_at_least(2))
    num_sources: int = param(
        2, doc="reward sources K (checked against the environment)", validator=int_at_least(1)
    )
    loss_function: str = param(
        "particles", doc="the loss is the class's particle distance", validator=one_of(("particles",))
    )

    def td_target(
        self, next_q_online: Any, next_q_target: Any, reward: Any, done: Any, gamma: float
    ) -> tuple[Any, dict[str, Any]]:
        """``(t, {})``: :func:`greedy_particle_target` on the target particles ``Tensor[B, A, N, K]``."""
        return greedy_particle_target(next_q_target, reward, done, gamma), {}

    def particle_distance(self, z: Any, t: Any) -> Any:  # pragma: no cover - abstract
        """Per-transition distance ``Tensor[B]`` of particle sets ``z [B, N, K]`` and ``t [B, N', K]``."""
        raise NotImplementedError

    def make_q_network(self, obs_dim: int, num_actions: int) -> ParticleQNetwork:
        """A :class:`ParticleQNetwork` with ``hidden_sizes``, ``num_particles`` and ``num_sources``."""
        return ParticleQNetwork(
            obs_dim, num_actions, self.num_particles, self.num_sources, list(self.hidden_sizes), self.coupling
        )

    def fit(self, task: Any, *, generator: Any, progress: Any) -> Any:
        """``dqn``'s ``fit`` after checking that the environment has ``num_sources`` reward sources.

        Raises:
            ConfigError: a scalar-reward environment, or one with another number of sources.
        """
        from quadriga.errors import ConfigError
        from quadriga_std.learners.dqn import _reward_dim

        k = _reward_dim(task, type(self).__name__)
        if k != self.num_sources:
            raise ConfigError(
                f"num_sources = {self.num_sources}, but the environment has {k} reward sources; "
                f"set num_sources = {k}.",
                key="num_sources",
            )
        return super().fit(task, generator=generator, progress=progress)

    def make_loss_module(self, actor: Any, qnet: Any) -> ParticleTDLoss:
        """A :class:`ParticleTDLoss` with :meth:`particle_distance` and :meth:`td_target`."""
        return ParticleTDLoss(
            actor,
            q_network=qnet,
            distance=self.particle_distance,
            td_target=self.td_target,
            gamma=self.gamma,
            needs_online=self.needs_next_q_online,
            needs_target=self.needs_next_q_target,
        )
