"""A gymnasium environment by id, usable directly or wrapped for torchrl."""

from __future__ import annotations

from typing import Any

import attrs

from quadriga import Environment, param
from quadriga.errors import ConfigError, suggest

__all__ = ["GymEnv", "check_discrete_actions", "check_env_id", "check_env_kwargs"]


def check_env_id(env_id: str) -> None:
    """Check that ``env_id`` is registered with gymnasium.

    Args:
        env_id: a gymnasium id such as ``"CartPole-v1"``.

    Raises:
        ConfigError: the id is unknown; the message lists gymnasium's close matches
            (:func:`difflib.get_close_matches` over ``gymnasium.registry``, as ``gymnasium.make`` does).

    Source: gymnasium ``envs/registration.py`` (``_check_name_exists``) for the suggestion rule.
    """
    import gymnasium

    ids = list(gymnasium.registry.keys())
    if env_id in ids:
        return
    hint = suggest(env_id, ids)
    if not hint:  # match the name without its version, e.g. 'Cartpole' -> 'CartPole-v1'
        base = env_id.split("-v")[0].lower()
        close = [i for i in ids if i.split("-v")[0].lower() == base]
        hint = f" Did you mean {', '.join(repr(c) for c in close[:3])}?" if close else ""
    raise ConfigError(
        f"unknown gymnasium environment id '{env_id}'.{hint} "
        "See gymnasium.pprint_registry() for the registered ids.",
        key="env_id",
    )


def check_env_kwargs(env_id: str, kwargs: Any) -> None:
    """Check ``kwargs`` against what ``gymnasium.make(env_id, **kwargs)`` accepts, before anything runs.

    Accepted: the parameters of ``gymnasium.make`` itself, the registered spec's ``kwargs`` and the
    parameters of the environment's constructor (its entry point). A constructor taking
    ``**kwargs`` accepts anything, and nothing more is checked.

    Args:
        env_id: a registered gymnasium id (checked by :func:`check_env_id`).
        kwargs: the ``kwargs`` table of the task.

    Raises:
        ConfigError: ``kwargs`` is not a table, or names an argument the environment does not take
            (close matches suggested, the accepted names listed).

    Source: gymnasium ``envs/registration.py`` (``make`` passes ``spec.kwargs`` updated with
    ``kwargs`` to the entry point).
    """
    import inspect

    import gymnasium
    from gymnasium.envs.registration import load_env_creator

    if not isinstance(kwargs, dict):
        raise ConfigError(f"kwargs must be a table of keyword arguments, got {kwargs!r}.", key="kwargs")
    if not kwargs:
        return
    spec = gymnasium.spec(env_id)
    make_params = {n for n in inspect.signature(gymnasium.make).parameters if n not in ("id", "kwargs")}
    try:
        creator = (
            load_env_creator(spec.entry_point) if isinstance(spec.entry_point, str) else spec.entry_point
        )
        params = inspect.signature(creator).parameters
    except Exception:  # an entry point that cannot be inspected: gymnasium.make reports it
        return
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return
    accepted = make_params | set(spec.kwargs) | {n for n in params if n != "self"}
    for key in kwargs:
        if key not in accepted:
            raise ConfigError(
                f"'{env_id}' takes no keyword argument '{key}'.{suggest(key, accepted)} "
                f"It accepts: {', '.join(sorted(accepted))}.",
                key=f"kwargs.{key}",
            )


