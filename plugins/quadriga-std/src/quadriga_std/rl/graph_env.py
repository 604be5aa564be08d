"""Deterministic discrete environments with exact shortest-path distances (breadth-first search).

A :class:`DeterministicGraph` is a finite deterministic MDP given by its next-state table
``next_state[S, A]`` and an observation per state ``observations[S, d]``; its ground-truth
goal-reaching distance ``D[s, g]`` is the fewest actions from ``s`` to ``g`` (``inf`` when ``g``
cannot be reached), computed by one breadth-first search per start state (:func:`bfs_distances`).
Two builders and their task components:

- :func:`grid_maze` / :class:`GridMaze` (``grid-maze``): a maze drawn in ASCII (``#`` wall, ``.``
  free), actions up, right, down, left (a move into a wall stays); observations are the cell's
  (row, column) scaled to [-1, 1].
- :func:`discretize_mountain_car` / :class:`DiscretizedMountainCar` (``discretized-mountain-car``):
  gymnasium's ``MountainCar-v0`` dynamics (deterministic) on a ``num_positions x num_velocities``
  grid of (position, velocity) cells: from each cell's centre, ``action_repeat`` calls of
  gymnasium's own ``step`` give the next state, whose cell is the next discrete state (the
  paper's setting: ground truth by BFS on the discretized MDP). Observations are the cell
  centre scaled to [-1, 1]. Its distances are asymmetric (a quasimetric), unlike the maze's.

:class:`GraphEnv` is the gymnasium environment over a graph (``Discrete(A)`` actions, ``Box(d)``
observations, uniform random start state, no reward and no termination: goals come from
:class:`~quadriga_std.rl.goals.GoalConditioned`). Nothing here imports torch.

Sources: Moore 1959 / Cormen et al. 2009, Section 22.2 (breadth-first search); Moore 1990 and
gymnasium's ``MountainCarEnv`` (the dynamics); Wang, Torralba, Isola & Zhang 2023, "Optimal
Goal-Reaching Reinforcement Learning via Quasimetric Learning" (ICML), the discretized
MountainCar analysis with BFS ground truth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import attrs
import gymnasium
import numpy as np

from quadriga import Environment, param
from quadriga.errors import ConfigError
from quadriga.validators import int_at_least, positive_int

__all__ = [
    "DEFAULT_MAZE",
    "DeterministicGraph",
    "DiscretizedMountainCar",
    "GraphEnv",
    "GridMaze",
    "bfs_distances",
    "discretize_mountain_car",
    "grid_maze",
]

#: The default maze (9 x 11 cells inside the wall): 61 free cells, dead ends, diameter 34 steps.
DEFAULT_MAZE = (
    "#############",
    "#.....#.....#",
    "#.###.#.###.#",
    "#.#...#...#.#",
    "#.#.#####.#.#",
    "#.#.....#...#",
    "#.#####.###.#",
    "#...#.....#.#",
    "###.#.###.#.#",
    "#.....#.....#",
    "#############",
)


def bfs_distances(next_state: np.ndarray) -> np.ndarray:
    """Fewest actions between every pair of states of a deterministic graph, by breadth-first search.

    Args:
        next_state: ``ndarray[S, A]`` int, the state reached by action ``a`` from ``s``.

    Returns:
        ``ndarray[S, S]`` float: ``D[s, g]`` steps (0 on the diagonal, ``inf`` when unreachable).

    Raises:
        ValueError: ``next_state`` is not ``[S, A]`` or holds an index outside ``[0, S)``.

    Source: breadth-first search (Cormen et al. 2009, Section 22.2), one per start state, each
    level expanded at once over the adjacency matrix.
    """
    nxt = np.asarray(next_state)
    if nxt.ndim != 2 or nxt.size == 0 or nxt.min() < 0 or nxt.max() >= nxt.shape[0]:
        raise ValueError(f"next_state must be [S, A] with entries in [0, S), got shape {nxt.shape}")
    S = nxt.shape[0]
    adj = np.zeros((S, S), bool)
    adj[np.repeat(np.arange(S), nxt.shape[1]), nxt.ravel()] = True
    dist = np.full((S, S), np.inf)
    frontier = np.eye(S, dtype=bool)  # row s: the states first reached at the current level
    seen = frontier.copy()
    level = 0
    while frontier.any():
        dist[frontier] = level
        reached = (frontier.astype(np.int32) @ adj.astype(np.int32)) > 0
        frontier = reached & ~seen
        seen |= frontier
        level += 1
    return dist


@dataclass(frozen=True)
class DeterministicGraph:
    """A deterministic finite MDP: ``next_state[S, A]`` and ``observations[S, d]`` (float32).

    Attributes:
        next_state: ``ndarray[S, A]`` int.
        observations: ``ndarray[S, d]`` float32, one observation per state (distinct rows).
        name: a label for reports.

    Raises:
        ValueError: shapes disagree, or an index lies outside ``[0, S)``.
    """

    next_state: np.ndarray
    observations: np.ndarray
    name: str = "graph"

    def __post_init__(self) -> None:
        nxt, obs = np.asarray(self.next_state), np.asarray(self.observations)
        if nxt.ndim != 2 or obs.ndim != 2 or obs.shape[0] != nxt.shape[0]:
            raise ValueError(f"next_state [S, A] and observations [S, d] disagree: {nxt.shape}, {obs.shape}")
        if nxt.min() < 0 or nxt.max() >= nxt.shape[0]:
            raise ValueError("next_state holds an index outside [0, S)")

    @property
    def num_states(self) -> int:
        """``S``."""
        return int(self.next_state.shape[0])

    @property
    def num_actions(self) -> int:
        """``A``."""
        return int(self.next_state.shape[1])

    def distances(self) -> np.ndarray:
        """``ndarray[S, S]`` shortest steps ``D[s, g]`` (:func:`bfs_distances`; ``inf`` if unreachable)."""
        return bfs_distances(self.next_state)

    def random_walks(
        self, num_walks: int, length: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """Trajectories of the uniform random policy from uniform random start states.

        Returns:
            ``(states ndarray[num_walks, length + 1] int, actions ndarray[num_walks, length] int)``:
            ``states[:, t + 1] = next_state[states[:, t], actions[:, t]]``.
        """
        states = np.empty((num_walks, length + 1), np.int64)
        actions = rng.integers(0, self.num_actions, (num_walks, length))
        states[:, 0] = rng.integers(0, self.num_states, num_walks)
        for t in range(length):
            states[:, t + 1] = self.next_state[states[:, t], actions[:, t]]
        return states, actions


def grid_maze(layout: tuple[str, ...] | list[str] = DEFAULT_MAZE) -> DeterministicGraph:
    """The maze drawn by ``layout`` (rows of ``#`` wall and ``.`` free) as a :class:`DeterministicGraph`.

    States are the free cells in row-major order; actions 0..3 move up, right, down, left (a move
    into a wall or off the grid stays). Observations ``[row, col]`` scaled to [-1, 1].

    Raises:
        ValueError: rows of unequal length, a character other than ``#`` and ``.``, no free cell.
    """
    rows = [str(r) for r in layout]
    if not rows or len({len(r) for r in rows}) != 1 or set("".join(rows)) - {"#", "."}:
        raise ValueError("layout must be rows of equal length made of '#' (wall) and '.' (free)")
    free = np.array([[c == "." for c in r] for r in rows])
    cells = np.argwhere(free)
    if cells.size == 0:
        raise ValueError("layout has no free cell")
    index = -np.ones(free.shape, np.int64)
    index[free] = np.arange(len(cells))
    H, W = free.shape
    nxt = np.empty((len(cells), 4), np.int64)
    for k, (r, c) in enumerate(cells):
        for a, (dr, dc) in enumerate(((-1, 0), (0, 1), (1, 0), (0, -1))):
            r2, c2 = r + dr, c + dc
            ok = 0 <= r2 < H and 0 <= c2 < W and free[r2, c2]
            nxt[k, a] = index[r2, c2] if ok else k
    scale = np.array([max(H - 1, 1), max(W - 1, 1)], float)
    obs = (2 * cells / scale - 1).astype(np.float32)
    return DeterministicGraph(next_state=nxt, observations=obs, name="grid-maze")


def discretize_mountain_car(
    num_positions: int = 24, num_velocities: int = 24, action_repeat: int = 4
) -> DeterministicGraph:
    """``MountainCar-v0`` on a ``num_positions x num_velocities`` grid of (position, velocity) cells.

    State ``i * num_velocities + j`` is the cell of position bin ``i`` and velocity bin ``j``
    (equal-width bins over gymnasium's bounds). Its successor under action ``a`` (0 push left,
    1 none, 2 push right) is the cell reached by ``action_repeat`` calls of gymnasium's
    ``MountainCarEnv.step(a)`` from the cell centre (one discrete step is ``action_repeat`` env
    steps: with a single step, a velocity change is smaller than a bin and almost every cell maps
    to itself; 12 x 12 with one step maps every cell to itself). The goal region (position >= 0.5)
    is not absorbing here: distances between any cells are defined. Defaults 24 x 24, repeat 4:
    4 % of (s, a) stay, 66 % of pairs reachable, diameter 39 discrete steps.

    Raises:
        ValueError: fewer than 2 bins on an axis.
    """
    from gymnasium.envs.classic_control.mountain_car import MountainCarEnv

    if num_positions < 2 or num_velocities < 2 or action_repeat < 1:
        raise ValueError("discretize_mountain_car needs at least 2 bins per axis and action_repeat >= 1")
    env = MountainCarEnv()
    space = env.observation_space
    assert isinstance(space, gymnasium.spaces.Box)
    low, high = space.low.astype(float), space.high.astype(float)
    shape = np.array([num_positions, num_velocities])
    width = (high - low) / shape
    ii, jj = np.meshgrid(np.arange(num_positions), np.arange(num_velocities), indexing="ij")
    centres = low + (np.stack([ii.ravel(), jj.ravel()], 1) + 0.5) * width  # [S, 2]

    def cell(x: np.ndarray) -> int:
        k = np.clip(np.floor((x - low) / width).astype(int), 0, shape - 1)
        return int(k[0] * num_velocities + k[1])

    nxt = np.empty((len(centres), 3), np.int64)
    env.reset(seed=0)
    for s, centre in enumerate(centres):
        for a in range(3):
            env.state = centre.copy()
            for _ in range(action_repeat):
                obs, *_ = env.step(a)
            nxt[s, a] = cell(np.asarray(obs, float))
    env.close()
    obs = (2 * (centres - low) / (high - low) - 1).astype(np.float32)
    return DeterministicGraph(next_state=nxt, observations=obs, name="discretized-mountain-car")


class GraphEnv(gymnasium.Env):
    """A gymnasium environment over a :class:`DeterministicGraph`.

    Observations ``Box(d)`` (the state's observation row), actions ``Discrete(A)``; ``reset`` starts
    in a uniform random state (or ``options={"state": s}``); ``step`` returns reward 0, never
    terminates, and ``info["state"]`` the state index.

    Args:
        graph: the graph.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(self, graph: DeterministicGraph) -> None:
        self.graph = graph
        d = graph.observations.shape[1]
        self.observation_space = gymnasium.spaces.Box(-1.0, 1.0, (d,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(graph.num_actions)
        self.state = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """Start in ``options["state"]`` or a uniform random state; returns ``(obs, {"state": s})``."""
        super().reset(seed=seed)
        options = options or {}
        s = options.get("state")
        self.state = int(self.np_random.integers(self.graph.num_states) if s is None else s)
        return self.graph.observations[self.state], {"state": self.state}

    def step(self, action: Any) -> Any:
        """Move along ``next_state``; returns ``(obs, 0.0, False, False, {"state": s'})``."""
        self.state = int(self.graph.next_state[self.state, int(action)])
        return self.graph.observations[self.state], 0.0, False, False, {"state": self.state}


class _GraphTask(Environment):
    """Shared surface of the graph tasks: ``graph()``, ``make()``, ``time_limit``."""

    max_episode_steps: int

    def prepare(self, *, generator: Any) -> None:
        """Nothing to prepare (the graph is built on use); draws nothing."""

    def graph(self) -> DeterministicGraph:
        """The :class:`DeterministicGraph`."""
        raise NotImplementedError

    def make(self, **overrides: Any) -> Any:
        """A new ``TimeLimit(GraphEnv)``; ``max_episode_steps`` may be overridden."""
        limit = int(overrides.pop("max_episode_steps", None) or self.max_episode_steps)
        if overrides:
            raise ConfigError(
                f"this environment takes no make() overrides {sorted(overrides)}.", key="kwargs"
            )
        return gymnasium.wrappers.TimeLimit(GraphEnv(self.graph()), max_episode_steps=limit)

    @property
    def time_limit(self) -> int:
        """The episode time limit (env steps)."""
        return int(self.max_episode_steps)


def _layout(instance: Any, attribute: Any, value: Any) -> None:
    try:
        grid_maze(tuple(value))
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            f"layout must be a list of equal-length strings of '#' and '.', got {value!r} ({exc}).",
            key="layout",
        ) from None


@attrs.define(kw_only=True)
class GridMaze(_GraphTask):
    """Task: a grid maze (:func:`grid_maze`) with BFS ground-truth distances.

    ``graph()`` returns the :class:`DeterministicGraph`, ``graph().distances()`` the exact steps
    ``ndarray[S, S]``; ``make()`` a ``TimeLimit(GraphEnv)``.

    Shapes:
        Observations ``ndarray[2]`` (row, column in [-1, 1]); actions ``int`` in {0, 1, 2, 3}.

    Units:
        Distances in environment steps; the default maze has 61 cells and diameter 34 steps.

    Raises:
        ConfigError: a layout that is not rows of equal length of ``#`` and ``.``.

    Source: the grid mazes of goal-reaching RL (e.g. Eysenbach et al. 2019, SoRB; Wang et al. 2023,
    QRL); BFS ground truth (Cormen et al. 2009, Section 22.2).
    """

    layout: list[str] = param(
        factory=lambda: list(DEFAULT_MAZE), doc="rows of '#' (wall) and '.' (free)", validator=_layout
    )
    max_episode_steps: int = param(100, doc="time limit per episode (env steps)", validator=positive_int)

    def graph(self) -> DeterministicGraph:
        """The maze as a :class:`DeterministicGraph`."""
        return grid_maze(tuple(self.layout))


@attrs.define(kw_only=True)
class DiscretizedMountainCar(_GraphTask):
    """Task: ``MountainCar-v0`` discretized (:func:`discretize_mountain_car`) with BFS distances.

    Shapes:
        Observations ``ndarray[2]`` (position and velocity of the cell centre in [-1, 1]); actions
        ``int`` in {0, 1, 2}; ``num_positions * num_velocities`` states.

    Units:
        Distances in discrete steps of ``action_repeat`` environment steps (asymmetric: a quasimetric).

    Raises:
        ConfigError: fewer than 2 bins per axis.

    Source: gymnasium ``MountainCarEnv`` (Moore 1990); the discretized MountainCar of Wang et al.
    2023 (QRL), where distances are compared with BFS on the discretized MDP.
    """

    num_positions: int = param(24, doc="position bins", validator=int_at_least(2))
    num_velocities: int = param(24, doc="velocity bins", validator=int_at_least(2))
    action_repeat: int = param(4, doc="gymnasium steps per discrete step", validator=positive_int)
    max_episode_steps: int = param(200, doc="time limit per episode (env steps)", validator=positive_int)

    def graph(self) -> DeterministicGraph:
        """The discretized dynamics as a :class:`DeterministicGraph`."""
        return discretize_mountain_car(self.num_positions, self.num_velocities, self.action_repeat)
