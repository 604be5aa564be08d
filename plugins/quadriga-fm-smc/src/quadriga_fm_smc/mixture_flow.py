"""Exact flow-matching quantities of a Gaussian-mixture data law, and its linear-Gaussian posterior.

Path (rectified-flow / conditional-OT path of flow matching): ``x_t = t x1 + (1 - t) x0`` with
``x0 ~ N(0, I)`` independent of ``x1 ~ p1 = sum_k pi_k N(mu_k, S_k)``, ``t in [0, 1]``.

Per component the pair ``(x1, x_t)`` is jointly Gaussian, so **[derived]**:

- marginal: ``p_t = sum_k pi_k N(t mu_k, C_k(t))`` with ``C_k(t) = t^2 S_k + (1 - t)^2 I``;
- ``E[x1 | x_t = x, k] = mu_k + t S_k C_k^{-1} (x - t mu_k)`` and
  ``E[x0 | x_t = x, k] = (1 - t) C_k^{-1} (x - t mu_k)``;
- the flow-matching velocity ``v(x, t) = E[x1 - x0 | x_t = x]`` (Lipman et al. 2023, eq. 8 and
  the marginal-velocity identity, eq. 9; Liu et al. 2023, eq. 1) is

  ``v(x, t) = sum_k r_k(x, t) [mu_k + (t S_k - (1 - t) I) C_k^{-1} (x - t mu_k)]``,

  with responsibilities ``r_k ∝ pi_k N(x; t mu_k, C_k)``; finite on all of [0, 1] when every
  ``S_k`` is positive definite;
- the score ``grad log p_t(x) = -sum_k r_k C_k^{-1} (x - t mu_k) = (t v(x, t) - x) / (1 - t)``
  (Tweedie: ``E[x0 | x_t] = x - t v``), the second form being what a sampler uses for a learned ``v``.

Observation ``y = A x1 + e``, ``e ~ N(0, s^2 I_m)``: the posterior is again a mixture
(Bishop 2006, eqs. 2.113-2.117, per component):
``S'_k = (S_k^{-1} + A^T A / s^2)^{-1}``, ``mu'_k = S'_k (S_k^{-1} mu_k + A^T y / s^2)``,
``pi'_k ∝ pi_k N(y; A mu_k, A S_k A^T + s^2 I)``, and the evidence
``p(y) = sum_k pi_k N(y; A mu_k, A S_k A^T + s^2 I)``.

Everything here is float64 torch; nothing is learned.
"""

from __future__ import annotations

import math
from typing import Any

import torch

__all__ = ["GaussianMixtureLaw", "gaussian_log_density"]

_LOG_2PI = math.log(2.0 * math.pi)


def gaussian_log_density(r: torch.Tensor, chol: torch.Tensor) -> torch.Tensor:
    """``log N(r; 0, L L^T)``: residuals ``r: Tensor[..., K, d]``, Cholesky factors ``chol: Tensor[K, d, d]``.

    Returns ``Tensor[..., K]`` (nats).

    Source: the multivariate normal density.
    """
    d = r.shape[-1]
    z = torch.linalg.solve_triangular(chol, r.unsqueeze(-1), upper=False).squeeze(-1)
    logdet = torch.log(torch.diagonal(chol, dim1=-2, dim2=-1)).sum(-1)
    return -0.5 * (z * z).sum(-1) - logdet - 0.5 * d * _LOG_2PI


