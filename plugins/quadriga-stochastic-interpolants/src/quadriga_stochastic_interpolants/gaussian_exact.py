"""Exact velocity, denoiser and score of an interpolant between two independent Gaussians.

For x0 ~ N(m0, S0), x1 ~ N(m1, S1), z ~ N(0, I) independent, x_t is Gaussian with

    mu_t = alpha m0 + beta m1,      C_t = alpha^2 S0 + beta^2 S1 + gamma^2 I,

and, since (alpha' x0 + beta' x1 + gamma' z, x_t) is jointly Gaussian with cross-covariance
alpha alpha' S0 + beta beta' S1 + gamma gamma' I = C_t' / 2,

    b(t, x)   = mu_t' + (1/2) C_t' C_t^{-1} (x - mu_t),
    s(t, x)   = -C_t^{-1} (x - mu_t),
    eta(t, x) = gamma C_t^{-1} (x - mu_t)        (one-sided: alpha C_t^{-1} (x - mu_t)).

When S0 and S1 commute (diagonal here) the probability-flow ODE has the closed-form flow map
X_t = mu_t + C_t^{1/2} C_0^{-1/2} (X_0 - mu_0), the oracle for the integrators' tests.
"""

from __future__ import annotations

import attrs
import torch

from quadriga_stochastic_interpolants.interpolants import Interpolant

__all__ = ["GaussianFields"]


@attrs.define(kw_only=True, eq=False)
class GaussianFields:
    """Exact fields of ``interpolant`` between N(m0, diag(v0)) and N(m1, diag(v1)).

    Attributes:
        interpolant: the :class:`Interpolant` (``gaussian_source`` must match ``m0 = 0, v0 = 1``
            when the one-sided form is wanted).
        m0, m1: ``Tensor[d]`` means; v0, v1: ``Tensor[d]`` positive variances (float64).
        drift_error: optional ``callable(t, x) -> Tensor[n, d]`` added to the velocity (a known
            model error for the ODE-vs-SDE mechanism); the score stays exact.

    Shapes: ``velocity``/``score``/``denoiser``: ``(t, x: Tensor[n, d]) -> Tensor[n, d]``
    (t a float or ``Tensor[n, 1]``).
    Units: those of x (velocity: x per unit time; score: 1 / x).

    Source: Albergo, Boffi & Vanden-Eijnden 2023 (arXiv 2303.08797), Sec. 2 (b and s as conditional
    expectations), evaluated for Gaussian endpoints; cf. the authors' ``interflow/gmm.py``.
    """

    interpolant: Interpolant
    m0: torch.Tensor
    v0: torch.Tensor
    m1: torch.Tensor
    v1: torch.Tensor
    drift_error: object = None
    dtype: torch.dtype = torch.float64

    @property
    def dim(self) -> int:
        """d."""
        return int(self.m0.shape[0])

    def _t(self, t, x: torch.Tensor) -> torch.Tensor:
        t = torch.as_tensor(t, dtype=x.dtype, device=x.device)
        return t.reshape(-1, 1).expand(x.shape[0], 1) if t.numel() == 1 else t.reshape(-1, 1)

    def moments(self, t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``(mu_t, C_t, mu_t', C_t')`` as ``Tensor[n, d]`` (C diagonal) for ``t: Tensor[n, 1]``."""
        a, b, da, db = self.interpolant.alpha_beta(t)
        g2 = self.interpolant.gamma(t).square()
        dg2 = 2 * self.interpolant.gamma_gamma_dot(t)
        mu = a * self.m0 + b * self.m1
        cov = a.square() * self.v0 + b.square() * self.v1 + g2
        dmu = da * self.m0 + db * self.m1
        dcov = 2 * a * da * self.v0 + 2 * b * db * self.v1 + dg2
        return mu, cov, dmu, dcov

    def velocity(self, t, x: torch.Tensor) -> torch.Tensor:
        """b(t, x) (plus ``drift_error`` when set)."""
        tt = self._t(t, x)
        mu, cov, dmu, dcov = self.moments(tt)
        out = dmu + 0.5 * dcov / cov * (x - mu)
        return out if self.drift_error is None else out + self.drift_error(tt, x)

    def score(self, t, x: torch.Tensor) -> torch.Tensor:
        """s(t, x) = -C_t^{-1} (x - mu_t)."""
        mu, cov, _, _ = self.moments(self._t(t, x))
        return -(x - mu) / cov

    def denoiser(self, t, x: torch.Tensor) -> torch.Tensor:
        """eta(t, x) = E[z | x_t = x] (one-sided: E[x0 | x_t = x] for m0 = 0, v0 = 1)."""
        tt = self._t(t, x)
        mu, cov, _, _ = self.moments(tt)
        scale = (
            self.interpolant.alpha_beta(tt)[0] if self.interpolant.one_sided else self.interpolant.gamma(tt)
        )
        return scale * (x - mu) / cov

    def flow_map(self, t: float, x0: torch.Tensor) -> torch.Tensor:
        """Closed-form solution X_t of dX/dt = b(t, X) from X_0 = x0 (no ``drift_error``)."""
        tt = self._t(t, x0)
        zero = self._t(0.0, x0)
        mu, cov, _, _ = self.moments(tt)
        mu0, cov0, _, _ = self.moments(zero)
        return mu + (cov / cov0).sqrt() * (x0 - mu0)
