"""Offline RL data from a finite MDP: an epsilon-greedy behaviour policy, coverage, Monte-Carlo return laws.

- :func:`epsilon_greedy`: the action probabilities ``ndarray[S, A]`` of ``epsilon``-greedy around a
  deterministic policy (optionally never taking one action: a behaviour without coverage).
- :func:`collect_offline`: episodes of a behaviour policy from the start state of a
  :class:`~quadriga_std.rl.tabular.TabularMDP` (Gaussian reward noise included), cut to
  ``num_transitions`` transitions; an :class:`OfflineData` keeps the per-``(s, a)`` counts with them.
- :func:`discounted_occupancy` and :func:`coverage`: the target policy's discounted state-action
  occupancy from the start state, and how well a data set covers it (the minimum count over the
  pairs the target visits, the estimated concentrability ``max d^pi / d^mu``).
- :func:`monte_carlo_return_law`: discounted returns of a policy from the start state by vectorised
  rollouts of the exact model (the reference law of distributional off-policy evaluation).
- :class:`OfflineRLDataset` (``offline-rl-dataset``): the task that ties them together for an
  Environment with ``tabular()``.

Episodes end on a terminal state (``terminated``) or at ``horizon`` steps (truncated: the next state
is not terminal, a learner bootstraps from it). Rewards are the scalar (summed) reward.

Source: Levine, Kumar, Tucker & Fu 2020, "Offline Reinforcement Learning: Tutorial, Review, and
Perspectives", Section 2 (behaviour policy, data distribution ``d^mu``); Chen & Jiang 2019
(concentrability coefficient ``max d^pi / d^mu``, Assumption 1); Sutton & Barto 2018, Section 5.1
(Monte-Carlo prediction).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import Dataset, Environment, param
from quadriga.components import as_component
from quadriga.errors import ConfigError
from quadriga.validators import int_at_least, optional, positive_int, probability

__all__ = [
    "OfflineData",
    "OfflineRLDataset",
    "collect_offline",
    "coverage",
    "discounted_occupancy",
    "epsilon_greedy",
    "monte_carlo_return_law",
]


def epsilon_greedy(
    policy: np.ndarray, num_actions: int, epsilon: float, *, omit_action: int | None = None
) -> np.ndarray:
    """Action probabilities of ``epsilon``-greedy around a deterministic policy.

    ``mu(a | s) = (1 - epsilon) [a = policy(s)] + epsilon / A``; with ``omit_action`` that action's
    probability is set to 0 in every state and each row renormalised (a behaviour that does not
    cover a target which takes it).

    Args:
        policy: ``ndarray[S]`` int actions.
        num_actions: ``A``.
        epsilon: in [0, 1].
        omit_action: an action never taken, or ``None``.

    Returns:
        ``ndarray[S, A]`` rows summing to 1.

    Raises:
        ValueError: ``epsilon`` outside [0, 1], ``omit_action`` out of range, or a row left empty
            (``epsilon = 0`` and the greedy action omitted).
    """
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"epsilon must lie in [0, 1], got {epsilon}")
    pol = np.asarray(policy, int)
    probs = np.full((pol.size, num_actions), epsilon / num_actions)
    probs[np.arange(pol.size), pol] += 1.0 - epsilon
    if omit_action is not None:
        if not 0 <= omit_action < num_actions:
            raise ValueError(f"omit_action must be in [0, {num_actions}), got {omit_action}")
        probs[:, omit_action] = 0.0
        total = probs.sum(-1, keepdims=True)
        if np.any(total <= 0):
            raise ValueError("omitting the action leaves a state with no action; raise epsilon")
        probs = probs / total
    return probs


@dataclass(frozen=True)
class OfflineData:
    """Transitions of a behaviour policy, with the per-``(s, a)`` counts.

    Attributes:
        s, a: ``ndarray[n]`` int state and action indices.
        r: ``ndarray[n]`` float scalar rewards (reward units, noise included).
        s_next: ``ndarray[n]`` int next states.
        terminated: ``ndarray[n]`` bool: ``s_next`` is terminal (its return is 0). A transition cut
            by the horizon is not terminated.
        counts: ``ndarray[S, A]`` int, visits of each pair in the data.
        behaviour: ``ndarray[S, A]`` the behaviour policy's action probabilities.
        first: ``ndarray[n]`` bool: the transition begins an episode (at the initial state).
    """

    s: np.ndarray
    a: np.ndarray
    r: np.ndarray
    s_next: np.ndarray
    terminated: np.ndarray
    counts: np.ndarray
    behaviour: np.ndarray
    first: np.ndarray

    @property
    def num_episodes(self) -> int:
        """Episodes begun (the last may be cut short by ``n``)."""
        return int(self.first.sum())

    def __len__(self) -> int:
        """``n``, the number of transitions."""
        return int(self.s.size)

    def head(self, n: int) -> OfflineData:
        """The first ``n`` transitions (their counts recomputed): a data set of size ``n``.

        Raises:
            ValueError: ``n`` larger than the data or below 1.
        """
        if not 1 <= n <= len(self):
            raise ValueError(f"head(n) needs 1 <= n <= {len(self)}, got {n}")
        counts = np.zeros_like(self.counts)
        np.add.at(counts, (self.s[:n], self.a[:n]), 1)
        return OfflineData(
            self.s[:n],
            self.a[:n],
            self.r[:n],
            self.s_next[:n],
            self.terminated[:n],
            counts,
            self.behaviour,
            self.first[:n],
        )

    def as_array(self) -> np.ndarray:
        """``ndarray[n, 5]`` columns ``s, a, r, s_next, terminated`` (floats)."""
        return np.stack([self.s, self.a, self.r, self.s_next, self.terminated], axis=1).astype(float)


def _reward_std(mdp: Any) -> np.ndarray:
    """``ndarray[S, A]`` standard deviation of the summed reward noise (0 without noise)."""
    if mdp.reward_cov is None:
        return np.zeros((mdp.num_states, mdp.num_actions))
    return np.sqrt(np.clip(mdp.reward_cov.sum((-1, -2)), 0.0, None))


def collect_offline(
    mdp: Any, behaviour: np.ndarray, num_transitions: int, rng: np.random.Generator, *, horizon: int = 100
) -> OfflineData:
    """Episodes of ``behaviour`` from ``mdp.initial_state``, cut to ``num_transitions`` transitions.

    Each step draws ``a ~ behaviour(. | s)``, ``s' ~ P(. | s, a)`` and the summed reward
    ``r = sum_k R[s, a, k] + noise`` (Gaussian with variance ``1^T reward_cov[s, a] 1``). An episode
    ends on a terminal ``s'`` or after ``horizon`` steps; the next one starts at the initial state.
    The draws are made in order, so the first ``m`` transitions of a collection of ``n > m`` with
    the same stream are the collection of ``m`` (data sets of growing size are nested).

    Args:
        mdp: a :class:`~quadriga_std.rl.tabular.TabularMDP`.
        behaviour: ``ndarray[S, A]`` action probabilities.
        num_transitions: ``n``.
        rng: the sampling stream.
        horizon: the episode time limit (steps).

    Returns:
        :class:`OfflineData`.

    Raises:
        ValueError: ``behaviour`` of the wrong shape or with rows not summing to 1; ``n < 1``.
    """
    S, A = mdp.num_states, mdp.num_actions
    beh = np.asarray(behaviour, float)
    if beh.shape != (S, A) or not np.allclose(beh.sum(-1), 1.0):
        raise ValueError(f"behaviour must be [S, A] = [{S}, {A}] probabilities, got shape {beh.shape}")
    if num_transitions < 1:
        raise ValueError(f"num_transitions must be >= 1, got {num_transitions}")
    n = int(num_transitions)
    act_cdf, next_cdf = beh.cumsum(-1), mdp.P.cumsum(-1)
    mean_r = mdp.R.sum(-1)
    sd_r = _reward_std(mdp)
    from scipy.special import ndtri

    u = rng.random((n, 3))  # one row per step, so collections of growing n are nested
    u_a, u_s, eps = u[:, 0], u[:, 1], ndtri(np.clip(u[:, 2], 1e-300, None))
    s_arr, a_arr, s2_arr = np.empty(n, int), np.empty(n, int), np.empty(n, int)
    term, first = np.zeros(n, bool), np.zeros(n, bool)
    s, t = int(mdp.initial_state), 0
    for i in range(n):
        first[i] = t == 0
        a = min(int(np.searchsorted(act_cdf[s], u_a[i], side="right")), A - 1)
        s2 = min(int(np.searchsorted(next_cdf[s, a], u_s[i], side="right")), S - 1)
        s_arr[i], a_arr[i], s2_arr[i] = s, a, s2
        term[i] = bool(mdp.terminal[s2])
        t += 1
        if term[i] or t >= horizon:
            s, t = int(mdp.initial_state), 0
        else:
            s = s2
    r = mean_r[s_arr, a_arr] + sd_r[s_arr, a_arr] * eps
    counts = np.zeros((S, A), int)
    np.add.at(counts, (s_arr, a_arr), 1)
    return OfflineData(s_arr, a_arr, r, s2_arr, term, counts, beh, first)


def discounted_occupancy(mdp: Any, policy: np.ndarray, gamma: float) -> np.ndarray:
    """Normalised discounted state-action occupancy of ``policy`` from the start state.

    ``d(s, a) = (1 - gamma) sum_t gamma^t Pr(s_t = s, a_t = a)``, by one linear solve
    ``d_S = (1 - gamma) (I - gamma P_pi^T)^-1 e_{s0}``, ``d(s, a) = d_S(s) pi(a | s)``; terminal
    states carry no mass (the process stops there), so ``d`` sums to at most 1.

    Args:
        mdp: a :class:`~quadriga_std.rl.tabular.TabularMDP`.
        policy: ``ndarray[S, A]`` action probabilities (or ``ndarray[S]`` actions).
        gamma: discount in [0, 1).

    Returns:
        ``ndarray[S, A]``.

    Source: Puterman 1994, Section 6.9 (the dual linear program's occupancy measures).
    """
    S, A = mdp.num_states, mdp.num_actions
    pi = np.asarray(policy)
    pi = np.eye(A)[pi.astype(int)] if pi.ndim == 1 else pi.astype(float)
    live = ~mdp.terminal
    pi = pi * live[:, None]
    P_pi = np.einsum("sa,sat->st", pi, mdp.P)
    e0 = np.zeros(S)
    e0[mdp.initial_state] = 1.0
    d_s = (1 - gamma) * np.linalg.solve(np.eye(S) - gamma * P_pi.T, e0)
    return d_s[:, None] * pi


def coverage(counts: np.ndarray, occupancy: np.ndarray, *, tol: float = 1e-10) -> dict[str, float]:
    """How well data with ``counts`` covers a target whose occupancy is ``occupancy`` (both ``[S, A]``).

    Returns:
        ``min_target_count``: the smallest count over the pairs the target visits
        (``occupancy > tol``); ``uncovered_pairs``: how many of them have no data;
        ``target_pairs``: how many it visits; ``uncovered_mass``: the target's occupancy on the
        pairs without data (the part of its law the data cannot inform); ``concentrability``:
        ``max d^pi(s, a) / d^mu(s, a)`` over them with ``d^mu = counts / n`` (``inf`` when a pair
        is uncovered).

    Source: Chen & Jiang 2019, "Information-Theoretic Considerations in Batch RL", Assumption 1.
    """
    support = occupancy > tol
    c = counts[support]
    n = max(int(counts.sum()), 1)
    d_mu = c / n
    with np.errstate(divide="ignore"):
        ratio = np.where(d_mu > 0, occupancy[support] / np.maximum(d_mu, 1e-300), np.inf)
    return {
        "min_target_count": float(c.min()) if c.size else 0.0,
        "uncovered_pairs": float(np.sum(c == 0)),
        "target_pairs": float(c.size),
        "uncovered_mass": float(occupancy[support][c == 0].sum()),
        "concentrability": float(ratio.max()) if c.size else float("inf"),
    }


def monte_carlo_return_law(
    mdp: Any,
    policy: np.ndarray,
    gamma: float,
    num_episodes: int,
    rng: np.random.Generator,
    *,
    tol: float = 1e-4,
) -> np.ndarray:
    """Discounted returns ``G = sum_t gamma^t r_t`` of ``num_episodes`` rollouts from the start state.

    All episodes run together (vectorised); each stops at a terminal state, and all stop after
    ``tail_steps(gamma, tol)`` steps (``gamma^T < tol``, so the cut changes a return by less than
    ``tol max|r| / (1 - gamma)``). Rewards are summed and noisy as in :func:`collect_offline`.

    Args:
        mdp: a :class:`~quadriga_std.rl.tabular.TabularMDP`.
        policy: ``ndarray[S, A]`` action probabilities (or ``ndarray[S]`` actions).
        gamma: discount in [0, 1).
        num_episodes: rollouts.
        rng: the sampling stream.
        tol: the discount weight below which the rollouts stop.

    Returns:
        ``ndarray[num_episodes]`` (return units).
    """
    from quadriga_std.rl.returns import tail_steps

    S, A = mdp.num_states, mdp.num_actions
    pi = np.asarray(policy)
    pi = np.eye(A)[pi.astype(int)] if pi.ndim == 1 else pi.astype(float)
    act_cdf, next_cdf = pi.cumsum(-1), mdp.P.cumsum(-1)
    mean_r, sd_r = mdp.R.sum(-1), _reward_std(mdp)
    s = np.full(num_episodes, int(mdp.initial_state))
    alive = ~mdp.terminal[s]
    g = np.zeros(num_episodes)
    disc = 1.0
    for _ in range(tail_steps(gamma, tol)):
        if not alive.any():
            break
        a = np.minimum((rng.random((num_episodes, 1)) > act_cdf[s]).sum(-1), A - 1)
        s2 = np.minimum((rng.random((num_episodes, 1)) > next_cdf[s, a]).sum(-1), S - 1)
        r = mean_r[s, a] + sd_r[s, a] * rng.standard_normal(num_episodes)
        g += np.where(alive, disc * r, 0.0)
        disc *= gamma
        s = s2
        alive &= ~mdp.terminal[s]
    return g


@attrs.define(kw_only=True, slots=False)  # prepare() caches the data on the instance
class OfflineRLDataset(Dataset):
    """Task: offline data of an epsilon-greedy behaviour around a target policy, on a finite MDP.

    The ``environment`` (any Environment task with ``tabular()``, e.g. ``vector-reward-chain``)
    gives the exact model. The target policy is ``target_epsilon``-greedy on ``Q*`` (value
    iteration at ``gamma``); the behaviour is ``behaviour_epsilon``-greedy around the same greedy
    policy, optionally never taking ``omit_action`` (then it need not cover the target).

    ``prepare`` collects ``num_transitions`` transitions (:func:`collect_offline`) with the task's
    stream: ``split("train")`` gives ``(X ndarray[n, 5] = s, a, r, s', terminated, None)`` and
    :meth:`offline` the :class:`OfflineData`. An estimator that wants fresh paired data per
    replicate calls :meth:`collect` with its own stream. :meth:`target_policy`,
    :meth:`coverage_of` and :meth:`reference_returns` give what an evaluator compares with.

    Shapes:
        States and actions are indices; policies ``ndarray[S, A]``; returns ``ndarray[m]``.

    Units:
        Rewards in the environment's reward units; returns discounted by ``gamma`` per step.

    Raises:
        ConfigError: an environment without ``tabular()``; ``omit_action`` out of range.

    Source: see the module docstring (Levine et al. 2020, Section 2; Chen & Jiang 2019).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}

    environment: Environment = param(
        factory=lambda: {
            "use": "vector-reward-chain",
            "num_sources": 1,
            "goal_reward": [1.0],
            "step_reward": [0.0],
        },
        doc="an Environment with tabular() (default: the one-source vector-reward-chain)",
        converter=as_component(Environment),
    )
    num_transitions: int = param(1000, doc="transitions collected by prepare()", validator=positive_int)
    behaviour_epsilon: float = param(0.5, doc="epsilon of the behaviour policy", validator=probability)
    target_epsilon: float = param(0.1, doc="epsilon of the target policy", validator=probability)
    gamma: float = param(0.9, doc="discount of the target's Q* and of the occupancy", validator=probability)
    horizon: int = param(100, doc="episode time limit of the collection (steps)", validator=positive_int)
    omit_action: int | None = param(
        None,
        doc="an action the behaviour never takes (None: full support)",
        validator=optional(int_at_least(0)),
    )

    def __attrs_post_init__(self) -> None:
        """Check that the environment has an exact model; raises ConfigError naming the key."""
        self._splits: dict[str, Any] = {}
        self._data: OfflineData | None = None
        self._mdp: Any = None
        if not hasattr(self.environment, "tabular"):
            raise ConfigError(
                f"offline-rl-dataset needs an environment with an exact model (tabular()); "
                f"{type(self.environment).__name__} has none.",
                key="environment",
            )
        if self.gamma >= 1.0:
            raise ConfigError("gamma must be below 1 (value iteration of the target).", key="gamma")

    def mdp(self) -> Any:
        """The exact :class:`~quadriga_std.rl.tabular.TabularMDP` (cached)."""
        if self._mdp is None:
            self._mdp = self.environment.tabular()
        return self._mdp

    def target_policy(self) -> np.ndarray:
        """``ndarray[S, A]``: ``target_epsilon``-greedy on ``Q*`` at ``gamma``."""
        from quadriga_std.rl.tabular import value_iteration

        mdp = self.mdp()
        _, greedy = value_iteration(mdp, self.gamma)
        return epsilon_greedy(greedy, mdp.num_actions, self.target_epsilon)

    def behaviour_policy(self) -> np.ndarray:
        """``ndarray[S, A]``: ``behaviour_epsilon``-greedy around the same greedy policy.

        Raises:
            ConfigError: ``omit_action`` not an action of the environment.
        """
        from quadriga_std.rl.tabular import value_iteration

        mdp = self.mdp()
        if self.omit_action is not None and self.omit_action >= mdp.num_actions:
            raise ConfigError(
                f"omit_action = {self.omit_action}, but the environment has {mdp.num_actions} actions.",
                key="omit_action",
            )
        _, greedy = value_iteration(mdp, self.gamma)
        return epsilon_greedy(greedy, mdp.num_actions, self.behaviour_epsilon, omit_action=self.omit_action)

    def collect(self, num_transitions: int, rng: np.random.Generator) -> OfflineData:
        """Fresh data of ``num_transitions`` transitions from ``rng`` (:func:`collect_offline`)."""
        return collect_offline(
            self.mdp(), self.behaviour_policy(), int(num_transitions), rng, horizon=self.horizon
        )

    def prepare(self, *, generator: Any) -> None:
        """Collect ``num_transitions`` transitions with the task's stream into the ``train`` split."""
        from quadriga.seeding import numpy_rng

        self._data = self.collect(self.num_transitions, numpy_rng(generator))
        self._splits = {"train": self._data.as_array()}

    def offline(self) -> OfflineData:
        """The data collected by ``prepare``.

        Raises:
            ConfigError: ``prepare`` has not run.
        """
        data = self._data
        if data is None:
            raise ConfigError("the dataset has no data yet: call prepare(generator=...) first.")
        return data

    def coverage_of(self, data: OfflineData) -> dict[str, float]:
        """:func:`coverage` of the target policy's occupancy by ``data``."""
        return coverage(data.counts, discounted_occupancy(self.mdp(), self.target_policy(), self.gamma))

    def reference_returns(self, num_episodes: int, rng: np.random.Generator) -> np.ndarray:
        """Monte-Carlo returns ``ndarray[num_episodes]`` of the target (:func:`monte_carlo_return_law`)."""
        return monte_carlo_return_law(self.mdp(), self.target_policy(), self.gamma, int(num_episodes), rng)
