"""The RL kit's graph environments (BFS ground truth), goal wrapper and goal evaluators."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from quadriga_std.rl.goals import GoalConditioned, GoalDistanceCorrelation, GoalSuccess, rollout_success
from quadriga_std.rl.graph_env import (
    DiscretizedMountainCar,
    GraphEnv,
    GridMaze,
    bfs_distances,
    discretize_mountain_car,
    grid_maze,
)
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError


class Oracle:
    """A goal-conditioned model that knows the graph: BFS-greedy actions and exact distances."""

    def __init__(self, graph, sign=1.0):
        self.graph, self.dist, self.sign = graph, graph.distances(), sign
        self.index = {tuple(np.round(o, 6)): i for i, o in enumerate(graph.observations)}

    def _states(self, obs):
        return np.array([self.index[tuple(np.round(o, 6))] for o in np.asarray(obs)])

    def act(self, obs, goal):
        s, g = self._states(obs), self._states(goal)
        return torch.as_tensor(self.dist[self.graph.next_state[s], g[:, None]].argmin(-1))

    def distance(self, obs, goal):
        return torch.as_tensor(self.sign * self.dist[self._states(obs), self._states(goal)])


def test_bfs_on_an_open_grid_is_the_manhattan_distance():
    g = grid_maze(["#######", "#.....#", "#.....#", "#.....#", "#######"])
    rc = np.array([(r, c) for r in range(3) for c in range(5)])
    manhattan = np.abs(rc[:, None] - rc[None]).sum(-1)
    np.testing.assert_array_equal(g.distances(), manhattan)


@pytest.mark.parametrize(
    "graph", [grid_maze(), discretize_mountain_car(10, 10, 8)], ids=["maze", "mountain-car"]
)
def test_bfs_matches_scipy_shortest_path(graph):
    S = graph.num_states
    rows = np.repeat(np.arange(S), graph.num_actions)
    adj = csr_matrix((np.ones(rows.size), (rows, graph.next_state.ravel())), shape=(S, S))
    ref = shortest_path(adj, directed=True, unweighted=True)
    np.testing.assert_array_equal(bfs_distances(graph.next_state), ref)


def test_default_maze_size_and_diameter():
    d = grid_maze().distances()
    assert d.shape == (61, 61) and np.isfinite(d).all() and d.max() == 34
    np.testing.assert_array_equal(d, d.T)  # moves are reversible in a maze


def test_mountain_car_cells_follow_the_closed_form_dynamics():
    n = 12
    graph = discretize_mountain_car(n, n, action_repeat=1)
    low, high = np.array([-1.2, -0.07]), np.array([0.6, 0.07])
    width = (high - low) / n
    rng = np.random.default_rng(0)
    for s in rng.integers(0, n * n, 20):
        x, v = low + (np.array([s // n, s % n]) + 0.5) * width
        for a in range(3):  # Moore 1990 / gymnasium MountainCarEnv.step
            v2 = np.clip(v + (a - 1) * 0.001 - 0.0025 * math.cos(3 * x), -0.07, 0.07)
            x2 = np.clip(x + v2, -1.2, 0.6)
            if x2 == -1.2 and v2 < 0:
                v2 = 0.0
            k = np.clip(np.floor((np.array([x2, v2]) - low) / width).astype(int), 0, n - 1)
            assert graph.next_state[s, a] == k[0] * n + k[1]
    assert (graph.next_state == np.arange(n * n)[:, None]).all()  # one step never leaves a 12 x 12 cell
    d = discretize_mountain_car(n, n, action_repeat=8).distances()
    both = np.isfinite(d) & np.isfinite(d.T)
    assert np.any(both & (d != d.T))  # asymmetric: a quasimetric, not a metric


def test_goal_wrapper_pays_minus_one_and_terminates_at_the_bfs_distance():
    graph = grid_maze()
    env = GoalConditioned(GraphEnv(graph), min_distance=10)
    oracle = Oracle(graph)
    obs, info = env.reset(seed=3)
    start, goal = info["state"], info["goal"]
    assert graph.distances()[start, goal] >= 10 and obs.shape == (4,)
    steps, total, terminated = 0, 0.0, False
    while not terminated:
        a = int(oracle.act(obs[None, :2], obs[None, 2:])[0])
        obs, r, terminated, _, info = env.step(a)
        steps, total = steps + 1, total + r
    assert info["success"] and steps == graph.distances()[start, goal] and total == -steps


def test_oracle_reaches_every_goal_optimally_and_ranks_perfectly():
    task = GridMaze()
    graph = task.graph()
    art = Fitted(model=Oracle(graph))
    gen = torch.Generator().manual_seed(0)
    succ = GoalSuccess(num_pairs=50, horizon=40).evaluate({"o": art}, task, generator=gen).values
    assert succ["o/success_rate"] == 1.0 and succ["o/excess_steps"] == 0.0
    corr = GoalDistanceCorrelation(num_pairs=300).evaluate({"o": art}, task, generator=gen).values
    assert corr["o/spearman"] == pytest.approx(1.0) and corr["o/mean_abs_error"] == 0.0
    neg = GoalDistanceCorrelation(num_pairs=300).evaluate(
        Fitted(model=Oracle(graph, -1.0)), task, generator=gen
    )
    assert neg.values["subject/spearman"] == pytest.approx(-1.0)


def test_a_too_short_budget_fails_far_goals():
    graph = grid_maze()
    d = graph.distances()
    starts, goals = np.nonzero(d == 20)
    success, steps = rollout_success(Oracle(graph), graph, starts[:5], goals[:5], horizon=19)
    assert not success.any() and (steps == 19).all()


def test_bad_inputs_are_named():
    with pytest.raises(ConfigError, match="layout"):
        GridMaze(layout=["#.#", "##"])
    with pytest.raises(ConfigError, match="num_positions"):
        DiscretizedMountainCar(num_positions=1)
    with pytest.raises(ConfigError, match="reference"):
        GoalSuccess().evaluate(Fitted(model=None), None, generator=torch.Generator())
    with pytest.raises(ConfigError, match="act"):
        GoalSuccess().evaluate(Fitted(model=object()), GridMaze(), generator=torch.Generator())
