"""DQN trained by classification: a categorical Q head over fixed value bins and a cross-entropy loss.

Two learners, ``dqn-hlgauss`` and ``dqn-twohot``, subclass quadriga-std's ``dqn`` and override only
its two construction hooks: :meth:`~quadriga_std.learners.dqn.DQN.make_q_network` (the last layer
emits ``num_actions x num_bins`` logits; the module's forward returns Q = the mean of each action's
categorical, which acting, bootstrapping and the evaluators read) and
:meth:`~quadriga_std.learners.dqn.DQN.make_loss_module` (the scalar TD target of ``dqn``, clipped
into the support and projected to a histogram, against the taken action's logits by cross-entropy).
Network trunk, replay buffer, exploration, target-network copies, optimiser and budget are ``dqn``'s,
so a comparison with ``dqn`` differs only in the value head and the loss.

Source: Farebrother et al. 2024, "Stop Regressing: Training Value Functions via Classification for
Scalable Deep RL" (ICML, arXiv 2403.03950), the cross-entropy value loss and Appendix A.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import torch
from quadriga_std.learners.dqn import DQN
from quadriga_std.learners.td_loss import TDLossTerms, TDTargetDQNLoss, check_target_shape

from quadriga import param
from quadriga.errors import ConfigError
from quadriga.validators import finite, int_at_least, positive
from quadriga_value_classification.targets import bin_centres, bin_edges, clip_to, hl_gauss, two_hot

__all__ = ["CategoricalQNetwork", "CrossEntropyTDLoss", "DQNHLGauss", "DQNTwoHot"]


class CategoricalQNetwork(torch.nn.Module):
    """An MLP whose last layer gives, per action, logits over fixed value bins; forward gives Q.

    Args:
        obs_dim: observation size.
        num_actions: number of discrete actions ``A``.
        hidden_sizes: hidden widths of the ReLU trunk (as ``dqn``'s MLP).
        edges: ``Tensor[m + 1]`` bin edges (:func:`~quadriga_value_classification.targets.bin_edges`).

    Shapes:
        :meth:`logits`: ``Tensor[..., obs_dim] -> Tensor[..., A, m]``; ``forward``:
        ``Tensor[..., obs_dim] -> Tensor[..., A]`` with ``Q(s, a) = sum_k softmax(z(s, a))_k c_k``.

    Units:
        Q in return units (the bin centres' units).

    Source: Farebrother et al. 2024, the cross-entropy value loss (the categorical value head; Q = its mean).
    """

    def __init__(self, obs_dim: int, num_actions: int, hidden_sizes: list[int], edges: torch.Tensor) -> None:
        from torchrl.modules import MLP

        super().__init__()
        self.num_actions, self.num_bins = int(num_actions), int(edges.numel() - 1)
        self.trunk = MLP(
            in_features=obs_dim,
            out_features=self.num_actions * self.num_bins,
            num_cells=list(hidden_sizes),
            activation_class=torch.nn.ReLU,
        )
        self.register_buffer("centres", bin_centres(edges.float()))

    def logits(self, obs: torch.Tensor) -> torch.Tensor:
        """Per-action bin logits ``Tensor[..., A, m]``."""
        return self.trunk(obs).unflatten(-1, (self.num_actions, self.num_bins))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Q-values ``Tensor[..., A]``: the mean of each action's categorical."""
        return (self.logits(obs).softmax(-1) * self.centres).sum(-1)


class CrossEntropyTDLoss(TDTargetDQNLoss):
    """Cross-entropy between the taken action's categorical and the projected scalar TD target.

    ``loss = mean_b [ -sum_k p_k(clip(y_b)) log softmax(z(s_b, a_b))_k ]`` with ``y`` from the learner's
    ``td_target`` (``dqn``: ``r + gamma (1 - done) max_a' Q_target(s', a')``, Q the categorical means)
    and ``p`` from ``projection`` (HL-Gauss or two-hot), without gradient through the target.

    Args:
        value_network: the ``QValueActor`` around ``q_network``.
        q_network: a :class:`CategoricalQNetwork`.
        projection: ``fn(y: Tensor[B]) -> Tensor[B, m]`` target histograms.
        low, high: targets are clipped into ``[low, high]`` before projecting (return units).
        td_target, gamma, needs_online, needs_target: as in ``TDTargetDQNLoss``.

    Counters of the run (summed over every call, int64 tensors): ``targets_seen``, ``targets_clipped``.

    Source: Farebrother et al. 2024, the cross-entropy value loss (Appendix A ``HLGaussLoss``).
    """

    def __init__(
        self, value_network: Any, *, q_network: Any, projection: Any, low: float, high: float, **kw: Any
    ) -> None:
        super().__init__(value_network, q_network=q_network, **kw)
        self._projection, self._low, self._high = projection, float(low), float(high)
        self.targets_seen = torch.zeros((), dtype=torch.int64)
        self.targets_clipped = torch.zeros((), dtype=torch.int64)

    def loss_terms(
        self,
        obs: torch.Tensor,
        action: torch.Tensor,
        next_obs: torch.Tensor,
        reward: torch.Tensor,
        done: torch.Tensor,
    ) -> TDLossTerms:
        """The cross-entropy loss on plain tensors (arguments as ``TDTargetDQNLoss.loss_terms``).

        Returns:
            ``TDLossTerms``: ``loss`` (scalar cross-entropy, nats), ``q_taken`` (``Tensor[B]``, the
            taken action's categorical mean, detached), ``td_target`` (``Tensor[B]``, y before
            clipping) and ``info``: the ``td_target`` rule's, plus ``"clipped_fraction"`` (0-d, the
            fraction of this batch's targets outside ``[low, high]``). Adds to the counters.
        """
        action = action.long().reshape(-1)
        with self.value_network_params.to_module(self.value_network, preserve_module_state=False):
            logits = self._q_network.logits(obs)
        taken = logits[torch.arange(action.numel()), action]  # [B, m]
        target, info = self.targets(next_obs, reward, done)
        clipped, n_out = clip_to(target, self._low, self._high)
        with torch.no_grad():
            probs = self._projection(clipped)
        loss = torch.nn.functional.cross_entropy(taken, probs)
        q_taken = (taken.detach().softmax(-1) * self._q_network.centres).sum(-1)
        check_target_shape(target, q_taken)
        self.targets_seen += target.numel()
        self.targets_clipped += n_out
        info = {**info, "clipped_fraction": n_out.float() / max(target.numel(), 1)}
        return TDLossTerms(loss, q_taken, target, info)


def _cross_entropy_only(instance: Any, attribute: Any, value: Any) -> None:
    if value != "cross_entropy":
        raise ConfigError(
            f"loss_function of a value-classification learner is 'cross_entropy', got {value!r}; "
            "use the dqn learner for regression losses ('l2', 'l1', 'smooth_l1').",
            key="loss_function",
        )


@attrs.define(kw_only=True)
class _ValueClassificationDQN(DQN):
    """The common part of :class:`DQNHLGauss` and :class:`DQNTwoHot` (support, counting)."""

    projection_name: ClassVar[str] = ""

    v_min: float = param(-10.0, doc="lower end of the value support (return units)", validator=finite)
    v_max: float = param(10.0, doc="upper end of the value support (return units)", validator=finite)
    num_bins: int = param(51, doc="number of value bins", validator=int_at_least(2))
    loss_function: str = param(
        "cross_entropy",
        doc="the value loss: cross-entropy against the target histogram",
        validator=_cross_entropy_only,
    )

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        if not self.v_min < self.v_max:
            raise ConfigError(
                f"v_min ({self.v_min}) must be below v_max ({self.v_max}); give a support that holds the "
                "returns, e.g. v_min = -10, v_max = 110 for CartPole-v1 at gamma 0.99.",
                key="v_max",
            )

    @property
    def edges(self) -> torch.Tensor:
        """``Tensor[num_bins + 1]`` bin edges on ``[v_min, v_max]``."""
        return bin_edges(self.v_min, self.v_max, self.num_bins)

    @property
    def bin_width(self) -> float:
        """``zeta = (v_max - v_min) / num_bins`` (return units)."""
        return (self.v_max - self.v_min) / self.num_bins

    def target_range(self) -> tuple[float, float]:
        """``(low, high)`` into which TD targets are clipped."""
        return self.v_min, self.v_max

    def project(self, y: torch.Tensor) -> torch.Tensor:  # pragma: no cover - overridden
        """Target histogram ``Tensor[B, m]`` of clipped targets ``Tensor[B]``."""
        raise NotImplementedError

    def make_q_network(self, obs_dim: int, num_actions: int) -> CategoricalQNetwork:
        """A :class:`CategoricalQNetwork` with ``dqn``'s trunk (``hidden_sizes``) and ``num_bins`` bins."""
        return CategoricalQNetwork(obs_dim, num_actions, list(self.hidden_sizes), self.edges)

    def make_loss_module(self, actor: Any, qnet: Any) -> CrossEntropyTDLoss:
        """A :class:`CrossEntropyTDLoss` with this learner's TD target, projection and clipping range."""
        low, high = self.target_range()
        return CrossEntropyTDLoss(
            actor,
            q_network=qnet,
            projection=self.project,
            low=low,
            high=high,
            td_target=self.td_target,
            gamma=self.gamma,
            needs_online=self.needs_next_q_online,
            needs_target=self.needs_next_q_target,
        )

    def fit_info(self, loss_module: Any) -> dict[str, Any]:
        """The clipping counts of the run, read from its :class:`CrossEntropyTDLoss`.

        Returns:
            ``targets_clipped`` (TD targets outside the clipping range, over all updates),
            ``targets_seen``, ``clipped_fraction`` (their ratio, NaN before any update; it replaces
            the mean of the per-update fractions), ``projection``, ``bin_width`` and ``support``
            ([v_min, v_max]), added to ``dqn``'s ``Fitted.info``.
        """
        seen, clipped = int(loss_module.targets_seen), int(loss_module.targets_clipped)
        return {
            "targets_seen": seen,
            "targets_clipped": clipped,
            "clipped_fraction": clipped / seen if seen else float("nan"),
            "projection": self.projection_name,
            "bin_width": self.bin_width,
            "support": [self.v_min, self.v_max],
        }


@attrs.define(kw_only=True)
class DQNHLGauss(_ValueClassificationDQN):
    """DQN with a categorical Q head trained by cross-entropy against HL-Gauss target histograms.

    The scalar target ``y = r + gamma (1 - done) max_a' Q_target(s', a')`` (Q the categorical means) is
    clipped into ``[v_min, v_max]`` and spread over the bins as the mass of ``N(y, sigma^2)``,
    ``sigma = sigma_ratio * zeta`` (``zeta`` the bin width), renormalised over the support
    (:func:`~quadriga_value_classification.targets.hl_gauss`); the loss is the cross-entropy with the
    taken action's logits. ``fit`` returns ``dqn``'s artifact plus the clipping counts
    (``info["clipped_fraction"]``).

    Defaults: 51 bins on [-10, 10] with sigma / zeta = 0.75 (the paper's sigma-to-bin-width ratio;
    the range fits rewards clipped to [-1, 1], so set ``v_min``/``v_max`` to the task's returns,
    e.g. [-10, 110] on CartPole-v1 at gamma 0.99); every other hyperparameter is ``dqn``'s.

    Raises:
        ConfigError: bad hyperparameters (``v_min >= v_max``, ``num_bins < 2``, ``sigma_ratio <= 0``,
            ``loss_function`` other than ``"cross_entropy"``, and ``dqn``'s own checks).

    Source: Farebrother et al. 2024 (arXiv 2403.03950), the HL-Gauss target and Appendix A;
    Imani & White 2018 (the histogram loss with Gaussian smoothing).
    """

    projection_name: ClassVar[str] = "hl-gauss"

    sigma_ratio: float = param(0.75, doc="HL-Gauss sigma as a multiple of the bin width", validator=positive)

    @property
    def sigma(self) -> float:
        """``sigma = sigma_ratio * zeta`` (return units)."""
        return self.sigma_ratio * self.bin_width

    def project(self, y: torch.Tensor) -> torch.Tensor:
        """HL-Gauss histograms ``Tensor[B, m]`` of ``y`` ``Tensor[B]`` (inside the support)."""
        return hl_gauss(y, self.edges.to(y.dtype), self.sigma)


@attrs.define(kw_only=True)
class DQNTwoHot(_ValueClassificationDQN):
    """DQN with a categorical Q head trained by cross-entropy against two-hot targets.

    The scalar target ``y`` is clipped into ``[c_0, c_{m-1}]`` (the outermost bin centres) and put on
    the two neighbouring centres with linear weights, so that the target's mean is ``y`` exactly
    (:func:`~quadriga_value_classification.targets.two_hot`). Artifact as :class:`DQNHLGauss`.

    Raises:
        ConfigError: as :class:`DQNHLGauss` (without ``sigma_ratio``).

    Source: Farebrother et al. 2024 (arXiv 2403.03950), the two-hot target (after Schrittwieser et al.
    2020, MuZero, Appendix F).
    """

    projection_name: ClassVar[str] = "two-hot"

    def target_range(self) -> tuple[float, float]:
        """``(c_0, c_{m-1})``: the range a two-hot target can represent."""
        half = self.bin_width / 2
        return self.v_min + half, self.v_max - half

    def project(self, y: torch.Tensor) -> torch.Tensor:
        """Two-hot targets ``Tensor[B, m]`` of ``y`` ``Tensor[B]``."""
        return two_hot(y, bin_centres(self.edges.to(y.dtype)))
