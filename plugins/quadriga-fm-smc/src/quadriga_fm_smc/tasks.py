"""``linear-gaussian-posterior``: a Gaussian-mixture prior, a linear-Gaussian observation, its posterior.

The prior ``p1 = (1/K) sum_k N(mu_k, sigma_c^2 I_d)`` has means of norm ``radius`` (equally spaced on a
circle for d = 2, uniform on the sphere otherwise, drawn by ``prepare``). The observation is
``y = A x* + e`` with ``x* ~ p1`` drawn once by ``prepare``, ``e ~ N(0, noise_std^2 I_m)``, and ``A``
either the first ``m`` coordinates (``observation = "coordinates"``) or a Gaussian matrix with
``N(0, 1/d)`` entries (``observation = "gaussian"``). The target is the posterior ``p(x | y)``,
a Gaussian mixture in closed form (:meth:`GaussianMixtureLaw.posterior`), so it has exact samples,
an exact normalising constant ``p(y)`` and exact moments.

Besides the ``Target`` API it offers what the flow samplers need: ``prior`` (the
:class:`~quadriga_fm_smc.mixture_flow.GaussianMixtureLaw` with the exact flow-matching velocity),
``log_likelihood(x)`` and ``log_evidence``.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import torch

from quadriga import param
from quadriga.errors import ConfigError
from quadriga.interfaces import Target
from quadriga.validators import int_at_least, non_negative, one_of, positive, positive_int
from quadriga_fm_smc.mixture_flow import GaussianMixtureLaw

__all__ = ["OBSERVATIONS", "LinearGaussianPosterior"]

OBSERVATIONS = ("coordinates", "gaussian")
_LOG_2PI = math.log(2.0 * math.pi)


def _obs_dim(instance: Any, attribute: Any, value: Any) -> None:
    if value is None:
        return
    int_at_least(1, "or leave it unset (None) to observe all d coordinates")(instance, attribute, value)


@attrs.define(kw_only=True)
class LinearGaussianPosterior(Target):
    """Posterior of a Gaussian-mixture prior under ``y = A x + N(0, noise_std^2 I)``.

    Shapes: ``log_prob: Tensor[n, d] -> Tensor[n]``, ``score: Tensor[n, d] -> Tensor[n, d]``,
    ``sample(n) -> Tensor[n, d]``; ``observation_matrix: Tensor[m, d]``, ``observation: Tensor[m]``.
    Units: those of x (dimensionless here); log densities in nats (``log_prob`` is the unnormalised
    ``log p1(x) + log p(y | x)``; ``log_prob - log_evidence`` is normalised).

    Raises:
        ConfigError: invalid parameters (each validator names its key), or ``obs_dim > dim`` for
            coordinate observations.

    Source: Bishop 2006, eqs. 2.113-2.117 (Gaussian conditioning per component); test design of
    Qu & Liu 2026, "TFTF: Training-free targeted flow for conditional sampling" (GMM prior with
    linear-Gaussian observations, whose posterior is a GMM).
    """

    dim: int = param(2, doc="dimension d of x", validator=positive_int)
    num_components: int = param(4, doc="number K of prior components", validator=positive_int)
    radius: float = param(3.0, doc="norm of every prior component mean (units of x)", validator=non_negative)
    component_std: float = param(
        0.5,
        doc="standard deviation sigma_c of each prior component (units of x)",
        validator=positive,
    )
    obs_dim: int | None = param(None, doc="m, number of observed values (None: m = d)", validator=_obs_dim)
    observation: str = param(
        "coordinates",
        doc="'coordinates' (A = first m rows of I) or 'gaussian' (A with N(0, 1/d) entries)",
        validator=one_of(OBSERVATIONS),
    )
    noise_std: float = param(
        0.5,
        doc="observation noise standard deviation s (units of y)",
        validator=positive,
    )
    _prior: Any = attrs.field(init=False, default=None)
    _post: Any = attrs.field(init=False, default=None)
    _A: Any = attrs.field(init=False, default=None)
    _y: Any = attrs.field(init=False, default=None)
    _log_z: float = attrs.field(init=False, default=math.nan)

    def __attrs_post_init__(self) -> None:
        m = self.dim if self.obs_dim is None else int(self.obs_dim)
        if self.observation == "coordinates" and m > self.dim:
            raise ConfigError(
                f"obs_dim = {m} exceeds dim = {self.dim} for coordinate observations; "
                "use obs_dim <= dim or observation = 'gaussian'.",
                key="obs_dim",
            )
        self.prepare(generator=torch.Generator().manual_seed(0))

    @property
    def m(self) -> int:
        """Number of observed values m."""
        return self.dim if self.obs_dim is None else int(self.obs_dim)

    def prepare(self, *, generator: torch.Generator) -> None:
        """Draw the prior means (d > 2), ``A`` (gaussian observation), ``x*`` and ``y`` from ``generator``."""
        d, k = int(self.dim), int(self.num_components)
        if d == 2:
            ang = torch.arange(k, dtype=torch.float64) * (2 * math.pi / k)
            means = torch.stack([ang.cos(), ang.sin()], -1)
        elif d == 1:
            means = (
                torch.linspace(-1.0, 1.0, k, dtype=torch.float64).reshape(k, 1) if k > 1 else torch.ones(1, 1)
            )
        else:
            means = torch.randn(k, d, generator=generator, dtype=torch.float64)
            means = means / means.norm(dim=1, keepdim=True)
        means = float(self.radius) * means
        cov = float(self.component_std) ** 2 * torch.eye(d, dtype=torch.float64).expand(k, d, d)
        prior = GaussianMixtureLaw(torch.full((k,), 1.0 / k, dtype=torch.float64), means, cov)
        if self.observation == "coordinates":
            A = torch.eye(d, dtype=torch.float64)[: self.m]
        else:
            A = torch.randn(self.m, d, generator=generator, dtype=torch.float64) / math.sqrt(d)
        x_star = prior.sample(1, generator=generator)[0]
        y = A @ x_star + float(self.noise_std) * torch.randn(self.m, generator=generator, dtype=torch.float64)
        self.set_observation(prior, A, y)

    def set_observation(self, prior: GaussianMixtureLaw, A: Any, y: Any) -> None:
        """Replace the prior, ``A: Tensor[m, d]`` and ``y: Tensor[m]`` and recompute the exact posterior."""
        self._prior = prior
        self._A = torch.as_tensor(A, dtype=torch.float64)
        self._y = torch.as_tensor(y, dtype=torch.float64).reshape(-1)
        self._post, self._log_z = prior.posterior(self._A, self._y, float(self.noise_std))

    # ------------------------------------------------------------------ what the samplers use
    @property
    def prior(self) -> GaussianMixtureLaw:
        """The prior mixture, with its exact flow-matching velocity ``prior.velocity(x, t)``."""
        return self._prior

    @property
    def posterior(self) -> GaussianMixtureLaw:
        """The exact posterior mixture."""
        return self._post

    @property
    def observation_matrix(self) -> torch.Tensor:
        """``A: Tensor[m, d]``."""
        return self._A

    @property
    def observation_value(self) -> torch.Tensor:
        """``y: Tensor[m]``."""
        return self._y

    @property
    def log_evidence(self) -> float:
        """``log p(y)`` in nats (exact)."""
        return float(self._log_z)

    def log_likelihood(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised ``log N(y; A x, s^2 I)``, ``Tensor[n, d] -> Tensor[n]`` (nats); differentiable in x."""
        r = self._y.to(x.dtype) - x @ self._A.T.to(x.dtype)
        s = float(self.noise_std)
        return -0.5 * (r * r).sum(-1) / s**2 - self.m * (math.log(s) + 0.5 * _LOG_2PI)

    def prior_sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Exact prior draws ``Tensor[num_samples, d]`` (the data a flow-matching model is trained on)."""
        return self._prior.sample(num_samples, generator=generator)

    # ------------------------------------------------------------------ Target API
    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """Unnormalised posterior ``log p1(x) + log p(y | x)``, ``Tensor[n, d] -> Tensor[n]`` (nats)."""
        return self._prior.log_prob(x) + self.log_likelihood(x)

    def score(self, x: torch.Tensor) -> torch.Tensor:
        """``grad log p(x | y)``, ``Tensor[n, d] -> Tensor[n, d]`` (exact, from the posterior mixture)."""
        return self._post.score_t(x, 1.0)

    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Exact posterior draws ``Tensor[num_samples, d]`` (float64)."""
        return self._post.sample(num_samples, generator=generator)

    @property
    def mean(self) -> torch.Tensor:
        """Exact posterior mean ``Tensor[d]``."""
        return self._post.mean

    @property
    def covariance(self) -> torch.Tensor:
        """Exact posterior covariance ``Tensor[d, d]``."""
        return self._post.covariance
