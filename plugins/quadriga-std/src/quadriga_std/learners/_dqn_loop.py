"""The parts of the DQN loop around its update: acting in the environment, minibatches, the record.

:class:`Rollout` steps a gymnasium environment ``frames_per_batch`` steps per round and hands the
round over as one ``TensorDict`` for the replay buffer; :func:`minibatches` cuts one replay draw
into the round's updates; :class:`TrainingRecord` keeps the history (finished episodes, logged
updates) and averages each update's ``info`` per logging interval. The update itself is written
out in :meth:`quadriga_std.learners.dqn.DQN._train`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict

__all__ = ["Rollout", "TrainingRecord", "minibatches"]


class Rollout:
    """A gymnasium environment stepped in rounds of ``frames_per_batch`` steps.

    Args:
        env: a gymnasium environment with a ``Discrete`` action space and vector observations
            (closed by :meth:`close`).
        seed: seed of the first ``reset`` (later resets continue the environment's own stream).
        obs_dim: observation size.
        num_actions: size of the ``Discrete`` action space.
        frames_per_batch: steps per round.
        reward_dim: ``None`` stores the scalar reward (``Tensor[n, 1]``); ``K`` stores the vector
            ``info["vector_reward"]`` (``Tensor[n, K]``; mo-gymnasium's ``LinearReward`` convention).
        device: where the policy's network lives: each observation is moved there to act (the
            environment and the round's transitions stay on the CPU).

    ``frames`` counts the steps taken. Episodes end on termination or truncation; the stored
    ``("next", "observation")`` of the last step is the episode's last observation (not the reset one).
    """

    def __init__(
        self,
        env: Any,
        seed: int,
        obs_dim: int,
        num_actions: int,
        frames_per_batch: int,
        reward_dim: int | None = None,
        *,
        device: Any = "cpu",
    ) -> None:
        self.env, self.num_actions, self.frames, n = env, int(num_actions), 0, int(frames_per_batch)
        self.vector, self.device = reward_dim is not None, torch.device(device)
        self.obs = np.empty((n, obs_dim), np.float32)
        self.next_obs = np.empty((n, obs_dim), np.float32)
        self.action = np.empty(n, np.int64)
        self.reward = np.empty((n, int(reward_dim) if self.vector else 1), np.float32)
        self.terminated = np.empty((n, 1), bool)
        self.truncated = np.empty((n, 1), bool)
        self._current, _ = env.reset(seed=seed)
        self._episode_return = 0.0

    def collect(
        self,
        policy: Callable[[torch.Tensor], torch.Tensor],
        explore: np.random.Generator,
        *,
        uniform: bool,
        epsilon: float,
    ) -> tuple[TensorDict, list[tuple[int, float]]]:
        """One round: ``frames_per_batch`` steps, uniformly random or epsilon-greedy in ``policy``.

        Args:
            policy: online Q-values ``Tensor[obs_dim] -> Tensor[num_actions]`` (called under
                ``torch.inference_mode``).
            explore: the exploration stream (one ``random()`` per epsilon-greedy step, one
                ``integers`` per random action).
            uniform: every action uniformly random (no ``random()`` draw).
            epsilon: probability of a random action otherwise.

        Returns:
            ``(transitions, finished)``: ``TensorDict[frames_per_batch]`` with ``"observation"``,
            ``"action"`` and ``"next"`` (``"observation"``, ``"reward"``, ``"terminated"``,
            ``"truncated"``, ``"done"``, each ``[n, 1]`` but the observation), and one ``(env step,
            episode return)`` per episode that ended in the round.
        """
        finished: list[tuple[int, float]] = []
        with torch.inference_mode():
            for i in range(self.obs.shape[0]):
                self.obs[i] = self._current
                if uniform or explore.random() < epsilon:
                    action = int(explore.integers(self.num_actions))
                else:
                    action = int(policy(torch.from_numpy(self.obs[i]).to(self.device)).argmax())
                next_obs, reward, terminated, truncated, info = self.env.step(action)
                self.action[i] = action
                self.reward[i] = info["vector_reward"] if self.vector else reward
                self.next_obs[i], self.terminated[i, 0], self.truncated[i, 0] = (
                    next_obs,
                    terminated,
                    truncated,
                )
                self._episode_return += float(reward)
                if terminated or truncated:
                    finished.append((self.frames + i + 1, self._episode_return))
                    self._episode_return = 0.0
                    self._current, _ = self.env.reset()
                else:
                    self._current = next_obs
        self.frames += self.obs.shape[0]
        return self._transitions(), finished

    def _transitions(self) -> TensorDict:
        terminated, truncated = torch.from_numpy(self.terminated), torch.from_numpy(self.truncated)
        return TensorDict(
            {
                "observation": torch.from_numpy(self.obs),
                "action": torch.from_numpy(self.action),
                "next": {
                    "observation": torch.from_numpy(self.next_obs),
                    "reward": torch.from_numpy(self.reward),
                    "terminated": terminated,
                    "truncated": truncated,
                    "done": terminated | truncated,
                },
            },
            batch_size=[self.obs.shape[0]],
        )

    def close(self) -> None:
        """Close the environment."""
        self.env.close()


def minibatches(
    batch: TensorDict, num_updates: int, batch_size: int, *, vector_reward: bool = False
) -> Iterator[tuple[torch.Tensor, ...]]:
    """Cut one replay draw of ``num_updates * batch_size`` rows into the round's minibatches.

    Drawing the rows of all updates at once, uniformly with replacement, has the law of one draw
    per update.

    Yields:
        ``(obs Tensor[b, obs_dim], action Tensor[b] int64, next_obs Tensor[b, obs_dim],
        reward Tensor[b] float, done Tensor[b] float)`` with ``b = batch_size``; ``done`` is the
        termination flag (a truncated episode still bootstraps). With ``vector_reward`` the reward is
        ``Tensor[b, K]`` (the per-source rewards).
    """
    obs, action = batch.get("observation"), batch.get("action")
    next_obs = batch.get(("next", "observation"))
    reward = batch.get(("next", "reward"))
    reward = reward if vector_reward else reward.reshape(-1)
    done = batch.get(("next", "terminated")).reshape(-1).float()
    for u in range(num_updates):
        rows = slice(u * batch_size, (u + 1) * batch_size)
        yield obs[rows], action[rows], next_obs[rows], reward[rows], done[rows]


class TrainingRecord:
    """The history of a DQN run and the average of each update's diagnostics.

    Args:
        log_every: updates per logging interval.
        progress: the stage's progress (``log`` receives each finished episode and logged update).
        epsilon: the exploration schedule ``frames -> epsilon``, logged with each logged update.

    ``history`` has ``env_step``/``episode_return`` (one entry per finished episode) and
    ``update_step``/``loss``/``q_mean`` (the update that closes each interval); :meth:`averages`
    adds one entry per interval for each ``info`` key of the updates.
    """

    def __init__(self, log_every: int, progress: Any, epsilon: Callable[[int], float]) -> None:
        self.log_every, self.progress, self.epsilon = int(log_every), progress, epsilon
        self.updates = 0
        self.history: dict[str, list] = {
            "env_step": [],
            "episode_return": [],
            "update_step": [],
            "loss": [],
            "q_mean": [],
        }
        self._info: dict[str, list[torch.Tensor]] = {}

    def episodes(self, finished: list[tuple[int, float]]) -> None:
        """Record the episodes that ended: ``(env step, return in reward units)`` each."""
        for step, ret in finished:
            self.history["env_step"].append(step)
            self.history["episode_return"].append(ret)
            self.progress.log(step, episode_return=ret)

    def update(self, frames: int, loss: torch.Tensor, q_taken: torch.Tensor, info: dict[str, Any]) -> None:
        """Record one update made after ``frames`` environment steps.

        ``info`` values (0-d tensors) are kept without synchronising; every ``log_every``-th update
        also records its loss and mean ``q_taken`` (as floats) and logs them with the epsilon.
        """
        self.updates += 1
        for key, value in info.items():
            self._info.setdefault(key, []).append(value.detach())
        if self.updates % self.log_every == 0:
            loss_v, q_mean = float(loss.detach()), float(q_taken.detach().mean())
            self.history["update_step"].append(frames)
            self.history["loss"].append(loss_v)
            self.history["q_mean"].append(q_mean)
            self.progress.log(frames, loss=loss_v, q_mean=q_mean, epsilon=self.epsilon(frames))

    def info(
        self, *, env_steps: int, seconds: float, gamma: float, num_actions: int, obs_dim: int
    ) -> dict[str, Any]:
        """``Fitted.info``: the run's counts, timing and sizes, then each ``info`` key's mean over updates.

        Raises:
            RuntimeError: an update ``info`` key is a history key or one of the names here.
        """
        info = {
            "env_steps": env_steps,
            "updates": self.updates,
            "seconds": seconds,
            "gamma": gamma,
            "num_actions": num_actions,
            "obs_dim": obs_dim,
            "episodes": len(self.history["episode_return"]),
        }
        means = self.averages()
        if clash := sorted(set(info) & set(means)):
            raise RuntimeError(f"update info keys {clash} collide with Fitted.info's own keys")
        return info | means

    def averages(self) -> dict[str, float]:
        """Add each ``info`` key's interval means to ``history``; return its mean over all updates.

        ``history[key][k]`` is the mean over updates ``k * log_every + 1 .. (k + 1) * log_every``
        (aligned with ``history["update_step"]``; a last partial interval has no entry), in float64.

        Returns:
            ``{key: mean over every update}`` (float64; the partial interval included).

        Raises:
            RuntimeError: an ``info`` key is one of the history's own keys.
        """
        blocks, every, means = len(self.history["update_step"]), self.log_every, {}
        for key, values in self._info.items():
            if key in self.history:
                raise RuntimeError(f"update info key '{key}' collides with the history key of that name")
            per_update = torch.stack(values).double().cpu().numpy()  # kept on the training device
            self.history[key] = [float(per_update[k * every : (k + 1) * every].mean()) for k in range(blocks)]
            means[key] = float(per_update.mean())
        return means
