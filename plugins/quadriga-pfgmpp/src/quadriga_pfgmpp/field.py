"""The exact PFGM++ field of an isotropic Gaussian mixture, through the denoiser E[y | x] at (sigma, D).

The PFGM++ ODE needs only the posterior mean of the data under the kernel p_r(x | y) at
r = sigma sqrt(D): dx / d sigma = (x - E[y | x]) / sigma (Xu et al. 2023, eq. 5 rewritten with the
alignment, sec. 4; the same form as EDM's dx / d sigma = (x - D(x, sigma)) / sigma, Karras et al.
2022, eq. 3). For a finite data set the weights are closed-form,
w_i proportional to (||x - y_i||^2 + r^2)^(-(N + D) / 2) (:func:`empirical_denoiser`). For a mixture
sum_k pi_k N(mu_k, c_k^2 I) the kernel's scale-mixture form (x - y = tau g, tau^2 = sigma^2 D / W,
W ~ chi^2_D, see :mod:`quadriga_pfgmpp.kernel`) gives, for each tau, the Gaussian posterior
(Tweedie), and the field is one-dimensional quadrature over s = log W:

    E[y | x] = sum_{j,k} a_jk (mu_k + c_k^2 / v_jk (x - mu_k)),  v_jk = c_k^2 + tau_j^2,
    a_jk  proportional to  q_j pi_k v_jk^(-N / 2) exp(-||x - mu_k||^2 / (2 v_jk)),

with q_j the chi^2_D density of log W on a uniform grid of ``nodes`` points between its 1e-30
quantile (minus min(40 sqrt(2 / D), 8), room for the posterior far from the data) and its
1 - 1e-30 quantile (trapezoid rule: the integrand is smooth and decays at both ends, so the error
falls geometrically with the nodes; the test suite measures it against 4 x the nodes). For D = inf the
grid is the single point tau = sigma: the exact Gaussian-mixture denoiser of diffusion models.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from scipy import stats

from quadriga.errors import ConfigError
from quadriga_pfgmpp.kernel import check_aug_dim

__all__ = ["MixtureField", "empirical_denoiser", "log_w_grid"]

_TAIL = 1e-30
_CHUNK = 512


def log_w_grid(aug_dim: float, nodes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Quadrature of W ~ chi^2_D in s = log W: ``(W: Tensor[Q], log q: Tensor[Q])``, q summing to one.

    Raises:
        ConfigError: D = inf (no grid: tau = sigma) or fewer than 8 nodes.
    """
    d = check_aug_dim(aug_dim)
    if math.isinf(d):
        raise ConfigError("the chi^2_D grid is for finite D only.", key="aug_dim")
    if int(nodes) < 8:
        raise ConfigError(f"'quadrature_nodes' must be >= 8, got {nodes}.", key="quadrature_nodes")
    # the lower end reaches past the prior's 1e-30 quantile by 40 prior widths of log W (sqrt(2 / D)),
    # at most 8:
    # far from the data the likelihood pulls W down (a wider kernel), and the integrand still decays as
    # W^((N + D) / 2) there, so the extension costs no accuracy
    lo = math.log(stats.chi2.ppf(_TAIL, d)) - min(40 * math.sqrt(2 / d), 8.0)
    hi = math.log(stats.chi2.isf(_TAIL, d))
    s = torch.linspace(lo, hi, int(nodes), dtype=torch.float64)
    log_q = 0.5 * d * s - 0.5 * s.exp()  # log density of log W, up to a constant
    return s.exp(), log_q - torch.logsumexp(log_q, 0)


