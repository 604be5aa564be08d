"""``diag-mamba-dynamics``: convergent or divergent token dynamics of a 1-D selective state-space
system, against the sign criterion on the input/output projection.

Row 003:95 (Vo, Pham, Tong & Nguyen 2025, "Demystifying the token dynamics of deep selective state
space models", ICLR 2025): in the continuous-time limit of a deep Mamba (S6) model with
one-dimensional tokens, either all tokens converge to zero or all diverge, decided by the model
parameters; the input/output projection ``S_C^T S_B`` with negative eigenvalues gives the
convergent scenario, positive ones the divergent one.

The system simulated here is our derivation of that limit for one channel (the paper's equations
were not read): tokens ``x_1..x_L`` (scalars), step ``Delta(x) = softplus(s x + b)``,
``B_j = S_B x_j``, ``C_i = S_C x_i`` (``S_B, S_C`` in R^N), ``A = -diag(a)``, zero-order-hold input
``Delta B`` and residual depth as time:

``dx_i/dt = x_i sum_{j <= i} x_j^2 Delta(x_j) K(tau_ij)``, ``K(tau) = sum_n S_C,n S_B,n exp(-a_n tau)``,
``tau_ij = sum_{k=j+1..i} Delta(x_k)``.

With one decay rate (``a_n = a``) the sign of ``mu = S_C^T S_B = K(0)`` decides every token exactly
(``d x_i^2 / dt`` has the sign of ``mu``). With distinct ``a_n`` the kernel can change sign along
``tau``, so the criterion ``sign(mu)`` is a prediction whose hit rate over random draws is measured.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.interfaces import Evaluator
from quadriga.validators import int_at_least, non_negative, positive

__all__ = ["MambaTokenDynamics", "classify", "draw_parameters", "simulate_draws", "token_velocity"]


def _softplus(u: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, u)


def token_velocity(x: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """``dx/dt`` of the module docstring's system.

    Shapes: ``x`` ``(L,)``; params ``s_b``, ``s_c``, ``a`` ``(N,)``, ``s``, ``b`` scalars; returns
    ``(L,)``. Units: tokens per unit depth. Raises: nothing.
    Source: our continuous-time limit of the S6 recurrence (Gu & Dao 2023, Algorithm 2, with
    ``B_bar = Delta B``), as in Vo et al. 2025, sec. 3 (1-D case).
    """
    delta = _softplus(params["s"] * x + params["b"])
    cum = np.cumsum(delta)
    tau = cum[:, None] - cum[None, :]  # tau_ij = sum_{k=j+1..i} Delta_k (for j <= i)
    kernel = np.einsum(
        "n,ijn->ij", params["s_c"] * params["s_b"], np.exp(-params["a"] * np.maximum(tau, 0)[..., None])
    )
    weights = np.tril(kernel) * (x**2 * delta)[None, :]
    return x * weights.sum(1)


def draw_parameters(rng: np.random.Generator, state_size: int, decay_spread: float) -> dict[str, Any]:
    """Random S6 parameters: ``S_B, S_C ~ N(0, I_N)``, ``a_n ~ U[1, 1 + decay_spread]``,
    ``s, b ~ N(0, 1)``.

    Raises: nothing. Source: test design (random draws of the parameters the criterion reads).
    """
    return {
        "s_b": rng.standard_normal(state_size),
        "s_c": rng.standard_normal(state_size),
        "a": rng.uniform(1.0, 1.0 + decay_spread, state_size),
        "s": float(rng.standard_normal()),
        "b": float(rng.standard_normal()),
    }


def classify(x0: np.ndarray, params: dict[str, Any], horizon: float, blowup: float = 1e4) -> str:
    """``"divergent"`` (some token passes ``blowup`` before ``horizon``, or the norm of the tokens
    grows from 0 to ``horizon/2`` to ``horizon`` and at least doubles), ``"convergent"`` (the norm
    falls from 0 to ``horizon/2`` to ``horizon`` and at least halves), else ``"undecided"``.

    Shapes: ``x0`` ``(L,)``. Raises: nothing. Source: the two scenarios of Vo et al. 2025, Thm. 1 (1-D).
    """
    from scipy.integrate import solve_ivp

    def event(t: float, x: np.ndarray) -> float:
        return blowup - float(np.max(np.abs(x)))

    event.terminal = True  # type: ignore[attr-defined]
    sol = solve_ivp(
        lambda t, x: token_velocity(x, params),
        (0.0, horizon),
        x0,
        method="LSODA",
        events=event,
        t_eval=[horizon / 2, horizon],
        rtol=1e-8,
        atol=1e-10,
    )
    if sol.t_events[0].size:
        return "divergent"
    if sol.y.shape[1] < 2:
        return "undecided"
    start, mid, end = (float(np.linalg.norm(v)) for v in (x0, sol.y[:, 0], sol.y[:, 1]))
    if end < mid < start and end <= 0.5 * start:
        return "convergent"
    if end > mid > start and end >= 2.0 * start:
        return "divergent"
    return "undecided"


@attrs.define(kw_only=True)
class MambaTokenDynamics(Evaluator):
    """Share of random parameter draws in which the sign of ``S_C^T S_B`` predicts the simulated
    regime (all tokens to zero for a negative sign, divergence for a positive one).

    Input: none (``subject`` and ``reference`` are ignored).

    Returns (``Metrics``): ``hit_share`` (predicted = simulated), ``hit_low``, ``hit_high``
    (Clopper-Pearson 95 %), ``undecided_share``, ``divergent_share``, ``convergent_share``,
    ``mixed_sign_kernel_share`` (draws whose kernel ``K(tau)`` changes sign on [0, 10]).

    Shapes:
        scalars.

    Units:
        shares in [0, 1].

    Raises:
        ConfigError: non-positive sizes or horizon (at build time).

    Source: Vo, Pham, Tong & Nguyen 2025 (ICLR), "Demystifying the token dynamics of deep selective
    state space models", 1-D convergence/divergence criterion; the system of the module docstring.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {"num_draws": 4}

    num_draws: int = param(100, doc="random parameter draws", validator=int_at_least(1))
    num_tokens: int = param(6, doc="tokens L per sequence", validator=int_at_least(1))
    state_size: int = param(4, doc="state size N", validator=int_at_least(1))
    decay_spread: float = param(
        1.0, doc="a_n ~ U[1, 1 + spread] (0: one decay rate, criterion exact)", validator=non_negative
    )
    horizon: float = param(200.0, doc="integration time (depth units)", validator=positive)

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any) -> Metrics:
        """Draw, predict, simulate; see the class docstring."""
        from scipy.stats import binomtest

        from quadriga.seeding import numpy_rng

        del subject, reference
        rng = numpy_rng(generator)
        outcomes = simulate_draws(
            rng, self.num_draws, self.num_tokens, self.state_size, self.decay_spread, self.horizon
        )
        hits = sum(o["hit"] for o in outcomes)
        ci = binomtest(hits, len(outcomes)).proportion_ci(0.95, method="exact")
        share = {
            k: float(np.mean([o["simulated"] == k for o in outcomes]))
            for k in ("undecided", "divergent", "convergent")
        }
        return Metrics(
            values={
                "hit_share": hits / len(outcomes),
                "hit_low": float(ci.low),
                "hit_high": float(ci.high),
                "undecided_share": share["undecided"],
                "divergent_share": share["divergent"],
                "convergent_share": share["convergent"],
                "mixed_sign_kernel_share": float(np.mean([o["mixed_kernel"] for o in outcomes])),
            }
        )


