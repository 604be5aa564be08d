"""Prospect and the baselines of the paper, as pure loops over a :class:`SpectralRiskObjective`.

Each ``run_*`` starts at ``w = 0``, runs ``passes`` epochs and records ``F(w_k)`` after each one
(``k = 0`` is the start). An epoch is what the official code calls one: ``n`` single-example steps
for Prospect, LSVRG and Saddle-SAGA, and ``floor(n / b)`` minibatch steps for SGD and SRDA
(one pass over the data). ``grad_evals`` counts per-example gradient evaluations, so methods can
also be compared per gradient. A run whose objective becomes non-finite or exceeds 1.5 times its
start value is stopped and flagged ``diverged`` (the official code's rule).

Sources: Mehta, Roulet, Pillutla, Harchaoui, "Distributionally Robust Optimization with Bias and
Variance Reduction", ICLR 2024: Prospect is their Algorithm 1; the baselines are those of their
sec. 5 (minibatch SGD on the batch spectral risk, stochastic regularized dual averaging,
LSVRG with fixed weights per epoch, and the saddle-point SAGA method of Palaniappan & Bach 2016).
Update orders follow the official code ronakdm/prospect (``src/optim/prospect.py``,
``src/optim/baselines.py``), re-implemented in numpy.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs
import numpy as np
from scipy.optimize import minimize

from quadriga_prospect.objective import SpectralRiskObjective
from quadriga_prospect.spectra import smooth_weights

__all__ = ["METHODS", "Trace", "lbfgs_optimum", "run_method"]


@attrs.define(kw_only=True, eq=False)
class Trace:
    """One optimizer run.

    Attributes:
        w: ``ndarray[D]`` final iterate.
        objective: ``F(w_k)`` for ``k = 0..K`` (``K = passes`` unless diverged).
        grad_evals: cumulative per-example gradient evaluations after each pass (same length).
        diverged: whether the run was stopped by the divergence rule.
    """

    w: np.ndarray
    objective: list[float]
    grad_evals: list[int]
    diverged: bool = False


def _drive(
    obj: SpectralRiskObjective, w: np.ndarray, passes: int, epoch: Callable[[], int], evals0: int
) -> Trace:
    values, evals = [obj.value(w)], [evals0]
    for _ in range(passes):
        evals.append(evals[-1] + epoch())
        value = obj.value(w)
        values.append(value)
        if not math.isfinite(value) or value > 1.5 * values[0]:
            return Trace(w=w.copy(), objective=values, grad_evals=evals, diverged=True)
    return Trace(w=w.copy(), objective=values, grad_evals=evals)


def run_prospect(obj: SpectralRiskObjective, lr: float, passes: int, rng: np.random.Generator) -> Trace:
    """Prospect (Algorithm 1 of Mehta et al. 2024), one step per sampled example ``i``.

    Tables: losses ``l_hat[n]``, gradients ``G[n, D]``, weights ``lam = q(l_hat)``, stale weights
    ``rho[n]`` and ``g_bar = sum_j rho_j G_j``. One step, with ``g = grad l_i(w)``::

        v       = n lam_i g - n rho_i G_i + g_bar          # bias- and variance-reduced direction
        w       = (w - lr v) / (1 + lr mu)                 # prox of the l2 term
        l_hat_i = l_i(w_old);  lam = q(l_hat)             # sample-weight update (one sort + PAV)
        g_bar  += lam_i_old g - rho_i G_i;  rho_i = lam_i_old;  G_i = g

    A single learning rate ``lr`` (units: 1 / curvature of the loss). Returns a :class:`Trace`.
    """
    n = obj.n
    w = np.zeros(obj.dim)
    losses = obj.losses(w)
    state = {"lam": obj.weights(losses)}
    rho = state["lam"].copy()
    G = obj.grads(w)
    g_bar = G.T @ rho
    shrink = 1.0 / (1.0 + lr * obj.mu)

    def epoch() -> int:
        lam = state["lam"]
        for i in rng.integers(0, n, n):
            loss, g = obj.loss_and_grad(w, i)
            v = n * lam[i] * g - n * rho[i] * G[i] + g_bar
            w[:] = shrink * (w - lr * v)
            losses[i] = loss
            lam_i = lam[i]
            lam = obj.weights(losses)
            g_bar[:] += lam_i * g - rho[i] * G[i]
            rho[i] = lam_i
            G[i] = g
        state["lam"] = lam
        return n

    return _drive(obj, w, passes, epoch, n)


def run_sgd(
    obj: SpectralRiskObjective, lr: float, passes: int, rng: np.random.Generator, batch_size: int = 64
) -> Trace:
    """Minibatch stochastic gradient on the batch's own penalized spectral risk (biased).

    Per step, on a batch ``B`` of a fresh permutation: ``g = sum_{i in B} q_B(l_B)_i grad l_i + mu w``
    with the spectrum of size ``|B|``; ``w = w - lr g``. Returns a :class:`Trace`.
    """
    n, b = obj.n, min(batch_size, obj.n)
    w = np.zeros(obj.dim)
    sigma_b = obj.batch_sigma(b)

    def epoch() -> int:
        order = rng.permutation(n)
        for t in range(n // b):
            idx = order[t * b : (t + 1) * b]
            q = smooth_weights(obj.losses(w, idx), sigma_b, obj.nu)
            w[:] -= lr * (q @ obj.grads(w, idx) + obj.mu * w)
        return (n // b) * b

    return _drive(obj, w, passes, epoch, 0)


def run_srda(
    obj: SpectralRiskObjective, lr: float, passes: int, rng: np.random.Generator, batch_size: int = 64
) -> Trace:
    """Stochastic regularized dual averaging (Xiao 2010) on the same minibatch gradients.

    ``g_avg_t = mean_{s <= t} g_s`` (without the l2 term), ``w = -g_avg_t / (mu + 1 / (lr (t + 1)))``.
    Returns a :class:`Trace`.
    """
    n, b = obj.n, min(batch_size, obj.n)
    w = np.zeros(obj.dim)
    dual_avg = np.zeros(obj.dim)
    sigma_b = obj.batch_sigma(b)
    count = [0]

    def epoch() -> int:
        order = rng.permutation(n)
        for s in range(n // b):
            idx = order[s * b : (s + 1) * b]
            q = smooth_weights(obj.losses(w, idx), sigma_b, obj.nu)
            t = count[0]
            dual_avg[:] = (t * dual_avg + q @ obj.grads(w, idx)) / (t + 1)
            w[:] = -dual_avg / (obj.mu + 1.0 / (lr * (t + 1)))
            count[0] += 1
        return (n // b) * b

    return _drive(obj, w, passes, epoch, 0)


def run_lsvrg(obj: SpectralRiskObjective, lr: float, passes: int, rng: np.random.Generator) -> Trace:
    """SVRG with the sample weights frozen at each epoch's checkpoint (the paper's LSVRG baseline).

    At the start of each epoch: ``w_c = w``, ``q_c = q(l(w_c))``, ``g_c = sum_i q_c,i grad l_i(w_c)``.
    Per step: ``w = w - lr (n q_c,i (grad l_i(w) - grad l_i(w_c)) + g_c + mu w)``.
    The weights are stale within an epoch, so the direction is biased. Returns a :class:`Trace`.
    """
    n = obj.n
    w = np.zeros(obj.dim)

    def epoch() -> int:
        w_c = w.copy()
        q_c = obj.weights(obj.losses(w_c))
        g_c = q_c @ obj.grads(w_c)
        for i in rng.integers(0, n, n):
            _, g = obj.loss_and_grad(w, i)
            _, g_old = obj.loss_and_grad(w_c, i)
            w[:] -= lr * (n * q_c[i] * (g - g_old) + g_c + obj.mu * w)
        return 3 * n

    return _drive(obj, w, passes, epoch, 0)


def run_saddle_saga(
    obj: SpectralRiskObjective, lr: float, passes: int, rng: np.random.Generator, dual_ratio: float = 0.1
) -> Trace:
    """Saddle-point SAGA (Palaniappan & Bach 2016) on ``min_w max_q``: SAGA in ``w`` and in ``q``.

    The primal step is Prospect's with the current dual iterate ``lam``; the dual step is a
    projected (prox) ascent step with ``lr_d = dual_ratio * lr / n`` on the SAGA estimate
    ``eta = l_hat + n (l_i(w) - l_hat_i) e_i`` of the loss vector::

        lam = Proj_{P(sigma)}(1/n + (lam + lr_d eta - 1/n) / (1 + lr_d nu))

    ``dual_ratio = 0.1`` is the official code's choice. Returns a :class:`Trace`.
    """
    n = obj.n
    w = np.zeros(obj.dim)
    losses = obj.losses(w)
    state = {"lam": smooth_weights(losses, obj.sigma, 0.0)}
    rho = state["lam"].copy()
    G = obj.grads(w)
    g_bar = G.T @ rho
    lr_d = dual_ratio * lr / n
    shrink = 1.0 / (1.0 + lr * obj.mu)

    def epoch() -> int:
        lam = state["lam"]
        for i in rng.integers(0, n, n):
            loss, g = obj.loss_and_grad(w, i)
            v = n * lam[i] * g - n * rho[i] * G[i] + g_bar
            w[:] = shrink * (w - lr * v)
            eta = losses.copy()
            eta[i] += n * (loss - losses[i])
            lam_i = lam[i]
            lam = smooth_weights(lam + lr_d * eta - 1.0 / n, obj.sigma, 1.0 + lr_d * obj.nu)
            losses[i] = loss
            g_bar[:] += lam_i * g - rho[i] * G[i]
            rho[i] = lam_i
            G[i] = g
        state["lam"] = lam
        return n

    return _drive(obj, w, passes, epoch, n)


METHODS: dict[str, Callable[..., Trace]] = {
    "prospect": run_prospect,
    "sgd": run_sgd,
    "srda": run_srda,
    "lsvrg": run_lsvrg,
    "saddle-saga": run_saddle_saga,
}


def run_method(
    name: str, obj: SpectralRiskObjective, lr: float, passes: int, rng: np.random.Generator
) -> Trace:
    """Run the optimizer ``name`` (a key of ``METHODS``). Returns a :class:`Trace`."""
    return METHODS[name](obj, lr, passes, rng)


def lbfgs_optimum(
    obj: SpectralRiskObjective, *, gtol: float = 1e-12, maxiter: int = 20_000
) -> tuple[float, np.ndarray]:
    """The reference optimum ``min_w F(w)`` by full-batch L-BFGS (``scipy.optimize.minimize``).

    ``F`` is smooth and strongly convex (the chi^2 penalty makes the weights Lipschitz in the
    losses; ``mu > 0``), so L-BFGS converges to the unique minimizer. Started at ``w = 0`` as in
    the official ``scripts/lbfgs.py``.

    Returns:
        ``(F*, w*)``: a float (units of the loss) and ``ndarray[D]``.

    Raises:
        RuntimeError: when scipy reports failure and the gradient norm at the answer exceeds ``1e-6``.
    """
    res = minimize(
        obj.value_and_grad,
        np.zeros(obj.dim),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": gtol, "ftol": 1e-16, "maxiter": maxiter, "maxcor": 50},
    )
    value, grad = obj.value_and_grad(res.x)
    if not res.success and float(np.linalg.norm(grad)) > 1e-6:
        raise RuntimeError(f"L-BFGS did not converge: {res.message} (|grad| = {np.linalg.norm(grad):.2e})")
    return value, res.x
