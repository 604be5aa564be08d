"""The correlated-sources chain: a gymnasium environment whose reward has ``K`` correlated sources.

A 1-D chain of ``length`` cells; the agent starts in cell 0 and the episode terminates on reaching
the last cell. Actions: 0 = left, 1 = stay, 2 = right (left in cell 0 stays). Every step pays the
reward vector ``r = step_reward + goal_reward [s' = goal] + noise_std * L eps``, ``eps ~ N(0, I_K)``,
with ``L L^T = Sigma_rho`` the equicorrelation matrix ``(1 - rho) I + rho 1 1^T``: each source has
per-step noise variance ``noise_std^2`` and any two sources correlation ``rho``.

Under the policy "always right" from cell ``s`` (``n = length - 1 - s`` steps) the discounted
return vector is Gaussian, in closed form (:func:`right_policy_return_law`): mean
``sum_{t<n} gamma^t step_reward + gamma^(n-1) goal_reward``, covariance
``noise_std^2 Sigma_rho (1 - gamma^(2n)) / (1 - gamma^2)``, so the correlation between any two
sources' returns is ``rho``. With ``noise_std = 0`` it is a point mass.

Vector rewards follow mo-gymnasium's ``LinearReward`` wrapper: ``step`` returns the summed reward
(float) and ``info["vector_reward"]`` (``ndarray[K]``); ``reward_space`` is ``Box(K)``.

Source: the "two-source corridor" test bed for MD3QN (Zhang et al. 2021, NeurIPS, "Distributional
Reinforcement Learning for Multi-Dimensional Reward Functions", Section 5.1 uses a maze with
correlated reward sources; this chain is its smallest version with a closed-form joint return law).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import gymnasium
import numpy as np

from quadriga import Environment, param
from quadriga.errors import ConfigError
from quadriga.validators import int_at_least, non_negative, positive_int
from quadriga_std.rl.tabular import TabularMDP, _cholesky

__all__ = ["CorrelatedChainEnv", "VectorRewardChain", "equicorrelation", "right_policy_return_law"]

LEFT, STAY, RIGHT = 0, 1, 2


def equicorrelation(num_sources: int, rho: float) -> np.ndarray:
    """``Sigma_rho = (1 - rho) I_K + rho 1 1^T`` (``ndarray[K, K]``).

    Raises:
        ValueError: not positive semi-definite (``rho`` outside ``[-1 / (K - 1), 1]``).
    """
    K = int(num_sources)
    sigma = (1.0 - rho) * np.eye(K) + rho * np.ones((K, K))
    if K > 1 and not (-1.0 / (K - 1) - 1e-12 <= rho <= 1.0 + 1e-12):
        raise ValueError(f"rho must lie in [-1/(K-1), 1] = [{-1.0 / (K - 1):.3g}, 1] for K = {K}, got {rho}")
    return sigma


class CorrelatedChainEnv(gymnasium.Env):
    """The correlated-sources chain (see the module docstring).

    Args:
        length: number of cells (>= 2); the last one is the terminal goal.
        num_sources: ``K`` reward sources.
        rho: correlation of the per-step noise between any two sources.
        noise_std: per-step noise standard deviation of each source (reward units).
        goal_reward: ``K`` rewards paid on reaching the goal (a scalar is broadcast).
        step_reward: ``K`` mean rewards paid on every step (a scalar is broadcast).

    Spaces: observations ``Box(length)`` (one-hot cell, float32), actions ``Discrete(3)``,
    ``reward_space`` ``Box(K)``.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(
        self,
        length: int = 6,
        num_sources: int = 2,
        rho: float = 0.6,
        noise_std: float = 1.0,
        goal_reward: Any = 1.0,
        step_reward: Any = 0.0,
    ) -> None:
        self.length, self.num_sources = int(length), int(num_sources)
        self.rho, self.noise_std = float(rho), float(noise_std)
        K = self.num_sources
        self.goal_reward = np.broadcast_to(np.asarray(goal_reward, float), (K,)).copy()
        self.step_reward = np.broadcast_to(np.asarray(step_reward, float), (K,)).copy()
        self.chol = _cholesky(equicorrelation(K, self.rho))
        self.observation_space = gymnasium.spaces.Box(0.0, 1.0, (self.length,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(3)
        self.reward_space = gymnasium.spaces.Box(-np.inf, np.inf, (K,), np.float64)
        self._cell = 0

    def _obs(self) -> np.ndarray:
        obs = np.zeros(self.length, np.float32)
        obs[self._cell] = 1.0
        return obs

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """Start in cell 0; returns ``(one-hot obs, {})``."""
        super().reset(seed=seed)
        self._cell = 0
        return self._obs(), {}

    def step(self, action: Any) -> Any:
        """Move, then pay ``step_reward + goal bonus + correlated noise`` (see the module docstring).

        Returns:
            ``(obs, sum of the K rewards, terminated, False, {"vector_reward": ndarray[K]})``.
        """
        a = int(action)
        move = -1 if a == LEFT else (1 if a == RIGHT else 0)
        self._cell = min(max(self._cell + move, 0), self.length - 1)
        terminated = self._cell == self.length - 1
        r = self.step_reward + (self.goal_reward if terminated else 0.0)
        if self.noise_std > 0:
            r = r + self.noise_std * self.chol @ self.np_random.standard_normal(self.num_sources)
        return self._obs(), float(r.sum()), terminated, False, {"vector_reward": r}

    def tabular(self) -> TabularMDP:
        """The exact model: :class:`~quadriga_std.rl.tabular.TabularMDP` with Gaussian reward noise."""
        S, K = self.length, self.num_sources
        P, R = np.zeros((S, 3, S)), np.zeros((S, 3, K))
        for s in range(S):
            for a, move in ((LEFT, -1), (STAY, 0), (RIGHT, 1)):
                s2 = min(max(s + move, 0), S - 1)
                P[s, a, s2] = 1.0
                R[s, a] = self.step_reward + (self.goal_reward if s2 == S - 1 else 0.0)
        cov = np.broadcast_to(self.noise_std**2 * equicorrelation(K, self.rho), (S, 3, K, K)).copy()
        terminal = np.zeros(S, bool)
        terminal[-1] = True
        return TabularMDP(
            P=P, R=R, terminal=terminal, reward_cov=cov, observations=np.eye(S, dtype=np.float32)
        )


def right_policy_return_law(
    env: CorrelatedChainEnv, gamma: float, cell: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Exact law of the discounted return vector of "always right" from ``cell`` (Gaussian).

    Returns:
        ``(mean ndarray[K], covariance ndarray[K, K])`` in return units (see the module docstring).
    """
    n = env.length - 1 - int(cell)
    disc = gamma ** np.arange(n)
    mean = disc.sum() * env.step_reward + gamma ** (n - 1) * env.goal_reward
    cov = env.noise_std**2 * equicorrelation(env.num_sources, env.rho) * float((disc**2).sum())
    return mean, cov


def _rho_valid(instance: Any, attribute: Any, value: Any) -> None:
    K = instance.num_sources
    low = -1.0 / (K - 1) if K > 1 else -1.0
    if not (isinstance(value, (int, float)) and low <= float(value) <= 1.0):
        raise ConfigError(f"rho must lie in [{low:.3g}, 1] for {K} sources, got {value!r}.", key="rho")


def _sources_list(instance: Any, attribute: Any, value: Any) -> None:
    if not isinstance(value, (list, tuple)) or len(value) != instance.num_sources:
        raise ConfigError(
            f"{attribute.name} must be a list of num_sources = {instance.num_sources} numbers, "
            f"got {value!r}.",
            key=attribute.name,
        )
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
            raise ConfigError(
                f"{attribute.name} entries must be finite numbers, got {value!r}.", key=attribute.name
            )


@attrs.define(kw_only=True)
class VectorRewardChain(Environment):
    """Task: the correlated-sources chain (:class:`CorrelatedChainEnv`) with a time limit.

    ``make()`` returns the gymnasium environment wrapped in ``TimeLimit(max_episode_steps)``;
    ``tabular()`` the exact :class:`~quadriga_std.rl.tabular.TabularMDP`; ``return_law(gamma)``
    the closed-form Gaussian law of the optimal ("always right") policy's return vector from cell 0.

    Shapes:
        Observations ``ndarray[length]`` (one-hot cell); actions ``int`` in {0, 1, 2}; reward ``float``
        (the sum of the sources) with ``info["vector_reward"]`` ``ndarray[num_sources]``.

    Units:
        Rewards in reward units per step; ``noise_std`` in the same units; returns discounted by the
        learner's ``gamma`` per step.

    Raises:
        ConfigError: ``rho`` outside ``[-1/(K-1), 1]``; a reward list of the wrong length.

    Source: the two-source corridor of the MD3QN check (Zhang et al. 2021, NeurIPS, Section 5.1 uses
    correlated reward sources in a maze); mo-gymnasium's ``LinearReward`` convention for the rewards.
    """

    num_sources: int = param(2, doc="number of reward sources K", validator=int_at_least(1))
    length: int = param(6, doc="number of cells (the last is the terminal goal)", validator=int_at_least(2))
    rho: float = param(0.6, doc="correlation of the per-step noise between sources", validator=_rho_valid)
    noise_std: float = param(
        1.0, doc="per-step noise std of each source (reward units)", validator=non_negative
    )
    goal_reward: list[float] = param(
        factory=lambda: [1.0, 1.0], doc="reward of each source on reaching the goal", validator=_sources_list
    )
    step_reward: list[float] = param(
        factory=lambda: [0.0, 0.0], doc="mean reward of each source on every step", validator=_sources_list
    )
    max_episode_steps: int = param(50, doc="time limit per episode (env steps)", validator=positive_int)

    def prepare(self, *, generator: Any) -> None:
        """Nothing to prepare (the environment is built by :meth:`make`); draws nothing."""

    def env(self) -> CorrelatedChainEnv:
        """The bare environment (no time limit)."""
        return CorrelatedChainEnv(
            length=self.length,
            num_sources=self.num_sources,
            rho=self.rho,
            noise_std=self.noise_std,
            goal_reward=list(self.goal_reward),
            step_reward=list(self.step_reward),
        )

    def make(self, **overrides: Any) -> Any:
        """A new ``TimeLimit(CorrelatedChainEnv)``; ``max_episode_steps`` may be overridden."""
        limit = int(overrides.pop("max_episode_steps", None) or self.max_episode_steps)
        if overrides:
            raise ConfigError(
                f"vector-reward-chain takes no make() overrides {sorted(overrides)}.", key="kwargs"
            )
        return gymnasium.wrappers.TimeLimit(self.env(), max_episode_steps=limit)

    @property
    def time_limit(self) -> int:
        """The episode time limit (env steps)."""
        return int(self.max_episode_steps)

    def tabular(self) -> TabularMDP:
        """The exact model (:meth:`CorrelatedChainEnv.tabular`)."""
        return self.env().tabular()

    def return_law(self, gamma: float) -> tuple[np.ndarray, np.ndarray]:
        """Closed-form ``(mean [K], cov [K, K])`` of the optimal policy's return vector from cell 0."""
        return right_policy_return_law(self.env(), float(gamma))