class GaussianMixtureLaw:
    """A Gaussian mixture ``sum_k pi_k N(mu_k, S_k)`` with its exact flow-matching velocity.

    Args:
        weights: ``Tensor[K]`` positive, normalised here.
        means: ``Tensor[K, d]``.
        covariances: ``Tensor[K, d, d]`` symmetric positive definite.

    Shapes: ``x: Tensor[n, d]``; ``t`` a float in [0, 1]; outputs ``Tensor[n, d]`` or ``Tensor[n]``.
    Units: those of ``x``; log densities in nats.

    Raises:
        ValueError: shapes that disagree, or covariances that are not positive definite.

    Source: module docstring (derived from the Gaussian conditioning formulas; Lipman et al. 2023,
    "Flow matching for generative modeling", eq. 9 for the marginal velocity).
    """

    def __init__(self, weights: Any, means: Any, covariances: Any) -> None:
        w = torch.as_tensor(weights, dtype=torch.float64).reshape(-1)
        mu = torch.as_tensor(means, dtype=torch.float64)
        cov = torch.as_tensor(covariances, dtype=torch.float64)
        if mu.ndim != 2 or cov.shape != (mu.shape[0], mu.shape[1], mu.shape[1]) or w.shape[0] != mu.shape[0]:
            raise ValueError(
                f"weights {tuple(w.shape)}, means {tuple(mu.shape)} and covariances {tuple(cov.shape)} "
                "must be [K], [K, d] and [K, d, d]"
            )
        if (w <= 0).any():
            raise ValueError("mixture weights must be positive")
        self.weights = w / w.sum()
        self.means = mu
        self.covariances = 0.5 * (cov + cov.transpose(-1, -2))
        try:
            self._chol1 = torch.linalg.cholesky(self.covariances)
        except RuntimeError as exc:  # torch.linalg.LinAlgError subclasses RuntimeError
            raise ValueError(f"a component covariance is not positive definite: {exc}") from None
        self._cache: dict[float, tuple[torch.Tensor, ...]] = {}

    @property
    def dim(self) -> int:
        """d."""
        return int(self.means.shape[1])

    @property
    def num_components(self) -> int:
        """K."""
        return int(self.means.shape[0])

    @property
    def mean(self) -> torch.Tensor:
        """Exact mean ``Tensor[d]``."""
        return self.weights @ self.means

    @property
    def covariance(self) -> torch.Tensor:
        """Exact covariance ``Tensor[d, d]`` (law of total covariance)."""
        m = self.mean
        dev = self.means - m
        return (self.weights[:, None, None] * (self.covariances + dev[:, :, None] * dev[:, None, :])).sum(0)

    # ----------------------------------------------------------------- time-t marginal
    def _at(self, t: float) -> tuple[torch.Tensor, ...]:
        """Per-component constants at time t (cached): ``C_k^{-1} [K, d, d]``, ``log det C_k + d log 2 pi``
        ``[K]``, ``t mu_k [K, d]`` and ``(t S_k - (1 - t) I) C_k^{-1} [K, d, d]``."""
        key = float(t)
        if key not in self._cache:
            eye = torch.eye(self.dim, dtype=torch.float64)
            cov_t = key**2 * self.covariances + (1.0 - key) ** 2 * eye
            chol = torch.linalg.cholesky(cov_t)
            prec = torch.cholesky_inverse(chol)
            prec = 0.5 * (prec + prec.transpose(-1, -2))
            norm = 2 * torch.log(torch.diagonal(chol, dim1=-2, dim2=-1)).sum(-1) + self.dim * _LOG_2PI
            gain = (key * self.covariances - (1.0 - key) * eye) @ prec
            self._cache[key] = (prec, norm - 2 * self.weights.log(), key * self.means, gain)
            if len(self._cache) > 4096:
                self._cache.pop(next(iter(self._cache)))
        return self._cache[key]

    def _terms(self, x: torch.Tensor, t: float) -> tuple[torch.Tensor, torch.Tensor]:
        """Log of ``pi_k N(x; t mu_k, C_k)`` ``[n, K]`` and residuals ``x - t mu_k`` ``[n, K, d]``."""
        prec, norm, tmu, _ = self._at(t)
        r = x.to(torch.float64)[:, None, :] - tmu  # [n, K, d]
        quad = torch.einsum("nki,kij,nkj->nk", r, prec, r)
        return -0.5 * (quad + norm), r

    def component_log_probs(self, x: torch.Tensor, t: float = 1.0) -> torch.Tensor:
        """``log pi_k + log N(x; t mu_k, C_k(t))``, ``Tensor[n, d] -> Tensor[n, K]`` (nats)."""
        return self._terms(x, t)[0]

    def log_prob_t(self, x: torch.Tensor, t: float) -> torch.Tensor:
        """``log p_t(x)``, ``Tensor[n, d] -> Tensor[n]`` (nats, normalised)."""
        logc, _ = self._terms(x, t)
        return torch.logsumexp(logc, -1).to(x.dtype)

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """``log p_1(x)`` of the mixture itself, ``Tensor[n, d] -> Tensor[n]`` (nats, normalised)."""
        return self.log_prob_t(x, 1.0)

    def velocity(self, x: torch.Tensor, t: float) -> torch.Tensor:
        """Exact flow-matching velocity ``v(x, t) = E[x1 - x0 | x_t = x]``, ``Tensor[n, d] -> Tensor[n, d]``.

        Differentiable in ``x`` (for gradient guidance). Units of x per unit time.
        """
        logc, r = self._terms(x, t)
        gain = self._at(t)[3]
        resp = torch.softmax(logc, -1)  # [n, K]
        vk = self.means + torch.einsum("kij,nkj->nki", gain, r)  # [n, K, d]
        return (resp.unsqueeze(-1) * vk).sum(1).to(x.dtype)

    def score_t(self, x: torch.Tensor, t: float) -> torch.Tensor:
        """Exact score ``grad log p_t(x) = -sum_k r_k C_k^{-1} (x - t mu_k)``, ``[n, d] -> [n, d]``."""
        logc, r = self._terms(x, t)
        prec = self._at(t)[0]
        resp = torch.softmax(logc, -1)
        return -(resp.unsqueeze(-1) * torch.einsum("kij,nkj->nki", prec, r)).sum(1).to(x.dtype)

    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Exact draws ``Tensor[num_samples, d]`` (float64): a component, then a Gaussian draw."""
        k = torch.multinomial(self.weights, int(num_samples), replacement=True, generator=generator)
        z = torch.randn(int(num_samples), self.dim, generator=generator, dtype=torch.float64)
        return self.means[k] + torch.einsum("nij,nj->ni", self._chol1[k], z)

    # ----------------------------------------------------------------- conditioning
    def posterior(
        self, A: torch.Tensor, y: torch.Tensor, noise_std: float
    ) -> tuple[GaussianMixtureLaw, float]:
        """The posterior mixture given ``y = A x + N(0, noise_std^2 I)`` and ``log p(y)``.

        Args:
            A: ``Tensor[m, d]`` observation matrix.
            y: ``Tensor[m]`` observation.
            noise_std: ``s > 0`` (units of y).

        Returns:
            ``(posterior law, log evidence in nats)``.

        Source: Bishop 2006, "Pattern recognition and machine learning", eqs. 2.113-2.117, per component.
        """
        A = torch.as_tensor(A, dtype=torch.float64)
        y = torch.as_tensor(y, dtype=torch.float64).reshape(-1)
        s2 = float(noise_std) ** 2
        m = A.shape[0]
        prec = torch.cholesky_inverse(self._chol1)  # S_k^{-1}
        post_prec = prec + (A.T @ A) / s2
        post_cov = torch.linalg.inv(post_prec)
        post_cov = 0.5 * (post_cov + post_cov.transpose(-1, -2))
        rhs = torch.einsum("kij,kj->ki", prec, self.means) + (A.T @ y) / s2
        post_mean = torch.einsum("kij,kj->ki", post_cov, rhs)
        pred_cov = A @ self.covariances @ A.T + s2 * torch.eye(m, dtype=torch.float64)
        pred_chol = torch.linalg.cholesky(pred_cov)
        log_pred = gaussian_log_density(y - self.means @ A.T, pred_chol) + self.weights.log()  # [K]
        log_z = float(torch.logsumexp(log_pred, 0))
        return GaussianMixtureLaw(torch.softmax(log_pred, 0), post_mean, post_cov), log_z
