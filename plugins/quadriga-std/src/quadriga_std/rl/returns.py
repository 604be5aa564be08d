"""Monte-Carlo (joint) discounted returns of a policy, and summaries of return laws.

The reference for a learned return distribution: roll the policy out ``num_episodes`` times from the
environment's start state and keep each episode's discounted return vector
``G = sum_t gamma^t r_t`` (``r_t`` the ``K``-vector ``info["vector_reward"]``, or the scalar reward
as ``K = 1``). Exact in law as ``num_episodes -> infinity`` (and as the horizon does not cut the
discounted sum short: the rollouts run ``tail`` steps past the task's time limit, with
``gamma^tail < 1e-3``).

Source: Sutton & Barto 2018, Section 5.1 (first-visit Monte-Carlo prediction, here of the whole
return law at the start state).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["correlation_matrix", "monte_carlo_returns", "reward_vector", "tail_steps"]


def reward_vector(reward: Any, info: dict[str, Any]) -> np.ndarray:
    """The step's reward vector ``info["vector_reward"]`` (``ndarray[K]``), else the scalar reward ``[1]``."""
    vec = info.get("vector_reward")
    return np.atleast_1d(np.asarray(reward if vec is None else vec, dtype=np.float64))


def tail_steps(gamma: float, tol: float = 1e-3) -> int:
    """The smallest ``k`` with ``gamma^k < tol`` (0 for gamma = 0; 1000 for gamma >= 1)."""
    if gamma <= 0:
        return 0
    if gamma >= 1:
        return 1000
    return math.ceil(math.log(tol) / math.log(gamma))


def monte_carlo_returns(
    env_task: Any,
    policy: Callable[[np.ndarray], int],
    *,
    num_episodes: int,
    gamma: float,
    seed: int,
    deterministic: bool = True,
) -> np.ndarray:
    """Discounted return vectors of ``num_episodes`` rollouts of ``policy`` from the start state.

    Args:
        env_task: an Environment task (``make(max_episode_steps=...)`` and ``time_limit``).
        policy: ``obs ndarray -> action int``.
        num_episodes: rollouts; episode ``i`` resets with seed ``seed + i``.
        gamma: discount.
        seed: base reset seed.
        deterministic: the policy is a function of the observation: its actions are cached per
            observation (same result, far fewer forward passes on a finite state space).

    Returns:
        ``ndarray[num_episodes, K]`` discounted return vectors (return units).
    """
    limit = getattr(env_task, "time_limit", None)
    env = env_task.make(max_episode_steps=limit + tail_steps(gamma)) if limit else env_task.make()
    cache: dict[bytes, int] = {}
    out = []
    try:
        for i in range(num_episodes):
            obs, _ = env.reset(seed=seed + i)
            g, disc, done = 0.0, 1.0, False
            while not done:
                key = np.asarray(obs).tobytes()
                if deterministic and key in cache:
                    a = cache[key]
                else:
                    a = cache[key] = int(policy(np.asarray(obs)))
                obs, r, terminated, truncated, info = env.step(a)
                g = g + disc * reward_vector(r, info)
                disc *= gamma
                done = terminated or truncated
            out.append(np.atleast_1d(g))
    finally:
        env.close()
    return np.stack(out)


def correlation_matrix(x: np.ndarray) -> np.ndarray:
    """Pearson correlations ``ndarray[K, K]`` of the rows of ``x`` (``ndarray[n, K]``).

    A source with zero variance gets correlation 0 with every other source (and 1 with itself),
    instead of ``nan``: a point mass is uncorrelated with anything.
    """
    x = np.asarray(x, float)
    c = np.cov(x, rowvar=False).reshape(x.shape[1], x.shape[1])
    sd = np.sqrt(np.clip(np.diag(c), 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = c / np.outer(sd, sd)
    r = np.where(np.outer(sd, sd) > 1e-12, r, 0.0)
    np.fill_diagonal(r, 1.0)
    return np.clip(r, -1.0, 1.0)