def check_discrete_actions(env: Any, who: str) -> int:
    """Return the number of actions of a gymnasium env with a ``Discrete`` action space.

    Args:
        env: a ``gymnasium.Env``.
        who: the component name used in the error (e.g. ``"dqn"``).

    Returns:
        ``num_actions`` (int).

    Raises:
        ConfigError: the action space is not ``gymnasium.spaces.Discrete`` (e.g. a continuous ``Box``),
            or the observation space is not a flat ``Box``.
    """
    import gymnasium

    space = env.action_space
    env_id = env.spec.id if env.spec is not None else type(env).__name__
    if not isinstance(space, gymnasium.spaces.Discrete):
        raise ConfigError(
            f"{who} needs a discrete action space, but '{env_id}' has {space} (continuous or structured). "
            "Use a discrete-action environment (CartPole-v1, Acrobot-v1, MountainCar-v0) or a "
            "continuous-control learner.",
            key="env_id",
        )
    obs = env.observation_space
    if not isinstance(obs, gymnasium.spaces.Box) or len(obs.shape) != 1:
        raise ConfigError(
            f"{who} needs a flat Box observation space, but '{env_id}' has {obs}. "
            "Add a flattening wrapper or use a vector-observation environment.",
            key="env_id",
        )
    return int(space.n)


@attrs.define(kw_only=True)
class GymEnv(Environment):
    """A gymnasium environment given by id and keyword arguments.

    ``make()`` returns a fresh ``gymnasium.Env`` (observations ``ndarray[obs_dim]``, rewards in the
    environment's own units per step); ``make_torchrl()`` wraps it with torchrl's ``GymWrapper``
    (categorical actions, ``Tensor[]`` int64). The id is checked when the task is built, so an
    unknown id fails before any stage runs.

    Raises:
        ConfigError: unknown ``env_id`` (close matches suggested), non-positive ``max_episode_steps``,
            a ``kwargs`` key the environment does not take (:func:`check_env_kwargs`).

    Source: Towers et al. 2024, Gymnasium; torchrl ``envs.libs.gym.GymWrapper``.
    """

    env_id: str = param(doc="gymnasium environment id, e.g. 'CartPole-v1'")
    kwargs: dict[str, Any] = param(factory=dict, doc="keyword arguments passed to gymnasium.make")
    max_episode_steps: int | None = param(
        None, doc="time limit per episode (env steps); None keeps the registered limit"
    )

    def __attrs_post_init__(self) -> None:
        if self.max_episode_steps is not None and int(self.max_episode_steps) <= 0:
            raise ConfigError(
                f"max_episode_steps must be positive, got {self.max_episode_steps}; "
                "omit it to keep the registered limit.",
                key="max_episode_steps",
            )
        check_env_id(self.env_id)
        check_env_kwargs(self.env_id, self.kwargs)

    def prepare(self, *, generator: Any) -> None:
        """Check the id again (it may have been changed after building); draws nothing.

        Raises:
            ConfigError: unknown ``env_id``.
        """
        check_env_id(self.env_id)

    def make(self, **overrides: Any) -> Any:
        """Return a new ``gymnasium.Env``.

        Args:
            overrides: keyword arguments replacing ``kwargs`` entries; ``max_episode_steps`` here
                replaces the task's time limit.

        Returns:
            ``gymnasium.Env``.

        Raises:
            ConfigError: unknown ``env_id``.
        """
        import gymnasium

        check_env_id(self.env_id)
        kwargs = {**self.kwargs, **overrides}
        limit = kwargs.pop("max_episode_steps", self.max_episode_steps)
        if limit is not None:
            kwargs["max_episode_steps"] = int(limit)
        return gymnasium.make(self.env_id, **kwargs)

    @property
    def time_limit(self) -> int | None:
        """The episode time limit in env steps (``max_episode_steps`` or the registered one)."""
        import gymnasium

        if self.max_episode_steps is not None:
            return int(self.max_episode_steps)
        return gymnasium.spec(self.env_id).max_episode_steps

    def make_torchrl(self, **overrides: Any) -> Any:
        """Return the environment wrapped for torchrl.

        Returns:
            ``torchrl.envs.GymWrapper`` with categorical actions (``"action"``: ``Tensor[]`` int64),
            ``"observation"``: ``Tensor[obs_dim]`` float32, ``("next", "reward")``: ``Tensor[1]``.

        Raises:
            ConfigError: unknown ``env_id``.
        """
        from torchrl.envs import GymWrapper

        return GymWrapper(self.make(**overrides), categorical_action_encoding=True, device="cpu")
