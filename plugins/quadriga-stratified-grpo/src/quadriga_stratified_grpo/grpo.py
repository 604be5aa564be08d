"""GRPO and Stratified GRPO learners for episodic environments with a stratum key in ``info``.

Both learners share everything but the advantage: G rollouts per prompt (question), an
outcome advantage per rollout broadcast to each of its decisions, the clipped PPO surrogate
(torchrl's :class:`~torchrl.objectives.ClipPPOLoss` with no critic, one row per decision),
GRPO's per-sequence averaging ``1/G sum_i 1/|tau_i| sum_t``, and an optional k3 KL penalty to
the initial (reference) policy. ``grpo`` uses the global group-normalised advantage;
``stratified-grpo`` blends it with Stratified Advantage Normalization.

Sources: Shao et al. 2024, "DeepSeekMath", eq. 3 (GRPO objective) and eq. 4 (k3 KL estimator);
Zhu et al. 2025, "Stratified GRPO", arXiv 2510.06214 (SAN and its blend with the global estimator).
"""

from __future__ import annotations

import copy
import itertools
import time
from typing import Any, ClassVar

import attrs
import torch
from quadriga_std.sequences.policy_gradient import check_groups, group_normalised_advantages

from quadriga import ConfigError, Fitted, Learner, param
from quadriga.errors import NonFiniteError
from quadriga.interfaces import Environment
from quadriga.validators import (
    in_range,
    int_at_least,
    non_negative,
    non_negative_int,
    positive,
    positive_int,
    positive_int_list,
    probability,
)
from quadriga_stratified_grpo.advantages import blended_advantages

__all__ = ["GRPO", "StratifiedGRPO", "make_policy"]


def make_policy(
    obs_dim: int, num_actions: int, hidden_sizes: list[int], generator: torch.Generator
) -> torch.nn.Module:
    """A tanh MLP ``float32[n, obs_dim] -> logits float32[n, num_actions]``, initialised from ``generator``.

    Hidden layers get orthogonal weights with gain sqrt(2), the output layer gain 0.01 (a
    near-uniform initial policy); biases are 0.
    """
    sizes = [obs_dim, *hidden_sizes, num_actions]
    layers: list[torch.nn.Module] = []
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        linear = torch.nn.Linear(a, b)
        last = i == len(sizes) - 2
        torch.nn.init.orthogonal_(linear.weight, gain=0.01 if last else 2**0.5, generator=generator)
        torch.nn.init.zeros_(linear.bias)
        layers.append(linear)
        if not last:
            layers.append(torch.nn.Tanh())
    return torch.nn.Sequential(*layers)


