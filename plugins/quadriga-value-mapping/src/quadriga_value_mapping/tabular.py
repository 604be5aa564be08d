"""Tabular orchestrated value mapping with a generative model (synchronous updates).

Every iteration draws one transition ``(s', r)`` for every pair ``(s, a)`` from the task's exact
model (quadriga-std's :class:`~quadriga_std.rl.tabular.GenerativeModel`), splits the scalar reward
into non-negative channels (polar: ``r = r+ - r-``) and updates each channel ``j`` in two steps
(Fatemi & Tavakoli 2022, Algorithm 1 / eq. 9-10):

    Q_j      = f^-1(Q~_j)                                   # regular space
    a*       = argmax_a' sum_j lambda_j Q_j(s', a')         # shared greedy action
    U_j      = Q_j(s, a) + beta_reg (r_j + gamma Q_j(s', a*) - Q_j(s, a))   # regular-space step
    Q~_j     <- Q~_j + beta_f (f(max(U_j, eps_log)) - Q~_j)                  # mapped-space step

with ``beta_reg * beta_f = alpha_t = (t + 1)^-omega``, ``beta_reg = alpha_t^share`` and
``beta_f = alpha_t^(1 - share)``. ``share = 1`` (``beta_f = 1``) makes the mapping a no-op (plain
Q-learning per channel); ``share = 0`` (``beta_reg = 1``, all averaging in the mapped space) is
biased for a non-linear mapping (the paper's convergence condition needs ``beta_reg -> 0``) and is
refused.

Source: Fatemi & Tavakoli 2022, "Orchestrated Value Mapping for Reinforcement Learning" (ICLR, arXiv
2203.07171), Section 3 (Algorithm 1, Theorem 1: convergence when both step sizes satisfy the
Robbins-Monro conditions and ``beta_reg -> 0``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import Fitted, Learner, param
from quadriga.errors import ConfigError
from quadriga.interfaces import Environment
from quadriga.validators import in_range, one_of, positive_int, probability
from quadriga_value_mapping.mapping import EPS_LOG, MAPPINGS, forward, inverse, polar_decomposition

__all__ = ["TabularValueMapping", "map_q_learning"]


def map_q_learning(
    mdp: Any,
    gamma: float,
    iterations: int,
    rng: np.random.Generator,
    *,
    mapping: str = "loglin",
    omega: float = 0.6,
    share: float = 0.5,
) -> np.ndarray:
    """Synchronous orchestrated value mapping on a :class:`~quadriga_std.rl.tabular.TabularMDP`.

    Args:
        mdp: the MDP (scalar reward: the sum of its sources).
        gamma: discount.
        iterations: synchronous sweeps ``T`` (each draws ``S x A`` transitions).
        rng: the sampling stream.
        mapping: ``"identity"``, ``"log"`` or ``"loglin"`` (both channels).
        omega: ``alpha_t = (t + 1)^-omega`` (in (0.5, 1] for Robbins-Monro).
        share: ``beta_reg = alpha_t^share``, ``beta_f = alpha_t^(1 - share)``.

    Returns:
        ``ndarray[S, A]`` Q-values ``sum_j lambda_j f^-1(Q~_j)`` (0 at terminal states; return units).

    Raises:
        ValueError: ``share = 0`` with a non-identity mapping (all averaging in the mapped space).
    """
    from quadriga_std.rl.tabular import GenerativeModel

    if share <= 0 and mapping != "identity":
        raise ValueError("share = 0 (beta_reg = 1) with a non-identity mapping is biased; use share > 0")
    S, A = mdp.num_states, mdp.num_actions
    model = GenerativeModel(mdp, rng)
    live = ~mdp.terminal
    lam = np.array([1.0, -1.0])
    qt = np.full((S, A, 2), float(forward(mapping, np.array(EPS_LOG))))  # Q~, channels at eps_log
    for t in range(iterations):
        alpha = (t + 1.0) ** -omega
        beta_reg, beta_f = alpha**share, alpha ** (1.0 - share)
        q = inverse(mapping, qt)  # [S, A, 2]
        q[~live] = 0.0
        s_next, r = model.sample_all()  # [S, A], [S, A, K]
        channels, _ = polar_decomposition(r.sum(-1))  # [S, A, 2]
        a_star = (q @ lam).argmax(-1)  # [S]
        q_next = q[s_next, a_star[s_next]]  # [S, A, 2]
        u = q + beta_reg * (channels + gamma * q_next - q)
        if mapping != "identity":
            u = np.maximum(u, EPS_LOG)
        qt = qt + beta_f * (forward(mapping, u) - qt)
    q = inverse(mapping, qt)
    q[~live] = 0.0  # terminal rows are never read: their value is 0
    return q @ lam


def _share(instance: Any, attribute: Any, value: Any) -> None:
    if not 0.0 <= value <= 1.0:
        raise ConfigError(f"share must lie in [0, 1], got {value!r}.", key="share")
    if value == 0.0 and instance.mapping != "identity":
        raise ConfigError(
            "share = 0 puts all averaging in the mapped space (beta_reg = 1), which is biased for a "
            "non-linear mapping (Fatemi & Tavakoli 2022, Theorem 1 needs beta_reg -> 0); use share > 0.",
            key="share",
        )


@attrs.define(kw_only=True)
class TabularValueMapping(Learner):
    """Tabular orchestrated value mapping (:func:`map_q_learning`) on a task with an exact model.

    ``fit(task)`` takes an Environment with ``tabular()`` (e.g. quadriga-std's ``vector-reward-chain``)
    and returns ``Fitted(model=ndarray[S, A] Q-values, history={}, info={gamma, iterations,
    mapping, transitions, beta_f_final, log_branch_fraction})``; std's ``q-error`` evaluator
    compares it with Q*. ``beta_f_final`` is the last mapped-space step ``alpha_T^(1 - share)`` (1
    when no averaging happens in the mapped space and the mapping is a no-op);
    ``log_branch_fraction`` is the share of non-terminal ``(s, a)`` whose learned ``|Q|`` is below
    the log-lin break at 1 (0 for ``identity``): together, the check that the mapping can act.

    Shapes:
        ``model``: ``ndarray[S, A]``.

    Units:
        Q in discounted return units (the task's reward units, discount ``gamma`` per step).

    Raises:
        ConfigError: bad hyperparameters (``share = 0`` with a mapping); a task without an exact model.

    Source: Fatemi & Tavakoli 2022 (ICLR), Algorithm 1 with a generative model.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Environment,)}

    mapping: str = param("loglin", doc="value mapping of both channels", validator=one_of(MAPPINGS))
    iterations: int = param(3000, doc="synchronous sweeps over all (s, a)", validator=positive_int)
    gamma: float = param(0.9, doc="discount factor", validator=probability)
    omega: float = param(0.6, doc="alpha_t = (t + 1)^-omega", validator=in_range(0.5, 1.0, low_open=True))
    share: float = param(0.5, doc="beta_reg = alpha_t^share, beta_f = alpha_t^(1 - share)", validator=_share)

    def fit(self, task: Any, *, generator: Any, progress: Any) -> Fitted:
        """Run :func:`map_q_learning` on ``task.tabular()`` (see the class docstring).

        Raises:
            ConfigError: the task has no ``tabular()`` model.
        """
        from quadriga.seeding import numpy_rng

        if not hasattr(task, "tabular"):
            raise ConfigError(
                "tabular-value-mapping needs a task with an exact model (tabular()), e.g. "
                "vector-reward-chain.",
                key="task",
            )
        mdp = task.tabular()
        progress.start(self.iterations, description=type(self).__name__)
        q = map_q_learning(
            mdp,
            self.gamma,
            self.iterations,
            numpy_rng(generator),
            mapping=self.mapping,
            omega=self.omega,
            share=self.share,
        )
        progress.advance(self.iterations)
        info = {
            "gamma": self.gamma,
            "iterations": self.iterations,
            "mapping": self.mapping,
            "transitions": self.iterations * mdp.num_states * mdp.num_actions,
            "beta_f_final": float(self.iterations ** (-self.omega * (1.0 - self.share))),
            "log_branch_fraction": (
                0.0 if self.mapping == "identity" else float(np.mean(np.abs(q[~mdp.terminal]) < 1.0))
            ),
        }
        return Fitted(model=q, history={}, info=info)
