"""Policy-gradient baselines on outcome rewards: GRPO's group-normalised advantage, REINFORCE.

The one home of the advantages and losses that the group-based and sequence-level methods
compare against (quadriga-stratified-grpo's ``grpo``, quadriga-flowrl's ``grpo-sequence``,
quadriga-gdc's ``reinforce-sequence``). Each rollout (a sequence, or an episode) has one scalar
outcome reward; the functions turn rewards into advantages and advantages into a loss whose
gradient is the policy-gradient estimate.

- :func:`group_normalised_advantages`: GRPO's ``(r_i - mean(r)) / (std(r) + eps)`` within each
  group of G rollouts of one prompt (Shao et al. 2024, sec. 4.1.2), with :func:`check_groups` (the
  table's shape) and :func:`normalise_by_spread` (the division that leaves constant groups at 0;
  Stratified GRPO's per-stratum normalisation uses it too).
- :func:`grpo_surrogate_loss`: GRPO's clipped surrogate on fixed-length sequences with the
  ``1/G sum_i 1/|y_i| sum_t`` averaging (Shao et al. 2024, eq. 3, without the KL term).
- :func:`mean_baseline_advantages`: REINFORCE's ``r_i - b`` with the batch-mean baseline, or the
  leave-one-out mean of the other rewards (Williams 1992; Kool et al. 2019).
- :func:`reinforce_loss`: the score-function surrogate ``-mean_i A_i log pi(y_i)``.

Rewards, means and standard deviations are in reward units; normalised advantages are
dimensionless; log-probabilities in nats.
"""

from __future__ import annotations

import torch

from quadriga.errors import ConfigError

__all__ = [
    "check_groups",
    "group_normalised_advantages",
    "grpo_surrogate_loss",
    "mean_baseline_advantages",
    "normalise_by_spread",
    "reinforce_loss",
]


def check_groups(rewards: torch.Tensor, strata: torch.Tensor | None = None, *, stage: str = "") -> None:
    """Validate a reward table ``Tensor[P, G]`` (and a stratum table of the same shape).

    Shapes: ``rewards`` is P prompt groups of G rollouts; ``strata`` (optional) one integer key per
    rollout, ``[P, G]``.

    Raises:
        ConfigError: ``rewards`` not 2-D (key ``group_size``); ``G < 2``, since a group-relative
            baseline needs two rollouts of a prompt (key ``group_size``); ``strata`` of another shape
            (key ``stratum_key``). ``stage`` names the pipeline stage in the message.
    """
    where = f"stage '{stage}': " if stage else ""
    if rewards.ndim != 2:
        raise ConfigError(
            f"{where}rewards must be a [num_prompts, group_size] table, got shape {tuple(rewards.shape)}",
            key="group_size",
        )
    if rewards.shape[1] < 2:
        raise ConfigError(
            f"{where}group_size is {rewards.shape[1]}, but group-relative advantages need at "
            "least 2 rollouts per prompt; set group_size >= 2 (the paper uses 5-16)",
            key="group_size",
        )
    if strata is not None and tuple(strata.shape) != tuple(rewards.shape):
        raise ConfigError(
            f"{where}strata has shape {tuple(strata.shape)} but rewards has "
            f"{tuple(rewards.shape)}; give one stratum key per rollout",
            key="stratum_key",
        )


def normalise_by_spread(centred: torch.Tensor, std: torch.Tensor, eps: float) -> torch.Tensor:
    """``centred / (std + eps)`` where ``std > 0``, and 0 where the rewards have no spread.

    Shapes: ``centred`` any shape, ``std`` broadcastable to it (e.g. ``[P, 1]`` per group or
    ``[P, G]`` per rollout's stratum). A group of equal rewards has a zero numerator; it gets 0
    rather than ``0 / eps`` rounding or ``0 / 0`` with ``eps = 0``.
    """
    spread = std > 0
    return torch.where(spread, centred / (std + eps), torch.zeros_like(centred))


def group_normalised_advantages(
    rewards: torch.Tensor, *, eps: float = 1e-6, normalize: bool = True
) -> torch.Tensor:
    """GRPO's outcome advantage ``A_i = (r_i - mean(r)) / (std(r) + eps)`` within each prompt group.

    Args:
        rewards: ``Tensor[P, G]``, P groups of G rollouts of one prompt (reward units).
        eps: added to the group std (reward units).
        normalize: divide by the std; ``False`` gives the centred reward ``r_i - mean(r)``.

    Returns:
        ``Tensor[P, G]`` (dimensionless; reward units with ``normalize=False``); a group of equal
        rewards gets 0 (:func:`normalise_by_spread`).

    Raises:
        ConfigError: see :func:`check_groups`.

    The std is the population std (divide by G), so with ``eps = 0`` every group with spread has
    advantages of mean exactly 0 and variance exactly 1; the paper writes ``std(r)`` without saying
    which (the sample std would scale every advantage by ``sqrt((G - 1) / G)``).

    Source: Shao et al. 2024, "DeepSeekMath", arXiv 2402.03300, sec. 4.1.2 (outcome supervision:
    ``A_hat_{i,t} = r_tilde_i = (r_i - mean(r)) / std(r)`` for every token t of output i), the
    advantage of eq. 3.
    """
    check_groups(rewards)
    centred = rewards - rewards.mean(dim=1, keepdim=True)
    if not normalize:
        return centred
    return normalise_by_spread(centred, rewards.std(dim=1, unbiased=False, keepdim=True), eps)