def _clip_in_unit(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    in_range(0.0, 1.0, low_open=True, high_open=True)(instance, attribute, value)


@attrs.define(kw_only=True)
class GRPO(Learner):
    """Group Relative Policy Optimization with the clipped PPO surrogate.

    ``fit(task, generator, progress)``: ``task`` is an Environment whose episodes can be reset on a
    given prompt (``reset(options={"question": q})``) and whose final ``info`` carries
    ``tool_calls``; each update draws ``num_prompts`` questions, runs ``group_size`` rollouts of each,
    computes one advantage per rollout and takes ``num_epochs`` Adam steps on the surrogate.

    Returns ``Fitted(model=policy MLP, history={"step", "mean_return", "tool_calls", "accuracy",
    "between_share"}, info={"label", "updates", "episodes", "seconds", "greedy_return",
    "greedy_accuracy", "greedy_tool_calls"})``. ``between_share`` is, per update, the mean over the
    batch's prompt groups of the share of the return variance that lies between strata (tool-call
    counts; :func:`~quadriga_stratified_grpo.advantages.advantage_decomposition`), the size of the
    cross-stratum offset in GRPO's advantage. The ``greedy_*`` numbers come from a separate
    evaluation of the final policy's most probable actions on ``greedy_episodes`` episodes per
    question with fixed seeds (``eval_seed``: the same episodes for every learner and replicate).

    Shapes:
        per update, P = ``num_prompts`` groups of G = ``group_size`` episodes: returns, strata and
        advantages ``float32[P, G]``; N decisions in all, observations ``float32[N, obs_dim]``, actions
        and log-probabilities ``[N]``; the policy maps ``float32[n, obs_dim]`` to logits
        ``float32[n, num_actions]``. Each ``history`` list has ``num_updates`` scalar entries.

    Units:
        returns in reward units (``correct - tool_cost * calls``); advantages are divided by a reward
        standard deviation, so dimensionless (``eps`` is in reward units); ``tool_calls`` in calls per
        episode; ``accuracy`` a fraction in [0, 1]; log-probabilities and
        the KL penalty in nats; ``step`` counts updates; ``info["seconds"]`` wall-clock seconds.

    Raises:
        ConfigError: bad hyperparameters when built (naming the key); at fit time, a task without
            ``make()`` (an Environment is required; a pipeline that wires a Dataset or Target to
            ``task`` is refused when it is checked, through ``input_types``), an environment without a
            Discrete action space or a ``num_questions`` attribute, or an episode whose final
            ``info`` lacks the stratum key ``tool_calls`` (all naming the stage).
        RuntimeError: episodes that do not end within 10 000 steps.

    Source: Shao et al. 2024, "DeepSeekMath", eq. 3 (GRPO objective, group-normalised outcome
    advantage) and eq. 4 (k3 KL estimator); PPO clipping from Schulman et al. 2017, eq. 7.
    """

    label_name: ClassVar[str] = "grpo"
    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Environment,)}

    num_updates: int = param(200, doc="policy updates (training steps)", validator=positive_int)
    num_prompts: int = param(8, doc="prompts (questions) per update", validator=positive_int)
    group_size: int = param(
        8,
        doc="rollouts per prompt G",
        validator=int_at_least(
            2, "Group-relative advantages compare rollouts of one prompt; use group_size >= 2."
        ),
    )
    learning_rate: float = param(3e-3, doc="Adam learning rate", validator=positive)
    num_epochs: int = param(2, doc="optimisation passes over each batch (PPO epochs)", validator=positive_int)
    clip_epsilon: float = param(0.2, doc="PPO ratio clipping epsilon", validator=_clip_in_unit)
    kl_coeff: float = param(
        0.0, doc="weight beta of the k3 KL penalty to the initial policy (0 = off)", validator=non_negative
    )
    entropy_coeff: float = param(0.0, doc="weight of the entropy bonus (0 = off)", validator=non_negative)
    max_grad_norm: float = param(1.0, doc="gradient-norm clipping threshold", validator=positive)
    hidden_sizes: list = param(
        factory=lambda: [64, 64], doc="widths of the policy MLP's hidden layers", validator=positive_int_list
    )
    eps: float = param(
        1e-6,
        doc="added to standard deviations when normalising advantages (reward units)",
        validator=non_negative,
    )
    greedy_episodes: int = param(
        32,
        doc="episodes per question of the final greedy evaluation (0 = none)",
        validator=non_negative_int,
    )
    eval_seed: int = param(
        987_654,
        doc="root seed of the greedy-evaluation episodes (shared by all learners)",
        validator=non_negative_int,
    )

    @property
    def label(self) -> str:
        """A name that tells this configuration apart in plots (e.g. ``"stratified-grpo(alpha=0.5)"``)."""
        return self.label_name

    def stratum_table(self, batch: Any) -> torch.Tensor | None:
        """The stratum index table ``int64[P, G]`` the advantage uses (``None`` for GRPO)."""
        return None

    def advantages(
        self, rewards: torch.Tensor, strata: torch.Tensor | None, *, stage: str = ""
    ) -> torch.Tensor:
        """GRPO's group-normalised advantages ``float32[P, G]`` from returns ``float32[P, G]``.

        Raises:
            ConfigError: for a group size below 2 (naming ``stage``).
        """
        check_groups(rewards, stage=stage)
        return group_normalised_advantages(rewards, eps=self.eps)

    def _stratum_key(self) -> str:
        return "tool_calls"

    def fit(self, task: Any, *, generator: torch.Generator, progress: Any) -> Fitted:
        """Train the policy (see the class docstring for inputs, outputs and errors).

        The networks are tiny, so torch runs single-threaded during the fit (intra-op threads
        only add synchronisation overhead here); the previous thread count is restored afterwards.
        """
        from quadriga.threads import single_thread

        with single_thread():
            return self._fit(task, generator=generator, progress=progress)

    def _fit(self, task: Any, *, generator: torch.Generator, progress: Any) -> Fitted:
        from tensordict import TensorDict
        from tensordict.nn import TensorDictModule
        from torchrl.modules import ProbabilisticActor
        from torchrl.objectives import ClipPPOLoss

        from quadriga.seeding import numpy_rng
        from quadriga_stratified_grpo.rollout import collect_groups

        stage = getattr(progress, "stage", "") or ""
        if not callable(getattr(task, "make", None)):
            raise ConfigError(
                f"stage '{stage}': task must be an Environment with make(), got {type(task).__name__}",
                key="task",
            )
        num = self.num_prompts * self.group_size
        envs = [task.make() for _ in range(num)]
        space_obs, space_act = envs[0].observation_space, envs[0].action_space
        num_questions = int(
            getattr(task, "num_questions", 0) or getattr(envs[0].unwrapped, "num_questions", 0)
        )
        if num_questions < 1 or not hasattr(space_act, "n"):
            raise ConfigError(
                f"stage '{stage}': the environment needs a Discrete action space and a num_questions "
                "attribute (prompts); use the 'search-agent' task",
                key="task",
            )
        policy = make_policy(int(space_obs.shape[0]), int(space_act.n), list(self.hidden_sizes), generator)
        reference = copy.deepcopy(policy).requires_grad_(False) if self.kl_coeff > 0 else None
        actor = ProbabilisticActor(
            TensorDictModule(policy, in_keys=["observation"], out_keys=["logits"]),
            in_keys=["logits"],
            distribution_class=torch.distributions.Categorical,
            return_log_prob=True,
        )
        loss_module = ClipPPOLoss(
            actor,
            None,
            clip_epsilon=self.clip_epsilon,
            entropy_bonus=self.entropy_coeff > 0,
            entropy_coeff=self.entropy_coeff if self.entropy_coeff > 0 else None,
            reduction="none",
            functional=False,
        )
        logp_key = loss_module.tensor_keys.sample_log_prob
        optimizer = torch.optim.Adam(policy.parameters(), lr=self.learning_rate)
        rng = numpy_rng(generator)
        history: dict[str, list] = {
            "step": [],
            "mean_return": [],
            "tool_calls": [],
            "accuracy": [],
            "between_share": [],
        }
        progress.start(self.num_updates, f"{self.label} on {type(task).__name__}")
        start = time.perf_counter()
        for update in range(self.num_updates):
            questions = torch.randint(num_questions, (self.num_prompts,), generator=generator).tolist()
            seeds = rng.integers(0, 2**31 - 1, size=num)
            batch = collect_groups(
                envs,
                policy,
                questions,
                self.group_size,
                seeds=seeds,
                generator=generator,
                stratum_key=self._stratum_key(),
                stage=stage,
            )
            if not torch.isfinite(batch.returns).all():  # a NaN would silently zero its group's advantages
                raise NonFiniteError(stage or self.label, "the rollout rewards", step=update + 1)
            adv = self.advantages(batch.returns, self.stratum_table(batch), stage=stage).reshape(-1)
            weight = 1.0 / (num * batch.length.to(torch.float32))[batch.rollout]  # 1/G sum_i 1/|tau_i| sum_t
            data = TensorDict(
                {
                    "observation": batch.observation,
                    "action": batch.action,
                    logp_key: batch.log_prob,
                    "advantage": adv[batch.rollout].unsqueeze(-1),
                },
                batch_size=[batch.action.shape[0]],
            )
            for _ in range(self.num_epochs):
                out = loss_module(data)
                loss = (out["loss_objective"].reshape(-1) * weight).sum()
                if self.entropy_coeff > 0:
                    loss = loss + (out["loss_entropy"].reshape(-1) * weight).sum()
                if reference is not None:
                    loss = (
                        loss
                        + self.kl_coeff
                        * (_k3_kl(policy, reference, batch.observation, batch.action) * weight).sum()
                    )
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), self.max_grad_norm)
                optimizer.step()
            mean_return = float(batch.returns.mean())
            calls, accuracy = float(batch.tool_calls.mean()), float(batch.correct.mean())
            for key, value in (
                ("step", update + 1),
                ("mean_return", mean_return),
                ("tool_calls", calls),
                ("accuracy", accuracy),
                ("between_share", _between_share(batch)),
            ):
                history[key].append(value)
            progress.log(update + 1, mean_return=mean_return, tool_calls=calls, accuracy=accuracy)
            progress.advance()
        for env in envs:
            env.close()
        info = {
            "label": self.label,
            "updates": self.num_updates,
            "episodes": self.num_updates * num,
            "seconds": round(time.perf_counter() - start, 3),
        }
        if self.greedy_episodes > 0:
            info.update(self._greedy(task, policy, num_questions, stage))
        return Fitted(model=policy, history=history, info=info)

    def _greedy(self, task: Any, policy: torch.nn.Module, num_questions: int, stage: str) -> dict[str, float]:
        """Mean return, accuracy and tool calls of the greedy policy on the fixed evaluation episodes."""
        import numpy as np

        from quadriga_stratified_grpo.rollout import collect_groups

        per = self.greedy_episodes
        envs = [task.make() for _ in range(num_questions * per)]
        seeds = self.eval_seed * 10**4 + np.arange(len(envs))
        batch = collect_groups(
            envs,
            policy,
            list(range(num_questions)),
            per,
            seeds=seeds,
            generator=torch.Generator().manual_seed(0),
            stratum_key=self._stratum_key(),
            stage=stage,
            greedy=True,
        )
        for env in envs:
            env.close()
        return {
            "greedy_return": float(batch.returns.double().mean()),
            "greedy_accuracy": float(batch.correct.double().mean()),
            "greedy_tool_calls": float(batch.tool_calls.double().mean()),
        }