class MixtureField:
    """Exact PFGM++ denoiser of sum_k pi_k N(mu_k, c_k^2 I) at any (sigma, D); see the module docstring.

    Args:
        weights: ``Tensor[K]`` mixture weights (normalised here).
        means: ``Tensor[K, N]`` (units of x).
        variances: ``Tensor[K]`` isotropic component variances c_k^2 (units of x squared).
        nodes: quadrature points Q over log W (finite D).

    Raises:
        ConfigError: shapes that disagree, non-positive variances or weights.

    Source: Xu et al. 2023 (PFGM++, ICML), eq. 4 (kernel) and eq. 5 / sec. 4 (ODE in sigma); the
    scale-mixture reading of the kernel and the quadrature are derived here (module docstring).
    """

    def __init__(self, weights: Any, means: Any, variances: Any, *, nodes: int = 512) -> None:
        self.means = torch.as_tensor(means, dtype=torch.float64)
        w = torch.as_tensor(weights, dtype=torch.float64).reshape(-1)
        self.variances = torch.as_tensor(variances, dtype=torch.float64).reshape(-1)
        if self.means.ndim != 2 or w.shape[0] != self.means.shape[0] or self.variances.shape != w.shape:
            raise ConfigError("weights [K], means [K, N] and variances [K] must agree in K.", key="target")
        if (w <= 0).any() or (self.variances <= 0).any():
            raise ConfigError("mixture weights and variances must be positive.", key="target")
        self.log_weights = (w / w.sum()).log()
        self.dim = int(self.means.shape[1])
        self.nodes = int(nodes)
        self._grids: dict[float, tuple[torch.Tensor, torch.Tensor]] = {}

    @classmethod
    def from_target(cls, target: Any, *, nodes: int = 512) -> MixtureField:
        """Build from a target with ``mixture_weights``, ``component_means``, ``component_covariances``.

        Raises:
            ConfigError: the target is not a mixture, or a component covariance is not c^2 I.
        """
        try:
            w, mu, cov = target.mixture_weights, target.component_means, target.component_covariances
        except AttributeError as exc:
            raise ConfigError(
                f"target '{type(target).__name__}' is not a Gaussian mixture; the exact PFGM++ field needs "
                "mixture_weights, component_means and component_covariances (e.g. 'gaussian-mixture'), or "
                "give a Fitted PFGM++ denoiser.",
                key="target",
            ) from exc
        cov = torch.as_tensor(cov, dtype=torch.float64)
        c2 = torch.diagonal(cov, dim1=-2, dim2=-1).mean(-1)
        eye = torch.eye(cov.shape[-1], dtype=torch.float64)
        if not torch.allclose(cov, c2[:, None, None] * eye, atol=1e-12 * float(c2.max())):
            raise ConfigError(
                "the exact PFGM++ field here needs isotropic components (covariance c^2 I); give the "
                "mixture a scalar 'scale'.",
                key="target",
            )
        return cls(w, mu, c2, nodes=nodes)

    def _grid(self, aug_dim: float) -> tuple[torch.Tensor, torch.Tensor]:
        if aug_dim not in self._grids:
            self._grids[aug_dim] = log_w_grid(aug_dim, self.nodes)
        return self._grids[aug_dim]

    def denoise(self, x: torch.Tensor, sigma: float, aug_dim: float) -> torch.Tensor:
        """E[y | x] under the kernel at r = sigma sqrt(D): ``Tensor[n, N] -> Tensor[n, N]`` (units of x).

        Args:
            x: ``Tensor[n, N]``; sigma: > 0 (units of x); aug_dim: D >= 1 or inf.
        """
        d = check_aug_dim(aug_dim)
        x = x.to(torch.float64)
        if math.isinf(d):
            tau2, log_q = (
                torch.tensor([float(sigma) ** 2], dtype=torch.float64),
                torch.zeros(1, dtype=torch.float64),
            )
        else:
            w, log_q = self._grid(d)
            tau2 = float(sigma) ** 2 * d / w
        v = self.variances[:, None] + tau2[None, :]  # [K, Q]
        base = self.log_weights[:, None] + log_q[None, :] - 0.5 * self.dim * v.log()  # [K, Q]
        shrink = self.variances[:, None] / v  # [K, Q]
        out = torch.empty_like(x)
        for start in range(0, x.shape[0], _CHUNK):
            xc = x[start : start + _CHUNK]
            diff = xc[:, None, :] - self.means[None]  # [c, K, N]
            dist2 = (diff * diff).sum(-1)  # [c, K]
            logit = base[None] - 0.5 * dist2[:, :, None] / v[None]  # [c, K, Q]
            a = torch.softmax(logit.reshape(xc.shape[0], -1), dim=1).reshape(logit.shape)
            ak = a.sum(-1)  # [c, K]
            ak_shrink = (a * shrink[None]).sum(-1)  # [c, K]
            out[start : start + _CHUNK] = ak @ self.means + (ak_shrink[:, :, None] * diff).sum(1)
        return out


def empirical_denoiser(points: torch.Tensor, x: torch.Tensor, sigma: float, aug_dim: float) -> torch.Tensor:
    """Exact E[y | x] for the empirical law of ``points`` (Xu et al. 2023, the field of a finite data set).

    w_i proportional to (||x - y_i||^2 + r^2)^(-(N + D) / 2), r = sigma sqrt(D); for D = inf the
    Gaussian softmax of -||x - y_i||^2 / (2 sigma^2).

    Args:
        points: ``Tensor[m, N]``; x: ``Tensor[n, N]``; sigma > 0; aug_dim: D >= 1 or inf.

    Returns:
        ``Tensor[n, N]`` float64.
    """
    d = check_aug_dim(aug_dim)
    y = points.to(torch.float64)
    dist2 = torch.cdist(x.to(torch.float64), y) ** 2
    if math.isinf(d):
        logit = -0.5 * dist2 / float(sigma) ** 2
    else:
        logit = -0.5 * (y.shape[1] + d) * torch.log1p(dist2 / (float(sigma) ** 2 * d))
    return torch.softmax(logit, dim=1) @ y
