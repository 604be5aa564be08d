"""Group-relative advantages: global (GRPO), stratified (SAN) and their blend.

All functions take a reward table ``rewards: Tensor[P, G]`` (P prompt groups of G rollouts,
reward units) and, for the stratified ones, an integer stratum table ``strata: Tensor[P, G]``
(e.g. the number of tool calls of each rollout). Strata are formed **within each prompt
group** (row), never across the batch. Statistics are population statistics (divide by the
number of rollouts), so with ``eps = 0`` a stratum of size ``n_k >= 2`` with distinct rewards
has advantages of mean exactly 0 and variance exactly 1.

A stratum whose rewards are all equal (in particular a singleton stratum) has no spread to
normalise by: its SAN advantages are set to 0 (the numerator is 0; we do not divide 0 by 0).
This is the finite-sample pitfall the blend with the global estimator softens.

Source: Zhu et al., "Stratified GRPO: Handling Structural Heterogeneity in Reinforcement
Learning of LLM Search Agents", arXiv 2510.06214: global advantage (standard GRPO
normalisation), SAN, Proposition 1 (advantage decomposition), Theorem 1 (variance reduction)
and the linear blend.
"""

from __future__ import annotations

from typing import Any

import torch

from quadriga import ConfigError

__all__ = [
    "advantage_decomposition",
    "blended_advantages",
    "check_groups",
    "global_advantages",
    "stratified_advantages",
]


def check_groups(rewards: torch.Tensor, strata: torch.Tensor | None = None, *, stage: str = "") -> None:
    """Validate a reward table (and a stratum table of the same shape).

    Raises:
        ConfigError: when ``rewards`` is not 2-D ``[P, G]``, when ``G < 2`` (a group-relative
            baseline needs at least two rollouts per prompt), or when ``strata`` has another shape.
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


def _normalise(centred: torch.Tensor, std: torch.Tensor, eps: float) -> torch.Tensor:
    spread = std > 0
    return torch.where(spread, centred / (std + eps), torch.zeros_like(centred))


def global_advantages(rewards: torch.Tensor, *, eps: float = 1e-6, normalize: bool = True) -> torch.Tensor:
    """GRPO's group-normalised advantage ``(R_i - mean(R)) / (std(R) + eps)`` per prompt group.

    Args:
        rewards: ``Tensor[P, G]`` float rewards.
        eps: added to the std (reward units) for stability.
        normalize: divide by the group std (``False`` gives the centred reward ``R_i - mean(R)``).

    Returns:
        ``Tensor[P, G]``; rows of equal rewards give 0.

    Raises:
        ConfigError: see :func:`check_groups`.

    Source: Shao et al. 2024 (DeepSeekMath), GRPO outcome supervision; Zhu et al. 2025, global estimator.
    """
    check_groups(rewards)
    centred = rewards - rewards.mean(dim=1, keepdim=True)
    if not normalize:
        return centred
    return _normalise(centred, rewards.std(dim=1, unbiased=False, keepdim=True), eps)


def _stratum_stats(rewards: torch.Tensor, strata: torch.Tensor) -> tuple[torch.Tensor, ...]:
    same = strata.unsqueeze(2) == strata.unsqueeze(1)  # [P, G, G]
    weight = same.to(rewards.dtype)
    count = weight.sum(dim=2)  # n_k of each rollout
    mean = (weight * rewards.unsqueeze(1)).sum(dim=2) / count  # R̄_k of each rollout
    var = (weight * (rewards.unsqueeze(1) - mean.unsqueeze(2)) ** 2).sum(dim=2) / count
    return count, mean, var.clamp_min(0).sqrt()


def stratified_advantages(
    rewards: torch.Tensor, strata: torch.Tensor, *, eps: float = 1e-6, normalize: bool = True
) -> torch.Tensor:
    """Stratified Advantage Normalization: ``(R_i - R̄_k) / (std_k + eps)`` for ``i`` in stratum ``k``.

    Args:
        rewards: ``Tensor[P, G]`` float rewards.
        strata: ``Tensor[P, G]`` integer stratum keys (compared within each row only).
        eps: added to the stratum std (reward units).
        normalize: divide by the stratum std (``False`` gives ``R_i - R̄_k``).

    Returns:
        ``Tensor[P, G]``; strata with equal rewards (singletons included) give 0.

    Raises:
        ConfigError: see :func:`check_groups`.

    Source: Zhu et al. 2025, SAN (Stratified Advantage Normalization).
    """
    check_groups(rewards, strata)
    _, mean, std = _stratum_stats(rewards, strata)
    centred = rewards - mean
    if not normalize:
        return centred
    return _normalise(centred, std, eps)


def blended_advantages(
    rewards: torch.Tensor, strata: torch.Tensor, alpha: float, *, eps: float = 1e-6
) -> torch.Tensor:
    """Blend ``alpha * A_SAN + (1 - alpha) * A_global`` (both normalised).

    Args:
        rewards, strata: ``Tensor[P, G]`` as in :func:`stratified_advantages`.
        alpha: blend weight in ``[0, 1]``; 1 is pure SAN, 0 is GRPO.
        eps: as above.

    Returns:
        ``Tensor[P, G]``.

    Raises:
        ConfigError: for ``alpha`` outside ``[0, 1]`` or bad tables.

    Source: Zhu et al. 2025, linear blend of SAN with the global estimator.
    """
    if not 0.0 <= float(alpha) <= 1.0:
        raise ConfigError(f"alpha must be in [0, 1] (1 = pure SAN, 0 = GRPO), got {alpha}", key="alpha")
    san = stratified_advantages(rewards, strata, eps=eps)
    glob = global_advantages(rewards, eps=eps)
    return alpha * san + (1.0 - alpha) * glob


def advantage_decomposition(rewards: torch.Tensor, strata: torch.Tensor) -> dict[str, Any]:
    """The pieces of Proposition 1 and Theorem 1 for each prompt group (unnormalised advantages).

    ``A_global = A_SAN + (R̄_k - R̄)`` element-wise, and, with population variances over the G
    rollouts of a group, ``Var[A_global] - Var[A_SAN] = (1/G) sum_k n_k (R̄_k - R̄)^2``.

    Args:
        rewards, strata: ``Tensor[P, G]``.

    Returns:
        ``{"global": [P, G], "san": [P, G], "cross_stratum_bias": [P, G] (R̄_k - R̄),
        "var_global": [P], "var_san": [P], "between_stratum": [P]}``.

    Raises:
        ConfigError: see :func:`check_groups`.

    Source: Zhu et al. 2025, Proposition 1 and Theorem 1 (normaliser 1/G: the law of total variance).
    """
    check_groups(rewards, strata)
    _, mean_k, _ = _stratum_stats(rewards, strata)
    mean = rewards.mean(dim=1, keepdim=True)
    glob, san = rewards - mean, rewards - mean_k
    bias = mean_k - mean
    # sum over strata of n_k (R̄_k - R̄)^2 = sum over rollouts of (R̄_k(i) - R̄)^2
    between = (bias**2).sum(dim=1) / rewards.shape[1]
    return {
        "global": glob,
        "san": san,
        "cross_stratum_bias": bias,
        "var_global": (glob**2).mean(dim=1),
        "var_san": (san**2).mean(dim=1),
        "between_stratum": between,
    }
