"""FLE's baselines on the same data and the same number of iterations.

- :func:`fitted_q_evaluation` / :class:`FQE` (``fqe``): tabular fitted Q evaluation, the mean only
  (Le, Voloshin & Yue 2019, Algorithm 2 with a tabular regressor):
  ``Q_k(s, a) = mean over the (s, a) data of r + gamma (1 - terminated) sum_a' pi(a' | s') Q_{k-1}(s', a')``;
  its "law" is the point mass at ``V(s_0) = sum_a pi(a | s_0) Q_K(s_0, a)``.
- :func:`categorical_evaluation` / :class:`CategoricalFQE` (``categorical-fqe``): the categorical
  distributional fit (C51-style policy evaluation): per cell a probability vector on fixed atoms,
  updated to the mean over the cell's data of the projected target law
  ``Proj[r + gamma (1 - terminated) Z(s', pi)]``, ``Z(s', pi) = sum_a' pi(a' | s') p(s', a')``
  (Bellemare, Dabney & Munos 2017, eq. 7 and Algorithm 1; Rowland et al. 2018, the Cramer
  projection). The target law is the exact mixture (an expected backup), not a sample.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import Estimate, Estimator, param
from quadriga.validators import int_at_least, optional, positive_int
from quadriga_fle.fle import _estimate, _support, check_offline_task, start_weights

__all__ = ["FQE", "CategoricalFQE", "categorical_evaluation", "fitted_q_evaluation", "project_categorical"]


def fitted_q_evaluation(data: Any, policy: np.ndarray, gamma: float, iterations: int) -> np.ndarray:
    """Tabular fitted Q evaluation (module docstring); cells without data stay at 0.

    Returns:
        ``ndarray[S, A]`` Q-values (return units).
    """
    S, A = policy.shape
    cells = data.s * A + data.a
    n_c = np.bincount(cells, minlength=S * A).astype(float)
    cont = (~data.terminated).astype(float)
    q = np.zeros(S * A)
    for _ in range(iterations):
        v_next = (policy[data.s_next] * q.reshape(S, A)[data.s_next]).sum(-1)
        td_target = data.r + gamma * cont * v_next
        q = np.where(n_c > 0, np.bincount(cells, td_target, minlength=S * A) / np.maximum(n_c, 1), q)
    return q.reshape(S, A)


def project_categorical(values: np.ndarray, probs: np.ndarray, atoms: np.ndarray) -> tuple[np.ndarray, ...]:
    """Cramer projection of point masses ``values`` (weights ``probs``) onto the uniform grid ``atoms``.

    Each mass at ``v`` (clipped to the grid) is split between its two neighbouring atoms in
    proportion to the distance (Bellemare et al. 2017, eq. 7).

    Returns:
        ``(lower index, upper index, lower weight, upper weight)``, each the shape of ``values``.
    """
    lo, hi, m = atoms[0], atoms[-1], atoms.size
    b = (np.clip(values, lo, hi) - lo) / (hi - lo) * (m - 1)
    lower = np.floor(b).astype(int)
    upper = np.minimum(lower + 1, m - 1)
    frac = b - lower
    return lower, upper, probs * (1.0 - frac), probs * frac


def categorical_evaluation(
    data: Any, policy: np.ndarray, gamma: float, atoms: np.ndarray, iterations: int, start: int
) -> np.ndarray:
    """Categorical distributional policy evaluation (module docstring).

    Returns:
        ``ndarray[S * A, m]`` probabilities on ``atoms`` per cell (``delta_0``'s projection where no data).
    """
    S, A = policy.shape
    m = atoms.size
    C = S * A
    cells = data.s * A + data.a
    n_c = np.bincount(cells, minlength=C).astype(float)
    cont = (~data.terminated).astype(float)
    p = np.zeros((C, m))
    l0, u0, wl, wu = project_categorical(np.zeros(1), np.ones(1), atoms)
    p[:, l0[0]] += wl[0]
    p[:, u0[0]] += wu[0]
    for _ in range(iterations):
        z_next = np.einsum("na,nam->nm", policy[data.s_next], p.reshape(S, A, m)[data.s_next])  # [n, m]
        target_atoms = data.r[:, None] + gamma * cont[:, None] * atoms  # [n, m]
        lower, upper, wl, wu = project_categorical(target_atoms, z_next, atoms)
        idx = np.concatenate([(cells[:, None] * m + lower).ravel(), (cells[:, None] * m + upper).ravel()])
        mass = np.bincount(idx, np.concatenate([wl.ravel(), wu.ravel()]), minlength=C * m).reshape(C, m)
        p = np.where(n_c[:, None] > 0, mass / np.maximum(n_c[:, None], 1), p)
    return p


@attrs.define(kw_only=True)
class FQE(Estimator):
    """Fitted Q evaluation (mean only): the point mass at ``V(s_0)`` as a return law.

    ``estimate(data)`` as :class:`~quadriga_fle.fle.FLE` (same data draw, same ``iterations``);
    ``value`` is ``ndarray[num_quantiles]`` all equal to ``V(s_0)``.

    Shapes:
        ``value``: ``ndarray[num_quantiles]``, non-decreasing.

    Units:
        Discounted return units of the task (its ``gamma``).

    Raises:
        ConfigError: bad hyperparameters; data that is not from a finite MDP.

    Source: Le, Voloshin & Yue 2019, "Batch Policy Learning under Constraints", Algorithm 2 (FQE).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}

    num_transitions: int | None = param(
        None,
        doc="fresh transitions drawn per replicate (None: the task's own data)",
        validator=optional(positive_int),
    )
    iterations: int = param(50, doc="iterations K", validator=positive_int)
    num_quantiles: int = param(1000, doc="quantiles of the answer", validator=int_at_least(2))

    def estimate(self, data: Any, *, generator: Any) -> Estimate:
        """Run FQE; see the class docstring."""
        check_offline_task(data, "fqe")
        gamma = float(data.gamma)

        def run(d: Any, policy: np.ndarray, mdp: Any, rng: Any) -> Any:
            q = fitted_q_evaluation(d, policy, gamma, self.iterations)
            v0 = float(policy[mdp.initial_state] @ q[mdp.initial_state])
            return (lambda lv: np.full(lv.size, v0)), {"iterations": self.iterations}

        est, _ = _estimate(data, self.num_transitions, generator, "fqe", run, self.num_quantiles)
        return est


