"""FlowRL: flow-balanced reward-distribution matching, and its GRPO baseline, on an enumerable sequence space.

Both learners share everything but the loss: a full-context tabular policy ``pi_theta``
initialised at the base (reference) model ``a = pi_ref``, per update ``num_groups`` groups of
``group_size`` sequences drawn from ``pi_old`` (the policy before the update), the reward
``r = phi(y)`` (1 on the task's correct answers), GRPO's group-normalised advantage
``r_hat = (r - mean r) / (std r + eps)`` (quadriga-std's policy-gradient baselines,
:mod:`quadriga_std.sequences.policy_gradient`), Adam, and
``num_epochs`` passes over each batch. The update of :class:`FlowRL` (Zhu et al. 2025, sec. 3)::

    y_i ~ pi_old, r_hat_i = group-normalised reward                   # "R = exp(advantage)"
    delta_i = log Z_phi + (1/|y_i|) log pi_theta(y_i) - beta r_hat_i - (1/|y_i|) log pi_ref(y_i)
    w_i = clip(pi_theta(y_i) / pi_old(y_i), 1 - eps, 1 + eps), detached   # trajectory weight
    loss = mean_i w_i delta_i^2                                        # flow balance (trajectory balance)

``log Z_phi`` is a learned scalar (one prompt; the paper's linear head on the prompt's hidden
state) with its own learning rate. The paper writes the clipped weight; the official code
(``verl@FlowRL/verl/workers/actor/dp_actor.py`` line 575-577, commit decbc57) computes
``clip_importance_weight`` and then multiplies by the unclipped ``importance_weight``: the
plugin follows the paper (``clip_importance_weight = true``); ``false`` is the code's behaviour.

:class:`GRPOSequence` (``grpo-sequence``) is GRPO on the same space: the clipped PPO surrogate
per token with the sequence's advantage and GRPO's ``1/G sum_i 1/|y_i| sum_t`` averaging
(Shao et al. 2024, eq. 3; no KL term, as FlowRL's baseline runs), quadriga-std's
:func:`~quadriga_std.sequences.policy_gradient.grpo_surrogate_loss`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import torch
from quadriga_std.sequences.models import TabularAutoregressive, token_log_probs
from quadriga_std.sequences.policy_gradient import group_normalised_advantages, grpo_surrogate_loss
from quadriga_std.sequences.space import SequenceSpace

from quadriga import Fitted, Learner, param
from quadriga.errors import ConfigError
from quadriga.seeding import child_generator
from quadriga.validators import in_range, int_at_least, non_negative, positive, positive_int

__all__ = [
    "FlowRL",
    "GRPOSequence",
    "flow_balance_residual",
    "flowrl_loss",
    "tilted_target",
]


def flow_balance_residual(
    log_z: torch.Tensor,
    log_pi: torch.Tensor,
    log_ref: torch.Tensor,
    reward: torch.Tensor,
    *,
    beta: float,
    length: int | torch.Tensor,
) -> torch.Tensor:
    """``delta = log Z + log pi(y) / |y| - beta r - log pi_ref(y) / |y|`` per sequence (nats).

    Shapes: ``log_z`` scalar tensor, ``log_pi, log_ref, reward Tensor[n]`` (sequence
    log-probabilities, rewards), ``length`` an int or ``Tensor[n]``; returns ``Tensor[n]``.

    ``delta = 0`` for every ``y`` exactly when ``log pi(y) = log pi_ref(y) + |y| (beta r(y) - log Z)``:
    for a fixed length ``L`` that is ``pi ∝ pi_ref exp(L beta r)`` with
    ``log Z = (1/L) log sum_y pi_ref(y) exp(L beta r(y))`` (the length-normalised tilt).

    Source: Zhu et al. 2025, "FlowRL: Matching Reward Distributions for LLM Reasoning", arXiv
    2509.15207, sec. 3 (trajectory-balance residual with length normalisation and the reference
    model); official code ``dp_actor.py`` line 570 (``delta = log_z + avg_logpf - 15 * seq_log_reward
    - avg_logp_ref``).
    """
    return log_z + log_pi / length - beta * reward - log_ref / length


def flowrl_loss(delta: torch.Tensor, log_ratio: torch.Tensor, *, clip_epsilon: float | None) -> torch.Tensor:
    """``mean_i w_i delta_i^2`` with ``w_i = exp(log_ratio_i)`` detached, clipped to ``[1 - eps, 1 + eps]``.

    Shapes: ``delta, log_ratio Tensor[n]`` (``log_ratio = log pi_theta(y) - log pi_old(y)``, the
    trajectory's summed token log-ratios); returns a scalar. ``clip_epsilon=None``: the unclipped
    weight (the official code's line 577).

    Source: Zhu et al. 2025, arXiv 2509.15207, sec. 3 (the FlowRL objective: importance weight
    ``clip(pi_theta / pi_old, 1 - eps, 1 + eps)_detach`` times the squared residual).
    """
    w = torch.exp(log_ratio.detach())
    if clip_epsilon is not None:
        w = w.clamp(1.0 - clip_epsilon, 1.0 + clip_epsilon)
    return (w * delta**2).mean()


def _task(task: Any) -> SequenceSpace:
    if not isinstance(task, SequenceSpace) or task.feature_kind != "answers":
        raise ConfigError(
            "this learner needs quadriga-std's 'sequence-space' with feature_kind = 'answers' "
            "(the reward is 1 on the correct answers).",
            key="task",
        )
    return task


def _unit_open(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    in_range(0.0, 1.0, low_open=True, high_open=True)(instance, attribute, value)


@attrs.define(kw_only=True)
class _GroupLearner(Learner):
    """Sampling, rewards, advantages and the loop shared by FlowRL and GRPO (the same budget)."""

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (SequenceSpace,)}
    check_params: ClassVar[dict[str, Any]] = {"num_updates": 3, "group_size": 4}
    check_inputs: ClassVar[dict[str, Any]] = {
        "task": {"space": {"use": "sequence-space", "vocab_size": 3, "length": 3, "feature_kind": "answers"}},
        "inputs": {"task": "space"},
    }

    num_updates: int = param(300, doc="policy updates", validator=positive_int)
    num_groups: int = param(1, doc="groups (prompts) per update", validator=positive_int)
    group_size: int = param(
        16,
        doc="sequences per group G",
        validator=int_at_least(2, "group normalisation needs group_size >= 2"),
    )
    learning_rate: float = param(0.05, doc="Adam learning rate of the policy logits", validator=positive)
    num_epochs: int = param(1, doc="passes over each batch (PPO epochs)", validator=positive_int)
    clip_epsilon: float = param(0.2, doc="ratio clipping epsilon", validator=_unit_open)
    eps: float = param(1e-6, doc="added to the group std of the rewards", validator=non_negative)

    def _loss(
        self,
        policy: Any,
        extra: dict[str, Any],
        x: torch.Tensor,
        old_tok: torch.Tensor,
        adv: torch.Tensor,
        log_ref: torch.Tensor,
    ) -> torch.Tensor:
        raise NotImplementedError

    def _extra_params(self) -> dict[str, Any]:
        """Further trained tensors of the loss (``{name: Parameter}``) with their learning rates."""
        return {}

    def _extra_lr(self) -> float:
        return self.learning_rate

    def fit(self, task: Any, *, generator: torch.Generator, progress: Any) -> Fitted:
        """Train ``pi_theta`` from ``pi_ref = a``; ``Fitted(model=policy, history, info)``."""
        space = _task(task)
        seqs = space.sequences()
        phi = space.feature(seqs).double()
        log_a = space.base_log_probs()
        policy = TabularAutoregressive.copy_of(space.base())
        extra = self._extra_params()
        groups = [{"params": list(policy.parameters()), "lr": self.learning_rate}]
        if extra:
            groups.append({"params": list(extra.values()), "lr": self._extra_lr()})
        opt = torch.optim.Adam(groups)
        draws = child_generator(generator, "draws")
        n = self.num_groups * self.group_size
        history: dict[str, list] = {"step": [], "loss": [], "mean_reward": []}
        progress.start(self.num_updates)
        for step in range(1, self.num_updates + 1):
            with torch.no_grad():
                probs = torch.softmax(policy.log_prob(seqs), 0)
            idx = torch.multinomial(probs, n, replacement=True, generator=draws)  # y ~ pi_old
            x = seqs[idx]
            reward = phi[idx].reshape(self.num_groups, self.group_size)
            adv = group_normalised_advantages(reward, eps=self.eps).reshape(-1)  # r_hat
            with torch.no_grad():
                old_tok = token_log_probs(policy, x)
            for _ in range(self.num_epochs):
                loss = self._loss(policy, extra, x, old_tok, adv, log_a[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
            for k, v in (
                ("step", step),
                ("loss", float(loss.detach())),
                ("mean_reward", float(reward.mean())),
            ):
                history[k].append(v)
            for name, value in extra.items():
                history.setdefault(name, []).append(float(value.detach()))
            progress.advance()
        info = {"num_sequences": self.num_updates * n, "updates": self.num_updates * self.num_epochs}
        info.update({name: float(value.detach()) for name, value in extra.items()})
        return Fitted(model=policy.requires_grad_(False), history=history, info=info)


@attrs.define(kw_only=True)
class FlowRL(_GroupLearner):
    """FlowRL: minimise the flow-balance loss, matching ``pi`` to the reward-tilted reference.

    Per update (module docstring): ``delta`` by :func:`flow_balance_residual` with the learned
    scalar ``log Z`` (:attr:`log_z_learning_rate`), the group-normalised reward ``r_hat`` and
    ``beta``; loss :func:`flowrl_loss` with the clipped importance weight (``clip_importance_weight``;
    the paper) or the unclipped one (the official code). With ``num_epochs = 1`` the weight is 1.
    At the fixed point (fixed length ``L``, a fixed reward) ``pi ∝ pi_ref exp(L beta r_hat)``; on the
    correct answers (one value of ``r_hat``) that is ``pi_ref`` restricted to them: FlowRL keeps the
    reference's relative mass on every mode, where reward maximisation need not.

    History per step: ``loss``, ``mean_reward`` (of the drawn batch), ``log_z``. ``info``:
    ``num_sequences`` (the budget), ``updates``, ``log_z``.

    Shapes:
        Batches ``LongTensor[num_groups * group_size, L]``; residuals and weights ``Tensor[n]``.

    Units:
        Log-probabilities, ``log Z`` and residuals in nats; ``beta`` in nats per unit of ``r_hat``.

    Raises:
        ConfigError: a task that is not a ``sequence-space`` with ``feature_kind = 'answers'``;
            bad hyperparameters (naming the key).

    Source: Zhu et al. 2025, "FlowRL: Matching Reward Distributions for LLM Reasoning", arXiv
    2509.15207, sec. 3 (flow-balanced objective: learned partition function, length
    normalisation, reference model, clipped trajectory importance weight; beta = 15); official
    code ``Xuekai-Zhu/FlowRL`` ``verl@FlowRL/verl/workers/actor/dp_actor.py`` lines 560-577.
    """

    beta: float = param(
        15.0, doc="inverse temperature beta on the group-normalised reward", validator=positive
    )
    log_z_learning_rate: float = param(
        0.5, doc="Adam learning rate of the scalar log Z (its own, larger one)", validator=positive
    )
    clip_importance_weight: bool = param(
        True, doc="clip w to [1 - clip_epsilon, 1 + clip_epsilon] (the paper); false: the code's unclipped w"
    )

    def _extra_params(self) -> dict[str, Any]:
        return {"log_z": torch.nn.Parameter(torch.zeros((), dtype=torch.float64))}

    def _extra_lr(self) -> float:
        return self.log_z_learning_rate

    def _loss(
        self,
        policy: Any,
        extra: dict[str, Any],
        x: torch.Tensor,
        old_tok: torch.Tensor,
        adv: torch.Tensor,
        log_ref: torch.Tensor,
    ) -> torch.Tensor:
        log_pi = token_log_probs(policy, x).sum(1)
        delta = flow_balance_residual(extra["log_z"], log_pi, log_ref, adv, beta=self.beta, length=x.shape[1])
        eps = self.clip_epsilon if self.clip_importance_weight else None
        return flowrl_loss(delta, log_pi - old_tok.sum(1), clip_epsilon=eps)


@attrs.define(kw_only=True)
class GRPOSequence(_GroupLearner):
    """GRPO on a sequence space: the clipped PPO surrogate with the group-normalised advantage.

    Loss per epoch: ``-1/n sum_i 1/|y_i| sum_t min(rho_it A_i, clip(rho_it, 1 - eps, 1 + eps) A_i)``,
    ``rho_it = pi_theta(y_it | y_i<t) / pi_old(y_it | y_i<t)``, ``A_i = r_hat_i`` (GRPO's
    :func:`~quadriga_std.sequences.policy_gradient.group_normalised_advantages`; the loss is
    :func:`~quadriga_std.sequences.policy_gradient.grpo_surrogate_loss`). No KL penalty (FlowRL's GRPO
    baseline has none); the same sampler, policy, optimiser and budget as :class:`FlowRL`.

    History per step: ``loss``, ``mean_reward``. ``info``: ``num_sequences``, ``updates``.

    Shapes:
        Batches ``LongTensor[num_groups * group_size, L]``; ratios ``Tensor[n, L]``.

    Units:
        Advantages dimensionless (rewards over their group std); log-probabilities in nats.

    Raises:
        ConfigError: a task that is not a ``sequence-space`` with ``feature_kind = 'answers'``;
            bad hyperparameters (naming the key).

    Source: Shao et al. 2024, "DeepSeekMath", arXiv 2402.03300, eq. 3 (GRPO objective) with the
    outcome advantage of sec. 4.1.2; PPO clipping from Schulman et al. 2017, eq. 7.
    """

    def _loss(
        self,
        policy: Any,
        extra: dict[str, Any],
        x: torch.Tensor,
        old_tok: torch.Tensor,
        adv: torch.Tensor,
        log_ref: torch.Tensor,
    ) -> torch.Tensor:
        return grpo_surrogate_loss(token_log_probs(policy, x), old_tok, adv, clip_epsilon=self.clip_epsilon)


def tilted_target(log_ref: torch.Tensor, reward: torch.Tensor, scale: float) -> torch.Tensor:
    """Normalised ``log pi*`` of ``pi* ∝ pi_ref exp(scale r)``: ``Tensor[N], Tensor[N] -> Tensor[N]``.

    With ``scale = L beta`` it is the zero of :func:`flow_balance_residual` on a fixed-length space.

    Source: Zhu et al. 2025 (FlowRL), arXiv 2509.15207, sec. 3 (the reward-tilted reference the
    flow-balance objective matches; the length factor ``L`` comes from the ``1/|y|`` normalisation).
    """
    log_p = log_ref + scale * reward.to(log_ref.dtype)
    return log_p - torch.logsumexp(log_p, 0)
