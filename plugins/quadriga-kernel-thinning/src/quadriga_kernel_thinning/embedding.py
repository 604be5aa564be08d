"""Closed-form kernel mean embeddings of Gaussian mixtures under a Gaussian kernel, and exact MMD.

For the kernel ``k(x, y) = exp(-||x - y||^2 / (2 sigma^2))`` and ``P = sum_k w_k N(mu_k, S_k)``
(a single Gaussian is the case K = 1), with ``Z ~ N(m, S)`` giving
``E exp(-||Z||^2 / (2 sigma^2)) = det(I + S / sigma^2)^(-1/2) exp(-m^T (S + sigma^2 I)^(-1) m / 2)``:

- ``Pk(x)  = E_{Y~P} k(x, Y)
  = sum_k w_k det(I + S_k/sigma^2)^(-1/2) exp(-(x-mu_k)^T (S_k + sigma^2 I)^(-1) (x-mu_k) / 2)``;
- ``PPk    = E k(Y, Y')        = sum_{k,l} w_k w_l det(I + (S_k+S_l)/sigma^2)^(-1/2)
  exp(-(mu_k-mu_l)^T (S_k + S_l + sigma^2 I)^(-1) (mu_k-mu_l) / 2)``;
- ``MMD^2(Q_n, P) = PPk - 2 sum_i q_i Pk(x_i) + sum_{i,j} q_i q_j k(x_i, x_j)`` for weights ``q``
  summing to 1.

Source: Dwivedi & Mackey, Kernel Thinning (JMLR 2024), the appendix on closed-form MMD for
Gaussian and mixture targets; the Gaussian integral is standard.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from quadriga_kernel_thinning.kernels import make_kernel

__all__ = ["double_embedding", "embedding", "mixture_of", "mmd_between", "mmd_to_mixture"]


def _np(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().cpu().double().numpy()
    return np.asarray(value, dtype=np.float64)


def mixture_of(target: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(w[K], mu[K, d], S[K, d, d])`` of a Gaussian or Gaussian-mixture target, else ``None``.

    A target qualifies when it has ``mixture_weights``, ``component_means`` and
    ``component_covariances`` (quadriga-std's ``gaussian-mixture``), or is quadriga-std's
    ``gaussian`` (``mean: Tensor[d]``, ``covariance: Tensor[d, d]``). Moments alone do not
    make a target Gaussian, so other targets with ``mean``/``covariance`` return ``None``.
    """
    if all(hasattr(target, a) for a in ("mixture_weights", "component_means", "component_covariances")):
        w = _np(target.mixture_weights)
        return w / w.sum(), _np(target.component_means), _np(target.component_covariances)
    try:
        from quadriga_std.targets.gaussian import Gaussian
    except ImportError:  # pragma: no cover - quadriga-std is a dependency
        return None
    if isinstance(target, Gaussian):
        return np.ones(1), _np(target.mean)[None, :], _np(target.covariance)[None, :, :]
    return None


def _gauss_expect(diff: np.ndarray, cov: np.ndarray, sigma: float) -> np.ndarray:
    """``E exp(-||Z||^2/(2 sigma^2))`` for ``Z ~ N(diff_i, cov)``: ``diff[n, d]`` -> ``[n]``."""
    d = cov.shape[0]
    a = cov + sigma**2 * np.eye(d)
    chol = np.linalg.cholesky(a)
    z = np.linalg.solve(chol, diff.T)  # [d, n]
    quad = np.einsum("ij,ij->j", z, z)
    log_det_ratio = 2.0 * np.log(np.diag(chol)).sum() - 2.0 * d * math.log(sigma)
    return np.exp(-0.5 * log_det_ratio - 0.5 * quad)


def embedding(x: np.ndarray, w: np.ndarray, mu: np.ndarray, cov: np.ndarray, sigma: float) -> np.ndarray:
    """``Pk(x_i)`` for ``x[n, d]`` (see the module docstring); returns ``[n]`` (dimensionless)."""
    out = np.zeros(x.shape[0])
    for wk, mk, sk in zip(w, mu, cov, strict=False):
        out += wk * _gauss_expect(x - mk, sk, sigma)
    return out


def double_embedding(w: np.ndarray, mu: np.ndarray, cov: np.ndarray, sigma: float) -> float:
    """``PPk = E k(Y, Y')`` for independent ``Y, Y' ~ P`` (dimensionless, in (0, 1])."""
    total = 0.0
    for k in range(len(w)):
        for j in range(len(w)):
            total += w[k] * w[j] * float(_gauss_expect((mu[k] - mu[j])[None, :], cov[k] + cov[j], sigma)[0])
    return total


def _weights(n: int, log_weights: Any) -> np.ndarray:
    if log_weights is None:
        return np.full(n, 1.0 / n)
    lw = _np(log_weights)
    q = np.exp(lw - lw.max())
    return q / q.sum()


def _quad_form(
    x: np.ndarray, q: np.ndarray, sigma: float, y: np.ndarray | None = None, r: np.ndarray | None = None
) -> float:
    """``sum_ij q_i r_j k(x_i, y_j)`` in row blocks (O(block * m) memory)."""
    kern = make_kernel("gaussian", sigma)
    y, r = (x, q) if y is None else (y, r)
    step = max(1, 2_000_000 // max(len(y), 1))
    total = 0.0
    for start in range(0, len(x), step):
        block = kern.matrix(np.ascontiguousarray(x[start : start + step]), y)
        total += float(q[start : start + step] @ (block @ r))
    return total


def mmd_to_mixture(
    x: Any, w: np.ndarray, mu: np.ndarray, cov: np.ndarray, sigma: float, log_weights: Any = None
) -> float:
    """Exact ``MMD(Q, P)`` between the (weighted) empirical measure of ``x[n, d]`` and the mixture P.

    Args:
        x: ``[n, d]`` points (array or tensor, units of x).
        w, mu, cov: the mixture (:func:`mixture_of`).
        sigma: Gaussian kernel bandwidth (units of x).
        log_weights: optional ``[n]`` unnormalised log weights of the points.

    Returns:
        MMD (dimensionless, >= 0); a negative round-off of MMD^2 is reported as 0.
    """
    x = _np(x)
    q = _weights(len(x), log_weights)
    sq = (
        double_embedding(w, mu, cov, sigma)
        - 2.0 * float(q @ embedding(x, w, mu, cov, sigma))
        + _quad_form(x, q, sigma)
    )
    return math.sqrt(max(sq, 0.0))


def mmd_between(x: Any, y: Any, sigma: float, log_wx: Any = None, log_wy: Any = None) -> float:
    """Empirical (V-statistic) ``MMD`` between point sets ``x[n, d]`` and ``y[m, d]`` (Gaussian kernel)."""
    x, y = _np(x), _np(y)
    qx, qy = _weights(len(x), log_wx), _weights(len(y), log_wy)
    sq = _quad_form(x, qx, sigma) + _quad_form(y, qy, sigma) - 2.0 * _quad_form(x, qx, sigma, y, qy)
    return math.sqrt(max(sq, 0.0))
