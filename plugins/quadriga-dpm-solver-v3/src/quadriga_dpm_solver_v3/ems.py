"""Empirical model statistics (EMS) of DPM-Solver-v3, computed from the model.

The official code ships precomputed statistics only (its README, "EMS computing by yourself":
TODO), so the computation is derived here from the paper (Zheng, Lu, Chen & Zhu 2023, sec. 3.1-3.2
and Appendix C). Write G(x, lambda) = sigma eps_hat(x, lambda) = -sigma^2 score, and
(as in :mod:`quadriga_ddpm.probability_flow`) the flow ODE for y = x / alpha as
dy / d lambda = -G / alpha. With the statistics l, s, b (vectors of the data's shape, per lambda):

* N(x, lambda) = (G(x, lambda) - l_lambda x) / alpha_lambda, so dy / d lambda = -l y - N
  (paper eq. 9, divided by alpha so that l = 1, s = b = 0 is DPM-Solver++ exactly);
* l_lambda = argmin_l E |grad_x N|_F^2 = E[diag grad_x G] (paper eq. 10: the diagonal of the
  model's Jacobian, averaged over x_lambda on the model's own ODE trajectories);
* (s_lambda, b_lambda) = argmin E |dN/d lambda - s N - b|^2, per coordinate (paper eq. 11): the
  least-squares regression of the total lambda-derivative of N along the trajectory on N, i.e.
  s = Cov(N', N) / Var(N), b = E N' - s E N.

Derivatives are central finite differences of the model (no autograd needed, so any score model
works): diag grad_x G by +-h e_j per coordinate (d pairs of evaluations), and the total
derivative N' = [dG/dlambda - l' x - l v] / alpha - (d log alpha / d lambda) N, with v = dx/dlambda,
dG/dlambda = [G(x + h v, lambda + h) - G(x - h v, lambda - h)] / (2h), and l' the derivative of
the cubic spline through l on the grid (``scipy.interpolate.CubicSpline``; l is smooth in lambda, the
same samples being transported along the grid). An error in l' multiplies x in N' and the
regression of N' on N absorbs it into b, so a second-order difference of l on a grid of 60
intervals gave a b wrong by up to 80 % on a Gaussian (and a diverging solve on a 2-D mixture);
the spline is exact to 1e-5 there (tests). The trajectories x_lambda are the reference solve
(:func:`quadriga_ddpm.probability_flow.reference_solve`) of n calibration draws of x_T. When N does
not vary along the samples (Var(N) below 1e-12 (1 + E N^2)) s is 0 and b = E N' (a ridge limit).

For a Gaussian target N(mu, diag(v0)) everything is closed form: l = sigma^2 / (alpha^2 v0 + sigma^2)
per coordinate, N = -sigma^2 mu / (alpha (alpha^2 v0 + sigma^2)) does not depend on x, and the
first-order v3 step is exact (tests).
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import torch
from quadriga_ddpm.noise_schedule import NoiseSchedule
from quadriga_ddpm.probability_flow import reference_solve, score_at

__all__ = ["EMS", "compute_ems", "degenerate_ems"]

_GL_X, _GL_W = np.polynomial.legendre.leggauss(8)


@attrs.frozen
class EMS:
    """Statistics on an increasing lambda grid, piecewise linear in lambda between grid points.

    Attributes:
        lam: ``ndarray[K + 1]`` increasing half log-SNR grid.
        l, s, b: ``ndarray[K + 1, d]`` the statistics (dimensionless l and s; b in units of N
            per unit lambda).

    The integrals the solver needs are exact for this piecewise-linear form (L, S) or computed by
    8-point Gauss-Legendre on each grid interval (B): see :meth:`quadrature`.
    """

    lam: np.ndarray
    l: np.ndarray  # noqa: E741 (the paper's name)
    s: np.ndarray
    b: np.ndarray

    @property
    def dim(self) -> int:
        """d, the number of coordinates."""
        return int(self.l.shape[1])

    def departure(self) -> dict[str, float]:
        """How far the statistics are from DPM-Solver++'s constants (l = 1, s = b = 0).

        Returns:
            ``{"ems_l_departure": rms(l - 1), "ems_s_departure": rms(s)}`` over the grid and coordinates.
        """
        return {
            "ems_l_departure": float(np.sqrt(np.mean((self.l - 1) ** 2))),
            "ems_s_departure": float(np.sqrt(np.mean(self.s**2))),
        }

    # ------------------------------------------------------------------ piecewise-linear calculus
    def _index(self, x: np.ndarray) -> np.ndarray:
        return np.clip(np.searchsorted(self.lam, x, side="right") - 1, 0, len(self.lam) - 2)

    def value(self, arr: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Linear interpolation of ``arr: [K + 1, d]`` at ``x: [m]`` -> ``[m, d]``."""
        j = self._index(x)
        w = ((x - self.lam[j]) / (self.lam[j + 1] - self.lam[j]))[:, None]
        return (1 - w) * arr[j] + w * arr[j + 1]

    def integral(self, arr: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Exact integral of the interpolant of ``arr`` from ``lam[0]`` to each ``x: [m]`` -> ``[m, d]``."""
        cum = np.concatenate(
            [
                np.zeros((1, arr.shape[1])),
                np.cumsum(0.5 * np.diff(self.lam)[:, None] * (arr[1:] + arr[:-1]), 0),
            ]
        )
        j = self._index(x)
        return cum[j] + 0.5 * (x - self.lam[j])[:, None] * (arr[j] + self.value(arr, x))

    def _gl(self, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
        """Gauss-Legendre nodes and weights on [a, b], split at the grid points inside it."""
        cuts = np.concatenate([[a], self.lam[(self.lam > min(a, b)) & (self.lam < max(a, b))], [b]])
        cuts = np.sort(cuts) if b >= a else np.sort(cuts)[::-1]
        lo, hi = cuts[:-1], cuts[1:]
        nodes = (0.5 * (hi - lo))[:, None] * _GL_X[None] + (0.5 * (hi + lo))[:, None]
        weights = (0.5 * (hi - lo))[:, None] * _GL_W[None]
        return nodes.reshape(-1), weights.reshape(-1)

    def _b_integrand(self, nodes: np.ndarray) -> np.ndarray:
        return np.exp(-self.integral(self.s, nodes)) * self.value(self.b, nodes)

    def big_b(self, x: np.ndarray) -> np.ndarray:
        """B(lambda) = int_{lam[0]}^{lambda} e^{-S} b, S = int s, at ``x: [m]`` -> ``[m, d]``.

        Gauss-Legendre (8 nodes) on every grid interval for the values at the grid points, then on
        the partial interval [lam[j], x].
        """
        lo, hi = self.lam[:-1], self.lam[1:]
        half = 0.5 * (hi - lo)
        nodes = half[:, None] * _GL_X[None] + (0.5 * (hi + lo))[:, None]  # [K, 8]
        vals = self._b_integrand(nodes.reshape(-1)).reshape(len(lo), len(_GL_X), -1)
        at_grid = np.concatenate(
            [np.zeros((1, self.dim)), np.cumsum(half[:, None] * np.einsum("q,kqd->kd", _GL_W, vals), 0)]
        )
        x = np.asarray(x, dtype=float)
        j = self._index(x)
        half_x = 0.5 * (x - self.lam[j])
        part = half_x[:, None] * _GL_X[None] + (0.5 * (x + self.lam[j]))[:, None]  # [m, 8]
        pv = self._b_integrand(part.reshape(-1)).reshape(len(x), len(_GL_X), -1)
        return at_grid[j] + half_x[:, None] * np.einsum("q,mqd->md", _GL_W, pv)

    def quadrature(self, lam_s: float, lam_t: float, order: int) -> dict[str, np.ndarray]:
        """The integrals of one step from ``lam_s`` to ``lam_t`` (see :mod:`quadriga_dpm_solver_v3.solver`).

        Returns:
            ``L_t`` (int_s^t l, ``[d]``), ``I_B`` (int e^{L + S} B, ``[d]``) and ``C``
            (``[order, d]``: int e^{L + S} (lambda - lam_s)^k / k!, k < order), with
            L(lambda) = int_{lam_s}^{lambda} l and the global S, B.
        """
        nodes, w = self._gl(lam_s, lam_t)
        big_l = self.integral(self.l, nodes) - self.integral(self.l, np.array([lam_s]))
        weight = np.exp(big_l + self.integral(self.s, nodes))  # [m, d]
        lt = (self.integral(self.l, np.array([lam_t])) - self.integral(self.l, np.array([lam_s])))[0]
        powers = np.stack([(nodes - lam_s) ** k / float(np.prod(np.arange(1, k + 1))) for k in range(order)])
        return {
            "L_t": lt,
            "I_B": w @ (weight * self.big_b(nodes)),
            "C": np.einsum("m,km,md->kd", w, powers, weight),
        }


def degenerate_ems(lam: np.ndarray, dim: int) -> EMS:
    """l = 1, s = b = 0 on ``lam``: with these the v3 solver is DPM-Solver++ (paper, sec. 3.4)."""
    k = len(lam)
    return EMS(
        lam=np.asarray(lam, dtype=float), l=np.ones((k, dim)), s=np.zeros((k, dim)), b=np.zeros((k, dim))
    )


def _g(model: Any, schedule: NoiseSchedule, x: torch.Tensor, lam: float) -> torch.Tensor:
    """G = sigma eps_hat = -sigma^2 score at ``x: Tensor[n, d]`` and ``lam``."""
    a, s = schedule.alpha_sigma_of_lambda(lam)
    return -(float(s) ** 2) * score_at(model, x, float(a), float(s))


def compute_ems(
    model: Any,
    schedule: NoiseSchedule,
    x_T: torch.Tensor,
    lam: Any,
    *,
    rtol: float = 1e-8,
    h: float = 1e-4,
) -> tuple[EMS, int]:
    """Empirical model statistics on the grid ``lam`` from the trajectories started at ``x_T``.

    Args:
        model: a score model; schedule: its noise schedule.
        x_T: ``Tensor[n, d]`` calibration draws at ``lam[0]``.
        lam: ``[K + 1]`` increasing half log-SNR grid (the sampler's lambda range).
        rtol: tolerance of the reference trajectories; h: finite-difference step (units of x and
            of lambda).

    Returns:
        ``(ems, evals)``: the statistics and the number of batched model evaluations spent.

    Source: Zheng, Lu, Chen & Zhu 2023, arXiv 2310.13268, eq. 10-11 and Appendix C (derived; the
    official code does not release it); see the module docstring.
    """
    lam = np.asarray(torch.as_tensor(lam, dtype=torch.float64).numpy(), dtype=float)
    xs, evals = reference_solve(model, schedule, x_T, lam, rtol=rtol, atol=rtol)
    d = int(x_T.shape[1])
    K = len(lam)

    def diag_jacobian(x: torch.Tensor, at: float) -> torch.Tensor:
        """Mean over the rows of diag grad_x G at (x, at): ``Tensor[d]``."""
        out = torch.empty(d, dtype=torch.float64)
        for j in range(d):
            e = torch.zeros(d, dtype=torch.float64)
            e[j] = h
            diff = _g(model, schedule, x + e, at)[:, j] - _g(model, schedule, x - e, at)[:, j]
            out[j] = (diff / (2 * h)).mean()
        return out

    l_arr, s_arr, b_arr = np.empty((K, d)), np.empty((K, d)), np.empty((K, d))
    for k in range(K):
        x = xs[k]
        a = float(schedule.alpha_sigma_of_lambda(lam[k])[0])
        dloga = float(schedule.dlog_alpha_dlambda(lam[k]))
        g0 = _g(model, schedule, x, lam[k])
        v = dloga * x - g0  # dx / d lambda
        dg = (_g(model, schedule, x + h * v, lam[k] + h) - _g(model, schedule, x - h * v, lam[k] - h)) / (
            2 * h
        )
        lk = diag_jacobian(x, lam[k])
        dlk = (diag_jacobian(x + h * v, lam[k] + h) - diag_jacobian(x - h * v, lam[k] - h)) / (2 * h)
        evals += 3 + 6 * d
        l_arr[k] = lk.numpy()
        nn = (g0 - lk * x) / a
        dn = (dg - dlk * x - lk * v) / a - dloga * nn
        nn_np, dn_np = nn.numpy(), dn.numpy()
        mn, md = nn_np.mean(0), dn_np.mean(0)
        var = ((nn_np - mn) ** 2).mean(0)
        cov = ((nn_np - mn) * (dn_np - md)).mean(0)
        floor = 1e-12 * (1 + (nn_np**2).mean(0))
        s_k = np.where(var > floor, cov / np.maximum(var, floor), 0.0)
        s_arr[k], b_arr[k] = s_k, md - s_k * mn
    return EMS(lam=lam, l=l_arr, s=s_arr, b=b_arr), int(evals)
