"""Finite MDPs with exact answers: value iteration, policy evaluation, a generative-model sampler.

A :class:`TabularMDP` holds the transition kernel ``P[s, a, s']``, the mean reward of each source
``R[s, a, k]`` (``K`` reward sources; the scalar reward is their sum) and, optionally, the
covariance of the reward noise ``reward_cov[s, a, k, l]`` (Gaussian), so that it is a complete
generative model. Terminal states are absorbing with zero reward (their rows are ignored).

Sources: Puterman 1994, "Markov Decision Processes", Section 6.3 (value iteration) and Theorem
6.1.1 (policy evaluation ``(I - gamma P_pi) v = r_pi``); Kearns & Singh 1999 / Azar et al. 2013 for
the generative-model (synchronous) setting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["GenerativeModel", "TabularMDP", "policy_evaluation", "random_mdp", "value_iteration"]


@dataclass(frozen=True)
class TabularMDP:
    """A finite MDP with ``S`` states, ``A`` actions and ``K`` reward sources.

    Attributes:
        P: ``ndarray[S, A, S]`` transition probabilities (rows sum to 1).
        R: ``ndarray[S, A, K]`` mean reward of each source for taking ``a`` in ``s`` (reward units).
        terminal: ``ndarray[S]`` bool; terminal states are absorbing, their value is 0.
        initial_state: the start state (int).
        reward_cov: ``ndarray[S, A, K, K]`` covariance of the Gaussian reward noise, or ``None``
            (deterministic rewards).
        observations: ``ndarray[S, obs_dim]`` the observation of each state (e.g. one-hot), or ``None``.

    Raises:
        ValueError: shapes disagree, or a row of ``P`` does not sum to 1 (within 1e-8).
    """

    P: np.ndarray
    R: np.ndarray
    terminal: np.ndarray
    initial_state: int = 0
    reward_cov: np.ndarray | None = None
    observations: np.ndarray | None = field(default=None)

    def __post_init__(self) -> None:
        S, A = self.P.shape[:2]
        if self.P.shape != (S, A, S) or self.R.shape[:2] != (S, A) or self.R.ndim != 3:
            raise ValueError(f"P must be [S, A, S] and R [S, A, K], got {self.P.shape} and {self.R.shape}")
        if not np.allclose(self.P.sum(-1), 1.0, atol=1e-8):
            raise ValueError("every row P[s, a, :] must sum to 1")
        if self.terminal.shape != (S,):
            raise ValueError(f"terminal must be [S] = [{S}], got {self.terminal.shape}")
        K = self.R.shape[2]
        if self.reward_cov is not None and self.reward_cov.shape != (S, A, K, K):
            raise ValueError(f"reward_cov must be [S, A, K, K], got {self.reward_cov.shape}")

    @property
    def num_states(self) -> int:
        """``S``."""
        return int(self.P.shape[0])

    @property
    def num_actions(self) -> int:
        """``A``."""
        return int(self.P.shape[1])

    @property
    def num_sources(self) -> int:
        """``K``."""
        return int(self.R.shape[2])

    def scalar_rewards(self) -> np.ndarray:
        """``ndarray[S, A]``: the mean summed reward ``sum_k R[s, a, k]`` (zero at terminal states)."""
        return np.where(self.terminal[:, None], 0.0, self.R.sum(-1))

    def _live_P(self) -> np.ndarray:
        """``P`` with terminal rows zeroed (no value flows out of a terminal state)."""
        return np.where(self.terminal[:, None, None], 0.0, self.P)


def value_iteration(
    mdp: TabularMDP, gamma: float, *, tol: float = 1e-10, max_iter: int = 100_000
) -> tuple[np.ndarray, np.ndarray]:
    """Optimal action values of the summed reward by value iteration.

    ``Q_{n+1}(s, a) = r(s, a) + gamma sum_s' P(s' | s, a) max_a' Q_n(s', a')``, stopped when
    ``max |Q_{n+1} - Q_n| < tol (1 - gamma) / (2 gamma)`` (so ``max |Q - Q*| < tol``).

    Args:
        mdp: the MDP (its scalar reward is the sum of the sources).
        gamma: discount in [0, 1).
        tol: accuracy in sup norm (return units).
        max_iter: iteration cap.

    Returns:
        ``(Q*, pi*)``: ``ndarray[S, A]`` (0 at terminal states) and the greedy policy ``ndarray[S]`` (int).

    Raises:
        ValueError: ``gamma`` not in [0, 1); no convergence within ``max_iter``.

    Source: Puterman 1994, Section 6.3.2 (the stopping rule is Theorem 6.3.1's).
    """
    if not 0.0 <= gamma < 1.0:
        raise ValueError(f"value iteration needs gamma in [0, 1), got {gamma}")
    r, P = mdp.scalar_rewards(), mdp._live_P()
    q = np.zeros_like(r)
    stop = tol * (1 - gamma) / (2 * gamma) if gamma > 0 else np.inf
    for _ in range(max_iter):
        q_new = r + gamma * P @ q.max(-1)
        if np.max(np.abs(q_new - q)) < stop:
            return q_new, q_new.argmax(-1)
        q = q_new
    raise ValueError(f"value iteration did not converge in {max_iter} iterations")


def policy_evaluation(mdp: TabularMDP, policy: np.ndarray, gamma: float) -> np.ndarray:
    """Exact per-source action values ``Q^pi[s, a, k]`` of a policy, by one linear solve.

    ``Q^pi_k = R_k + gamma P V^pi_k`` with ``V^pi_k = sum_a pi(a | s) Q^pi_k(s, a)``, i.e.
    ``(I - gamma P_pi) V_k = r_{pi,k}``; the scalar values are the sum over ``k``.

    Args:
        mdp: the MDP.
        policy: ``ndarray[S]`` deterministic actions, or ``ndarray[S, A]`` action probabilities.
        gamma: discount in [0, 1].

    Returns:
        ``ndarray[S, A, K]`` (0 at terminal states).

    Raises:
        numpy.linalg.LinAlgError: ``I - gamma P_pi`` is singular (gamma = 1 with a non-terminating policy).

    Source: Puterman 1994, Theorem 6.1.1.
    """
    S, A = mdp.num_states, mdp.num_actions
    pi = np.eye(A)[np.asarray(policy, int)] if np.asarray(policy).ndim == 1 else np.asarray(policy, float)
    P = mdp._live_P()
    R = np.where(mdp.terminal[:, None, None], 0.0, mdp.R)
    P_pi = np.einsum("sa,sat->st", pi, P)
    r_pi = np.einsum("sa,sak->sk", pi, R)
    v = np.linalg.solve(np.eye(S) - gamma * P_pi, r_pi)  # [S, K]
    return R + gamma * np.einsum("sat,tk->sak", P, v)


class GenerativeModel:
    """Draws ``(s', r)`` for any ``(s, a)``: the generative-model (simulator) access to a :class:`TabularMDP`.

    Args:
        mdp: the MDP (Gaussian reward noise from ``reward_cov`` if given).
        rng: a ``numpy.random.Generator``.

    Source: Kearns & Singh 1999 (phased Q-learning); Azar, Munos & Kappen 2013 (the model).
    """

    def __init__(self, mdp: TabularMDP, rng: np.random.Generator) -> None:
        self.mdp, self.rng = mdp, rng
        self._chol = None if mdp.reward_cov is None else _cholesky(mdp.reward_cov)

    def sample(self, s: Any, a: Any) -> tuple[np.ndarray, np.ndarray]:
        """Next states and reward vectors for index arrays ``s``, ``a`` (same shape ``[...]``).

        Returns:
            ``(s_next ndarray[...] int, r ndarray[..., K])``.
        """
        s, a = np.asarray(s), np.asarray(a)
        cdf = self.mdp.P[s, a].cumsum(-1)
        u = self.rng.random((*s.shape, 1))
        s_next = np.minimum((u > cdf).sum(-1), self.mdp.num_states - 1)
        r = self.mdp.R[s, a].copy()
        if self._chol is not None:
            eps = self.rng.standard_normal(r.shape)
            r = r + np.einsum("...kl,...l->...k", self._chol[s, a], eps)
        return s_next, r

    def sample_all(self) -> tuple[np.ndarray, np.ndarray]:
        """One draw for every pair: ``(s_next ndarray[S, A], r ndarray[S, A, K])`` (synchronous sampling)."""
        s, a = np.meshgrid(np.arange(self.mdp.num_states), np.arange(self.mdp.num_actions), indexing="ij")
        return self.sample(s, a)


def _cholesky(cov: np.ndarray) -> np.ndarray:
    """Factors ``L`` with ``L L^T = cov`` of PSD matrices ``[..., K, K]`` (eigh: singular ones work too)."""
    w, v = np.linalg.eigh(cov)
    return v * np.sqrt(np.clip(w, 0.0, None))[..., None, :]


def random_mdp(
    num_states: int, num_actions: int, rng: np.random.Generator, *, num_sources: int = 1, branching: int = 3
) -> TabularMDP:
    """A random MDP: each ``(s, a)`` moves to ``branching`` random states (Dirichlet(1) weights).

    Mean rewards are uniform on [0, 1] per source; no terminal states; deterministic rewards.

    Returns:
        :class:`TabularMDP` with one-hot observations.
    """
    S, A = num_states, num_actions
    P = np.zeros((S, A, S))
    for s in range(S):
        for a in range(A):
            nxt = rng.choice(S, size=min(branching, S), replace=False)
            P[s, a, nxt] = rng.dirichlet(np.ones(nxt.size))
    R = rng.random((S, A, num_sources))
    return TabularMDP(P=P, R=R, terminal=np.zeros(S, bool), observations=np.eye(S, dtype=np.float32))
