"""Group rollouts: G episodes per prompt (question), all environments stepped in lock-step.

One policy forward pass per time step serves every unfinished episode of the batch, so a
batch of ``P * G`` episodes of at most ``max_tool_calls + 1`` decisions costs that many
forward passes, not ``P * G`` times as many.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import attrs
import numpy as np
import torch

from quadriga import ConfigError

__all__ = ["GroupBatch", "collect_groups"]

_MAX_STEPS = 10_000


@attrs.define(kw_only=True, eq=False)
class GroupBatch:
    """The decisions and outcomes of one batch of prompt groups.

    Attributes:
        observation: ``float32[N, obs_dim]``, one row per decision (N = total steps).
        action: ``int64[N]``.
        log_prob: ``float32[N]``, log-probability of ``action`` under the behaviour policy (nats).
        rollout: ``int64[N]``, index in ``[0, P*G)`` (row-major: prompt, then rollout) of the episode.
        length: ``int64[P*G]``, decisions per episode.
        returns: ``float32[P, G]``, episode returns (reward units).
        strata: ``int64[P, G]``, stratum index of each episode (equal keys -> equal index).
        tool_calls: ``float32[P, G]``, searches per episode.
        correct: ``float32[P, G]``, 1 for a correct answer.
    """

    observation: torch.Tensor
    action: torch.Tensor
    log_prob: torch.Tensor
    rollout: torch.Tensor
    length: torch.Tensor
    returns: torch.Tensor
    strata: torch.Tensor
    tool_calls: torch.Tensor
    correct: torch.Tensor


def collect_groups(
    envs: Sequence[Any],
    policy: torch.nn.Module,
    questions: Sequence[int],
    group_size: int,
    *,
    seeds: np.ndarray,
    generator: torch.Generator,
    stratum_key: str = "tool_calls",
    stage: str = "",
    greedy: bool = False,
) -> GroupBatch:
    """Run ``group_size`` episodes on each question with a categorical policy over logits.

    Args:
        envs: ``P * G`` gymnasium environments (reset here with ``options={"question": q}``).
        policy: maps ``float32[n, obs_dim]`` to logits ``float32[n, num_actions]``.
        questions: ``P`` question ids; episodes ``p*G .. p*G+G-1`` share ``questions[p]``.
        group_size: G.
        seeds: ``int[P * G]`` episode seeds (derived from the stage's generator by the caller).
        generator: draws the actions (``torch.multinomial``).
        stratum_key: key of the final ``info`` dict whose value defines the stratum.
        stage: stage name, for error messages.
        greedy: take the most probable action instead of sampling (evaluation; ``generator`` unused).

    Returns:
        :class:`GroupBatch`.

    Raises:
        ConfigError: when an episode's final ``info`` lacks ``stratum_key`` or its value is unhashable.
        RuntimeError: when an episode does not end within 10000 steps.
    """
    num = len(questions) * group_size
    if len(envs) != num or len(seeds) != num:
        raise ValueError(f"need {num} environments and seeds, got {len(envs)} and {len(seeds)}")
    obs = np.stack(
        [
            env.reset(seed=int(seeds[i]), options={"question": int(questions[i // group_size])})[0]
            for i, env in enumerate(envs)
        ]
    ).astype(np.float32)
    active = np.ones(num, dtype=bool)
    returns = np.zeros(num, dtype=np.float64)
    length = np.zeros(num, dtype=np.int64)
    finals: list[dict[str, Any]] = [{} for _ in range(num)]
    rows_obs, rows_act, rows_logp, rows_idx = [], [], [], []
    for _ in range(_MAX_STEPS):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        x = torch.from_numpy(obs[idx])
        with torch.no_grad():
            logp_all = torch.log_softmax(policy(x), dim=-1)
            if greedy:
                act = logp_all.argmax(dim=-1)
            else:
                act = torch.multinomial(logp_all.exp(), 1, generator=generator).squeeze(1)
            logp = logp_all.gather(1, act.unsqueeze(1)).squeeze(1)
        rows_obs.append(x)
        rows_act.append(act)
        rows_logp.append(logp)
        rows_idx.append(torch.from_numpy(idx))
        for j, i in enumerate(idx):
            o, r, terminated, truncated, info = envs[i].step(int(act[j]))
            obs[i] = o
            returns[i] += r
            length[i] += 1
            if terminated or truncated:
                active[i] = False
                finals[i] = info
    else:
        raise RuntimeError(f"episodes did not end within {_MAX_STEPS} steps")
    keys = [_stratum_value(info, stratum_key, i, stage) for i, info in enumerate(finals)]
    index: dict[Hashable, int] = {}
    strata = torch.tensor([index.setdefault(k, len(index)) for k in keys], dtype=torch.long)
    shape = (len(questions), group_size)
    return GroupBatch(
        observation=torch.cat(rows_obs),
        action=torch.cat(rows_act),
        log_prob=torch.cat(rows_logp),
        rollout=torch.cat(rows_idx).long(),
        length=torch.from_numpy(length),
        returns=torch.tensor(returns, dtype=torch.float32).view(shape),
        strata=strata.view(shape),
        tool_calls=torch.tensor([float(f.get("tool_calls", 0)) for f in finals]).view(shape),
        correct=torch.tensor([float(bool(f.get("correct", False))) for f in finals]).view(shape),
    )


def _stratum_value(info: dict[str, Any], key: str, episode: int, stage: str) -> Hashable:
    where = f"stage '{stage}'" if stage else "rollout collection"
    if key not in info:
        raise ConfigError(
            f"{where}: the stratum key '{key}' is missing from trajectory {episode} (its final info "
            f"has keys {sorted(info)}); set stratum_key to one of these",
            key="stratum_key",
        )
    value = info[key]
    if hasattr(value, "item"):
        value = value.item()
    try:
        hash(value)
    except TypeError:
        raise ConfigError(
            f"{where}: the stratum key '{key}' of trajectory {episode} is {value!r}, which is not "
            "hashable; choose a key with a scalar value (e.g. 'tool_calls')",
            key="stratum_key",
        ) from None
    return value
