"""Reward perturbations as gymnasium wrappers, and a gym environment task that applies them.

:class:`GaussianRewardNoise` adds zero-mean Gaussian noise to every reward (a noisy-target
test bed: the expected return, hence every Q-value, is unchanged, while each TD target is
perturbed); :class:`RewardScale` multiplies rewards by a constant (gymnasium's own
``TransformReward``). :class:`RewardWrappedGymEnv` is the ``gym-env`` task with both applied,
noise first, so that ``reward_noise_std`` is in the environment's reward units:
``r' = reward_scale * (r + reward_noise_std * eps)``, ``eps ~ N(0, 1)``.
"""

from __future__ import annotations

import functools
import operator
from typing import Any, ClassVar

import attrs
import gymnasium
import numpy as np

from quadriga import param
from quadriga.errors import ConfigError
from quadriga.validators import finite, non_negative
from quadriga_std.tasks.gym import GymEnv

__all__ = ["GaussianRewardNoise", "RewardScale", "RewardWrappedGymEnv"]

#: mixed into the reset seed, so that the noise stream differs from the environment's own stream
_NOISE_STREAM = 0x5EED_401


class GaussianRewardNoise(gymnasium.RewardWrapper):
    """Adds ``std * eps``, ``eps ~ N(0, 1)`` i.i.d. per step, to the reward of ``env``.

    The noise generator is reseeded by ``reset(seed=s)`` (``numpy`` ``PCG64`` from
    ``SeedSequence([s, tag])``, a stream distinct from the environment's ``np_random`` seeded
    with the same ``s``), so a seeded environment gives the same noise sequence every time; before
    any seeded reset it draws from fresh OS entropy, as an unseeded gymnasium environment does.

    Args:
        env: a ``gymnasium.Env`` with scalar rewards.
        std: noise standard deviation (reward units, >= 0; 0 leaves rewards unchanged).

    Raises:
        ConfigError: ``std`` negative or not finite.

    Units:
        Rewards keep the environment's units; ``std`` is in those units.

    Source: the noisy-reward setting of Farebrother et al. 2024, "Stop Regressing: Training Value
    Functions via Classification for Scalable Deep RL" (ICML, arXiv 2403.03950), the analysis of
    robustness to noisy targets.
    """

    def __init__(self, env: Any, std: float) -> None:
        if isinstance(std, bool) or not isinstance(std, (int, float)) or not np.isfinite(std) or std < 0:
            raise ConfigError(
                f"reward noise std must be a finite number >= 0, got {std!r}.", key="reward_noise_std"
            )
        super().__init__(env)
        self.std = float(std)
        self._noise = np.random.default_rng()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """Reset the environment; a given ``seed`` also reseeds the noise (see the class docstring)."""
        if seed is not None:
            self._noise = np.random.default_rng(np.random.SeedSequence([int(seed), _NOISE_STREAM]))
        return super().reset(seed=seed, options=options)

    def reward(self, reward: Any) -> float:
        """``reward + std * eps`` (float)."""
        if self.std == 0.0:
            return float(reward)
        return float(reward) + self.std * float(self._noise.standard_normal())


class RewardScale(gymnasium.wrappers.TransformReward):
    """Multiplies every reward by ``scale``: gymnasium's ``TransformReward`` with ``r -> scale * r``.

    Args:
        env: a ``gymnasium.Env`` with scalar rewards.
        scale: the factor (finite, nonzero; negative flips the sign of the task).

    Raises:
        ConfigError: ``scale`` zero or not finite.

    Source: gymnasium ``wrappers.TransformReward``.
    """

    def __init__(self, env: Any, scale: float) -> None:
        if (
            isinstance(scale, bool)
            or not isinstance(scale, (int, float))
            or not np.isfinite(scale)
            or scale == 0
        ):
            raise ConfigError(
                f"reward scale must be a finite nonzero number, got {scale!r}.", key="reward_scale"
            )
        super().__init__(env, functools.partial(operator.mul, float(scale)))
        self.scale = float(scale)


@attrs.define(kw_only=True)
class RewardWrappedGymEnv(GymEnv):
    """The ``gym-env`` task with Gaussian reward noise and a reward scale applied in ``make()``.

    ``make()`` returns ``RewardScale(GaussianRewardNoise(gymnasium.make(env_id, ...)))`` (a wrapper is
    left out when it would do nothing), so torchrl learners (``make_torchrl()``) and the evaluators
    see the perturbed rewards; pass a plain ``gym-env`` as the evaluators' ``reference`` to score
    policies on the clean reward. Rewards per step: ``reward_scale * (r + reward_noise_std * eps)``.

    Raises:
        ConfigError: as ``gym-env``; ``reward_noise_std`` negative or not finite; ``reward_scale``
            zero or not finite.

    Source: Farebrother et al. 2024 (arXiv 2403.03950), noisy-target analysis; gymnasium wrappers.
    """

    #: cheap values for quadriga.testing's conformance checks
    check_params: ClassVar[dict[str, Any]] = {
        "env_id": "CartPole-v1",
        "reward_noise_std": 1.0,
        "reward_scale": 0.5,
    }

    reward_noise_std: float = param(
        0.0,
        doc="std of the zero-mean Gaussian noise added to each reward (env reward units)",
        validator=non_negative,
    )
    reward_scale: float = param(1.0, doc="factor multiplying each (noisy) reward", validator=finite)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        if self.reward_scale == 0:
            raise ConfigError(
                "reward_scale must be nonzero (0 erases the task's reward); "
                "use 1.0 to leave rewards as they are.",
                key="reward_scale",
            )

    def make(self, **overrides: Any) -> Any:
        """Return a new wrapped ``gymnasium.Env`` (``overrides`` as in ``gym-env``'s ``make``).

        Raises:
            ConfigError: unknown ``env_id``.
        """
        env = super().make(**overrides)
        if self.reward_noise_std > 0:
            env = GaussianRewardNoise(env, self.reward_noise_std)
        if self.reward_scale != 1.0:
            env = RewardScale(env, self.reward_scale)
        return env
