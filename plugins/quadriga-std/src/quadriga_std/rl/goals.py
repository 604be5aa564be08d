"""Goal-conditioned RL on deterministic graphs: a goal wrapper and two evaluators against BFS.

- :class:`GoalConditioned`: a gymnasium wrapper of :class:`~quadriga_std.rl.graph_env.GraphEnv`
  that draws a goal state at reset, appends the goal's observation to every observation, pays
  reward -1 per step and terminates on reaching the goal (the goal-reaching MDP of Kaelbling 1993).
- :class:`GoalSuccess` (``goal-success``): the fraction of start/goal pairs a goal-conditioned
  policy reaches within a fixed budget of steps, and its excess steps over the BFS optimum.
- :class:`GoalDistanceCorrelation` (``goal-distance-correlation``): Spearman's rank correlation
  and the mean absolute error between a learned distance ``d(s, g)`` and the BFS steps.

A subject is a ``Fitted`` whose ``model`` has ``act(obs, goal) -> Tensor[n]`` (greedy actions,
int64) and/or ``distance(obs, goal) -> Tensor[n]`` (steps), both on ``Tensor[n, d]`` float32
observations of the state and of the goal. Pairs are drawn from the stage's generator (streams
``"pairs"``), the same for every subject, so arms are compared on common pairs; replicates
``name[i]`` are grouped as the other RL evaluators do (``<base>/<metric>_mean``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import gymnasium
import numpy as np

from quadriga import Evaluator, Metrics, named, param
from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError
from quadriga.interfaces import Environment
from quadriga.seeding import child_numpy_rng
from quadriga.validators import int_at_least, positive_int
from quadriga_std.rl.evaluators import group_means
from quadriga_std.rl.graph_env import DeterministicGraph, GraphEnv

__all__ = ["GoalConditioned", "GoalDistanceCorrelation", "GoalSuccess", "rollout_success", "sample_pairs"]


class GoalConditioned(gymnasium.Wrapper):
    """Goal-reaching on a :class:`~quadriga_std.rl.graph_env.GraphEnv`: observation ``[obs, goal_obs]``.

    ``reset`` draws the goal uniformly among the states reachable from the start in at least
    ``min_distance`` steps (or takes ``options={"goal": g}``; a start state by ``options["state"]``);
    ``step`` pays -1 and terminates when the state is the goal; ``info`` carries ``state``, ``goal``
    and ``success``.

    Args:
        env: a ``GraphEnv`` (possibly inside ``TimeLimit``).
        min_distance: the fewest BFS steps between start and a drawn goal (>= 0).

    Raises:
        ValueError: no state is reachable in at least ``min_distance`` steps from the start.

    Source: Kaelbling 1993, "Learning to achieve goals" (IJCAI); Andrychowicz et al. 2017 (HER) for
    the ``[obs, goal]`` observation.
    """

    def __init__(self, env: gymnasium.Env, min_distance: int = 1) -> None:
        super().__init__(env)
        base = env.unwrapped
        if not isinstance(base, GraphEnv):
            raise ValueError(f"GoalConditioned wraps a GraphEnv, got {type(base).__name__}")
        self.graph: DeterministicGraph = base.graph
        self.min_distance = int(min_distance)
        self._dist = self.graph.distances()
        d = self.graph.observations.shape[1]
        self.observation_space = gymnasium.spaces.Box(-1.0, 1.0, (2 * d,), np.float32)
        self.goal = 0

    def _obs(self, obs: np.ndarray) -> np.ndarray:
        return np.concatenate([obs, self.graph.observations[self.goal]]).astype(np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """Reset the inner env and draw (or take) the goal; returns ``([obs, goal_obs], info)``."""
        options = dict(options or {})
        goal = options.pop("goal", None)
        obs, info = self.env.reset(seed=seed, options=options)
        s = info["state"]
        if goal is None:
            ok = np.flatnonzero(np.isfinite(self._dist[s]) & (self._dist[s] >= self.min_distance))
            if ok.size == 0:
                raise ValueError(f"no goal at least {self.min_distance} steps from state {s}")
            goal = ok[self.env.unwrapped.np_random.integers(ok.size)]
        self.goal = int(goal)
        return self._obs(obs), {**info, "goal": self.goal, "success": s == self.goal}

    def step(self, action: Any) -> Any:
        """Step; reward -1, ``terminated`` when the goal is reached."""
        obs, _, _, truncated, info = self.env.step(action)
        success = info["state"] == self.goal
        return self._obs(obs), -1.0, bool(success), truncated, {**info, "goal": self.goal, "success": success}


def sample_pairs(
    dist: np.ndarray, num_pairs: int, rng: np.random.Generator, min_distance: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """Start/goal pairs drawn uniformly (with replacement) among those with ``min_distance <= D < inf``.

    Returns:
        ``(starts ndarray[num_pairs], goals ndarray[num_pairs])`` int.

    Raises:
        ConfigError: no such pair.
    """
    ok = np.argwhere(np.isfinite(dist) & (dist >= min_distance))
    if len(ok) == 0:
        raise ConfigError(f"no start/goal pair is at least {min_distance} steps apart.", key="min_distance")
    pick = ok[rng.integers(0, len(ok), num_pairs)]
    return pick[:, 0], pick[:, 1]


def rollout_success(
    model: Any, graph: DeterministicGraph, starts: np.ndarray, goals: np.ndarray, horizon: int
) -> tuple[np.ndarray, np.ndarray]:
    """Run ``model.act`` from every start towards its goal for at most ``horizon`` steps (batched).

    Returns:
        ``(success ndarray[n] bool, steps ndarray[n] int)``: whether the goal was reached and after
        how many steps (``horizon`` when it was not).
    """
    import torch

    obs = torch.as_tensor(graph.observations)
    s, g = np.array(starts, np.int64), np.asarray(goals, np.int64)
    done = s == g
    steps = np.zeros(len(s), np.int64)
    for _ in range(horizon):
        live = np.flatnonzero(~done)
        if live.size == 0:
            break
        with torch.no_grad():
            a = np.asarray(model.act(obs[s[live]], obs[g[live]]), np.int64)
        s[live] = graph.next_state[s[live], a]
        steps[live] += 1
        done[live] = s[live] == g[live]
    return done, steps


def _graph_of(reference: Any, who: str) -> DeterministicGraph:
    if reference is None or not hasattr(reference, "graph"):
        raise ConfigError(
            f"{who} needs a graph environment as reference (grid-maze, discretized-mountain-car): "
            'inputs = { subject = [...], reference = "<task>" }.',
            key="reference",
        )
    return reference.graph()


def _model(art: Any, name: str, method: str, who: str) -> Any:
    model = getattr(art, "model", None)
    if not callable(getattr(model, method, None)):
        raise ConfigError(
            f"{who}: subject '{name}' has no model.{method}(obs, goal); pass a goal-conditioned learner's "
            "output (e.g. quadriga-qrl's qrl).",
            key="subject",
        )
    return model


_XFAIL = {
    "run": "needs a goal-conditioned learner's Fitted (model.act / model.distance), which quadriga-std "
    "does not register; quadriga-qrl's pipeline and claim tests run it"
}


@attrs.define(kw_only=True)
class GoalSuccess(Evaluator):
    """Goal-reaching success rate of a goal-conditioned policy within a fixed budget of steps.

    ``num_pairs`` start/goal pairs at least ``min_distance`` BFS steps apart (common to every
    subject); each subject's ``model.act`` is rolled out on the reference graph for at most
    ``horizon`` steps (:func:`rollout_success`). Values per subject: ``success_rate`` (fraction
    reached), ``excess_steps`` (mean steps minus the BFS optimum over the reached pairs; 0 for an
    optimal policy; absent when none was reached), ``mean_bfs_distance`` of the pairs;
    ``<base>/<metric>_mean`` over replicates.

    Shapes:
        ``num_pairs`` pairs; every value is a scalar.

    Units:
        Success rate a fraction; excess steps and distances in environment steps.

    Raises:
        ConfigError: a reference without ``graph()``; a subject whose model has no ``act``.

    Source: the success-rate evaluation of goal-conditioned RL (Andrychowicz et al. 2017; Wang et
    al. 2023, QRL, Section 6), with BFS optima (Cormen et al. 2009, Section 22.2).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Fitted,), "reference": (Environment,)}
    check_xfail: ClassVar[dict[str, str]] = _XFAIL

    num_pairs: int = param(100, doc="start/goal pairs drawn", validator=positive_int)
    horizon: int = param(100, doc="step budget per pair (env steps)", validator=positive_int)
    min_distance: int = param(1, doc="fewest BFS steps between start and goal", validator=int_at_least(1))

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """See the class docstring."""
        graph = _graph_of(reference, "goal-success")
        dist = graph.distances()
        starts, goals = sample_pairs(
            dist, self.num_pairs, child_numpy_rng(generator, "pairs"), self.min_distance
        )
        values: dict[str, float] = {}
        subjects = named(subject)
        for name, art in subjects.items():
            model = _model(art, name, "act", "goal-success")
            success, steps = rollout_success(model, graph, starts, goals, self.horizon)
            excess = (steps - dist[starts, goals])[success]
            values[f"{name}/success_rate"] = float(success.mean())
            if excess.size:  # absent when no pair was reached
                values[f"{name}/excess_steps"] = float(excess.mean())
            values[f"{name}/mean_bfs_distance"] = float(dist[starts, goals].mean())
        group_means(values, list(subjects), ["success_rate", "excess_steps"])
        return Metrics(values=values)