def simulate_draws(
    rng: np.random.Generator,
    num_draws: int,
    num_tokens: int,
    state_size: int,
    decay_spread: float,
    horizon: float,
) -> list[dict[str, Any]]:
    """Per draw: ``mu``, ``predicted`` (sign criterion), ``simulated`` (:func:`classify`), ``hit``
    and ``mixed_kernel`` (``K(tau)`` changes sign for ``tau`` in [0, 10]).

    Tokens start i.i.d. ``N(0, 1)``. Raises: nothing. Source: the module docstring.
    """
    out = []
    grid = np.linspace(0.0, 10.0, 201)
    for _ in range(num_draws):
        p = draw_parameters(rng, state_size, decay_spread)
        x0 = rng.standard_normal(num_tokens)
        mu = float(p["s_c"] @ p["s_b"])
        kern = (p["s_c"] * p["s_b"]) @ np.exp(-np.outer(p["a"], grid))
        predicted = "convergent" if mu < 0 else "divergent"
        simulated = classify(x0, p, horizon)
        out.append(
            {
                "mu": mu,
                "predicted": predicted,
                "simulated": simulated,
                "hit": predicted == simulated,
                "mixed_kernel": bool(np.any(kern > 0) and np.any(kern < 0)),
            }
        )
    return out
