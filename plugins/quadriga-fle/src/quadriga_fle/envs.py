"""FrozenLake with noisy rewards: a small finite MDP whose return law is not trivial.

gymnasium's ``FrozenLake-v1`` (slippery: the intended move happens with probability 1/3, each
perpendicular one with 1/3) pays 1 on reaching the goal and 0 otherwise, so its undiscounted
returns are {0, 1}. Here every step also pays ``step_reward + noise_std * eps``, ``eps ~ N(0, 1)``
(research note §3: ``N(-0.01, 0.05^2)``), which spreads the discounted return law.

Source: gymnasium ``FrozenLake-v1`` (its ``unwrapped.P`` transition table gives the exact model);
Wu, Uehara & Sun 2023 evaluate FLE on small tabular tasks with stochastic rewards [recalled].
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from quadriga import Environment, param
from quadriga.errors import ConfigError
from quadriga.validators import non_negative, one_of, positive_int

__all__ = ["NoisyFrozenLake", "frozen_lake_mdp"]


def frozen_lake_mdp(map_name: str, slippery: bool, step_reward: float, noise_std: float) -> Any:
    """The exact :class:`~quadriga_std.rl.tabular.TabularMDP` of FrozenLake with noisy step rewards.

    ``R[s, a] = P(goal | s, a) + step_reward``; ``reward_cov = noise_std^2``; holes and the goal
    are terminal; the start state is 0.
    """
    import gymnasium
    from quadriga_std.rl.tabular import TabularMDP

    env = gymnasium.make("FrozenLake-v1", map_name=map_name, is_slippery=slippery)
    try:
        table, desc = env.unwrapped.P, env.unwrapped.desc  # type: ignore[attr-defined]
    finally:
        env.close()
    S, A = len(table), len(table[0])
    P, R = np.zeros((S, A, S)), np.zeros((S, A, 1))
    for s in range(S):
        for a in range(A):
            for prob, s2, r, _ in table[s][a]:
                P[s, a, s2] += prob
                R[s, a, 0] += prob * r
    R += step_reward
    terminal = np.isin(desc.ravel(), [b"H", b"G"])
    cov = np.full((S, A, 1, 1), noise_std**2)
    return TabularMDP(P=P, R=R, terminal=terminal, reward_cov=cov, observations=np.eye(S, dtype=np.float32))


@attrs.define(kw_only=True)
class NoisyFrozenLake(Environment):
    """Task: ``FrozenLake-v1`` with a noisy per-step reward ``step_reward + noise_std * N(0, 1)``.

    ``tabular()`` gives the exact model (:func:`frozen_lake_mdp`); ``make()`` the gymnasium
    environment with the same noise (a reward wrapper) and a time limit.

    Shapes:
        States ``int`` in ``[0, 16)`` (4x4) or ``[0, 64)`` (8x8); actions ``int`` in ``[0, 4)``.

    Units:
        Reward units per step (goal 1).

    Raises:
        ConfigError: bad parameters; ``make`` overrides other than ``max_episode_steps``.

    Source: gymnasium ``FrozenLake-v1``; the reward noise of research note §3.
    """

    map_name: str = param("4x4", doc="FrozenLake map", validator=one_of(("4x4", "8x8")))
    slippery: bool = param(True, doc="slippery moves (1/3 intended, 1/3 each side)")
    step_reward: float = param(-0.01, doc="mean reward of every step (reward units)")
    noise_std: float = param(
        0.05, doc="std of the per-step reward noise (reward units)", validator=non_negative
    )
    max_episode_steps: int = param(100, doc="time limit of make()'s environment", validator=positive_int)

    def tabular(self) -> Any:
        """The exact model (:func:`frozen_lake_mdp`)."""
        return frozen_lake_mdp(self.map_name, self.slippery, self.step_reward, self.noise_std)

    @property
    def time_limit(self) -> int:
        """The episode time limit (env steps)."""
        return int(self.max_episode_steps)

    def make(self, **overrides: Any) -> Any:
        """``TimeLimit(noisy-reward FrozenLake-v1)``; ``max_episode_steps`` may be overridden."""
        import gymnasium

        limit = int(overrides.pop("max_episode_steps", None) or self.max_episode_steps)
        if overrides:
            raise ConfigError(
                f"noisy-frozen-lake takes no make() overrides {sorted(overrides)}.", key="kwargs"
            )
        env = gymnasium.make(
            "FrozenLake-v1", map_name=self.map_name, is_slippery=self.slippery, max_episode_steps=limit
        )
        step, sd = self.step_reward, self.noise_std

        class _Noise(gymnasium.Wrapper):
            def step(self, action: Any) -> Any:
                obs, r, term, trunc, info = self.env.step(action)
                return obs, float(r) + step + sd * float(self.np_random.standard_normal()), term, trunc, info

        return _Noise(env)