def _between_share(batch: Any) -> float:
    """Mean over prompt groups with spread of between-stratum / total return variance (0 if none)."""
    from quadriga_stratified_grpo.advantages import advantage_decomposition

    parts = advantage_decomposition(batch.returns.double(), batch.strata)
    total = parts["var_global"]
    spread = total > 1e-12
    if not bool(spread.any()):
        return 0.0
    return float((parts["between_stratum"][spread] / total[spread]).mean())


def _k3_kl(
    policy: torch.nn.Module, reference: torch.nn.Module, obs: torch.Tensor, action: torch.Tensor
) -> torch.Tensor:
    """Per-decision k3 estimate ``r - log r - 1`` with ``r = pi_ref(a|s) / pi(a|s)`` (nats), ``float32[N]``.

    Source: Shao et al. 2024 (DeepSeekMath), eq. 4; Schulman 2020, "Approximating KL divergence".
    """
    logp = torch.log_softmax(policy(obs), -1).gather(1, action.unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        logp_ref = torch.log_softmax(reference(obs), -1).gather(1, action.unsqueeze(1)).squeeze(1)
    log_ratio = logp_ref - logp
    return log_ratio.exp() - log_ratio - 1.0


@attrs.define(kw_only=True)
class StratifiedGRPO(GRPO):
    """Stratified GRPO: GRPO whose advantage is ``alpha * A_SAN + (1 - alpha) * A_global``.

    Rollouts of each prompt group are partitioned into strata by ``info[stratum_key]`` at the end
    of the episode (default: the number of tool calls); SAN normalises returns within each
    stratum, singleton or constant strata get 0. Everything else (surrogate, KL, optimiser) is
    GRPO's. Inputs, outputs and errors as :class:`GRPO`; additionally a ConfigError naming the
    stage when a trajectory's final info lacks ``stratum_key`` or its value is unhashable.

    Shapes:
        as :class:`GRPO`; the stratum table is ``int64[P, G]`` (equal keys within a prompt group get
        equal indices) and the blended advantage ``float32[P, G]``.

    Units:
        as :class:`GRPO`; ``alpha`` is a dimensionless weight in [0, 1]; SAN advantages are divided by
        the within-stratum reward standard deviation, so dimensionless.

    Default ``alpha = 0.5``: the paper blends SAN with the global estimator for finite-sample
    stability; its abstract gives no value for the weight, so the default here is the even blend
    (``alpha = 1`` is pure SAN, ``alpha = 0`` recovers GRPO).

    Source: Zhu et al. 2025, "Stratified GRPO", arXiv 2510.06214: Stratified Advantage
    Normalization, the cross-stratum bias of the global advantage (Proposition 1), SAN's variance
    reduction (Theorem 1) and the linear blend with the global estimator.
    """

    label_name: ClassVar[str] = "stratified-grpo"

    alpha: float = param(
        0.5,
        doc="blend weight of SAN against the global advantage (1 = pure SAN, 0 = GRPO)",
        validator=probability,
    )
    stratum_key: str = param("tool_calls", doc="final-info key whose value defines a rollout's stratum")

    @stratum_key.validator
    def _check_key(self, attribute: attrs.Attribute, value: Any) -> None:
        if not isinstance(value, str) or not value:
            raise ConfigError(
                f"stratum_key must be a non-empty string naming an info key, got {value!r}", key="stratum_key"
            )

    @property
    def label(self) -> str:
        """E.g. ``"stratified-grpo(alpha=0.5)"``."""
        return f"{self.label_name}(alpha={self.alpha:g})"

    def _stratum_key(self) -> str:
        return self.stratum_key

    def stratum_table(self, batch: Any) -> torch.Tensor:
        """The batch's stratum table ``int64[P, G]``."""
        return batch.strata

    def advantages(
        self, rewards: torch.Tensor, strata: torch.Tensor | None, *, stage: str = ""
    ) -> torch.Tensor:
        """Blended SAN/global advantages ``float32[P, G]``.

        Raises:
            ConfigError: for a group size below 2 or a missing stratum table (naming ``stage``).
        """
        check_groups(rewards, strata, stage=stage)
        if strata is None:
            raise ConfigError(
                f"stage '{stage}': stratified-grpo needs a stratum per rollout", key="stratum_key"
            )
        return blended_advantages(rewards, strata, self.alpha, eps=self.eps)