def grpo_surrogate_loss(
    log_probs: torch.Tensor, old_log_probs: torch.Tensor, advantages: torch.Tensor, *, clip_epsilon: float
) -> torch.Tensor:
    """GRPO's clipped surrogate, negated for minimisation, on sequences of one length ``L``.

    ``-1/n sum_i 1/L sum_t min(rho_it A_i, clip(rho_it, 1 - eps, 1 + eps) A_i)`` with
    ``rho_it = pi_theta(y_it | y_i<t) / pi_old(y_it | y_i<t)``; the gradient at ``pi_theta = pi_old``
    is the policy gradient with advantage ``A_i`` per token.

    Args:
        log_probs: ``Tensor[n, L]`` per-token ``log pi_theta`` (nats; differentiable).
        old_log_probs: ``Tensor[n, L]`` per-token ``log pi_old`` of the sampling policy (nats).
        advantages: ``Tensor[n]``, one per sequence (e.g. :func:`group_normalised_advantages`
            flattened).
        clip_epsilon: the ratio clipping ``eps`` in ``(0, 1)``.

    Returns:
        A scalar tensor.

    Source: Shao et al. 2024, "DeepSeekMath", arXiv 2402.03300, eq. 3 without the KL term (as
    FlowRL's GRPO baseline runs); the clipping of Schulman et al. 2017 (PPO), eq. 7.
    """
    ratio = torch.exp(log_probs - old_log_probs)
    a = advantages[:, None]
    surr = torch.minimum(ratio * a, ratio.clamp(1 - clip_epsilon, 1 + clip_epsilon) * a)
    return -surr.mean(1).mean()


def mean_baseline_advantages(rewards: torch.Tensor, *, leave_one_out: bool = False) -> torch.Tensor:
    """REINFORCE's ``A_i = r_i - b_i`` with a mean baseline over the last dimension (a batch).

    Args:
        rewards: ``Tensor[..., n]`` rewards of ``n >= 2`` samples of one policy (reward units).
        leave_one_out: ``b_i`` = the mean of the *other* ``n - 1`` rewards; ``False`` (default):
            the mean of all ``n``, itself included.

    Returns:
        ``Tensor[..., n]`` in reward units. The two differ by a constant factor:
        ``r_i - mean_{j != i} r_j = n / (n - 1) (r_i - mean r)``.

    Raises:
        ValueError: fewer than 2 samples (no baseline from the others).

    Bias: Williams' baseline must not depend on the sample it multiplies. The leave-one-out mean
    does not, so ``E[1/n sum_i A_i grad log pi(y_i)] = grad E_pi[r]`` exactly; the full mean
    contains ``r_i`` and gives ``(1 - 1/n) grad E_pi[r]``, the same direction, shrunk by
    ``(n - 1) / n`` (tests check both on an enumerated categorical policy).

    Source: Williams 1992, "Simple statistical gradient-following algorithms for connectionist
    reinforcement learning", Machine Learning 8, sec. 4 (REINFORCE, ``Delta w = alpha (r - b) e``
    with a reinforcement baseline ``b``, Theorem 1); leave-one-out: Kool, van Hoof & Welling 2019,
    "Buy 4 REINFORCE samples, get a baseline for free!" (ICLR DeepRLStructPred workshop).
    """
    n = rewards.shape[-1]
    if n < 2:
        raise ValueError(f"a mean baseline needs at least 2 rewards in the batch, got {n}")
    centred = rewards - rewards.mean(dim=-1, keepdim=True)
    return centred * (n / (n - 1)) if leave_one_out else centred


def reinforce_loss(log_probs: torch.Tensor, advantages: torch.Tensor) -> torch.Tensor:
    """The score-function surrogate ``-1/n sum_i A_i log pi(y_i)`` (``A`` detached), a scalar.

    Its gradient is minus the REINFORCE estimate ``1/n sum_i A_i grad log pi(y_i)`` of
    ``grad E_pi[r]`` for ``y_i ~ pi``.

    Shapes: ``log_probs Tensor[n]`` (sequence log-probabilities, nats, differentiable),
    ``advantages Tensor[n]`` (e.g. :func:`mean_baseline_advantages`).

    Source: Williams 1992, Machine Learning 8, sec. 4 (REINFORCE).
    """
    return -(advantages.detach() * log_probs).mean()