@attrs.define(kw_only=True)
class GoalDistanceCorrelation(Evaluator):
    """Rank agreement of a learned goal distance ``d(s, g)`` with the BFS steps ``D(s, g)``.

    On ``num_pairs`` reachable pairs with ``s != g`` (common to every subject): ``spearman``
    (``scipy.stats.spearmanr`` of ``d`` and ``D``), ``mean_abs_error`` ``mean |d - D|`` and
    ``relative_error`` (that over the graph's diameter); ``<base>/<metric>_mean`` over replicates.

    Shapes:
        ``d`` and ``D`` are ``ndarray[num_pairs]``; every value is a scalar.

    Units:
        Spearman unitless in [-1, 1]; errors in environment steps (relative error unitless).

    Raises:
        ConfigError: a reference without ``graph()``; a subject whose model has no ``distance``.

    Source: the distance evaluation of Wang et al. 2023 (QRL), discretized MountainCar analysis
    (learned distance against BFS on the discretized MDP); Spearman 1904.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Fitted,), "reference": (Environment,)}
    check_xfail: ClassVar[dict[str, str]] = _XFAIL

    num_pairs: int = param(2000, doc="reachable start/goal pairs drawn", validator=int_at_least(3))

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """See the class docstring."""
        import torch
        from scipy.stats import spearmanr

        graph = _graph_of(reference, "goal-distance-correlation")
        dist = graph.distances()
        starts, goals = sample_pairs(dist, self.num_pairs, child_numpy_rng(generator, "pairs"))
        true = dist[starts, goals]
        diameter = float(dist[np.isfinite(dist)].max())
        obs = torch.as_tensor(graph.observations)
        values: dict[str, float] = {"diameter": diameter}
        subjects = named(subject)
        for name, art in subjects.items():
            model = _model(art, name, "distance", "goal-distance-correlation")
            with torch.no_grad():
                d = np.asarray(model.distance(obs[starts], obs[goals]), float)
            rho = float(spearmanr(d, true).statistic)
            values[f"{name}/spearman"] = rho if np.isfinite(rho) else 0.0  # a constant d ranks nothing
            values[f"{name}/mean_abs_error"] = float(np.mean(np.abs(d - true)))
            values[f"{name}/relative_error"] = values[f"{name}/mean_abs_error"] / diameter
        group_means(values, list(subjects), ["spearman", "mean_abs_error"])
        return Metrics(values=values)