@attrs.define(kw_only=True)
class CategoricalFQE(Estimator):
    """Categorical distributional fit (C51-style evaluation) of the target policy's return law.

    ``estimate(data)`` as :class:`~quadriga_fle.fle.FLE`; ``value`` holds the quantiles of the
    categorical law at the start state (a step CDF on ``num_atoms`` atoms over ``support``).

    Shapes:
        ``value``: ``ndarray[num_quantiles]``, non-decreasing.

    Units:
        Discounted return units of the task (its ``gamma``).

    Raises:
        ConfigError: bad hyperparameters; data that is not from a finite MDP.

    Source: Bellemare, Dabney & Munos 2017, ICML, eq. 7 and Algorithm 1 (with the target policy's
    next-action law instead of the greedy action); Rowland et al. 2018, AISTATS (convergence of
    the projected operator).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}

    num_transitions: int | None = param(
        None,
        doc="fresh transitions drawn per replicate (None: the task's own data)",
        validator=optional(positive_int),
    )
    iterations: int = param(50, doc="iterations K", validator=positive_int)
    num_atoms: int = param(101, doc="atoms m", validator=int_at_least(2))
    support: list[float] = param(
        factory=lambda: [-1.5, 1.5], doc="[low, high] of the atoms (return units)", validator=_support
    )
    num_quantiles: int = param(1000, doc="quantiles of the answer", validator=int_at_least(2))

    def estimate(self, data: Any, *, generator: Any) -> Estimate:
        """Run the categorical fit; see the class docstring."""
        check_offline_task(data, "categorical-fqe")
        gamma = float(data.gamma)
        atoms = np.linspace(self.support[0], self.support[1], self.num_atoms)

        def run(d: Any, policy: np.ndarray, mdp: Any, rng: Any) -> Any:
            p = categorical_evaluation(d, policy, gamma, atoms, self.iterations, int(mdp.initial_state))
            law = start_weights(policy, int(mdp.initial_state)) @ p
            cdf = np.cumsum(law) / law.sum()

            def quantiles(levels: np.ndarray) -> np.ndarray:
                return atoms[np.minimum(np.searchsorted(cdf, levels, side="left"), atoms.size - 1)]

            return quantiles, {"iterations": self.iterations}

        est, _ = _estimate(data, self.num_transitions, generator, "categorical-fqe", run, self.num_quantiles)
        return est
