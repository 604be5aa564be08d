"""The curated inference-gym targets, each with its log density written in torch.

Data come from inference-gym's bundled datasets (``inference_gym.internal.data``) and the ground
truth from its ground-truth modules; the flat coordinate order is that of inference-gym's
``VectorModel``. Every density equals inference-gym's NumPy one up to an additive constant
(``tests/test_ig_targets.py``). All arithmetic is float64 (inference-gym's own is float32).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import numpy as np
import torch
from torch.distributions import (
    AffineTransform,
    Bernoulli,
    Beta,
    Cauchy,
    ComposeTransform,
    HalfCauchy,
    MultivariateNormal,
    SigmoidTransform,
    SoftplusTransform,
)

from ._gym import dataset
from .base import InferenceGymTarget

__all__ = [
    "Banana",
    "BrownianMotionMissingMiddle",
    "EightSchools",
    "IllConditionedGaussian",
    "NealsFunnel",
    "StochasticVolatilitySP500Small",
    "SyntheticItemResponseTheory",
]

_F = torch.float64


_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _normal(x: torch.Tensor, loc: Any, scale: Any) -> torch.Tensor:
    """log N(x; loc, scale^2) elementwise (nats), as ``torch.distributions.Normal.log_prob``."""
    scale = torch.as_tensor(scale, dtype=x.dtype)
    return -0.5 * ((x - loc) / scale) ** 2 - scale.log() - _HALF_LOG_2PI


@attrs.define(kw_only=True)
class EightSchools(InferenceGymTarget):
    """Eight schools, centred parameterisation (d = 10): avg_effect, log_stddev, school_effects[8].

    avg_effect ~ N(0, 10), log_stddev ~ N(5, 1), school_effects_i ~ N(avg_effect, exp(log_stddev)),
    y_i ~ N(school_effects_i, sigma_i) with the SAT-coaching data y = (28, 8, -3, 7, -1, 1, 18, 12),
    sigma = (15, 10, 16, 11, 9, 11, 10, 18). No constraint (identity bijector).

    Shapes: ``log_prob: Tensor[n, 10] -> Tensor[n]``; coordinates (avg_effect, log_stddev, school_effects).
    Units: nats; effects in SAT points, log_stddev in log SAT points.

    Raises:
        ValueError: ``z`` not of shape ``[n, 10]``.

    Source: Rubin 1981, "Estimation in parallel randomized experiments", J. Educ. Stat. 6(4);
    Gelman et al. 2013, Bayesian Data Analysis, sec. 5.5; inference-gym ``EightSchools``.
    """

    model: ClassVar[str] = "EightSchools"
    _y: ClassVar[tuple[float, ...]] = (28, 8, -3, 7, -1, 1, 18, 12)
    _sigma: ClassVar[tuple[float, ...]] = (15, 10, 16, 11, 9, 11, 10, 18)

    def _log_density_constrained(self, x: torch.Tensor) -> torch.Tensor:
        """Log joint density ``Tensor[n, 10] -> Tensor[n]`` (nats)."""
        avg, log_sd, theta = x[:, 0], x[:, 1], x[:, 2:]
        y = torch.tensor(self._y, dtype=x.dtype)
        sigma = torch.tensor(self._sigma, dtype=x.dtype)
        lp = _normal(avg, 0.0, 10.0) + _normal(log_sd, 5.0, 1.0)
        lp = lp + _normal(theta, avg[:, None], log_sd.exp()[:, None]).sum(-1)
        return lp + _normal(y, theta, sigma).sum(-1)


@attrs.define(kw_only=True)
class NealsFunnel(InferenceGymTarget):
    """Neal's funnel in 10 dimensions: v = z_0 ~ N(0, 3), z_i | v ~ N(0, exp(v / 2)) for i = 1..9.

    Normalised; analytic ground truth (mean 0, sd 3 for v and exp(9/4) for the others). Exact draws.

    Shapes: ``log_prob: Tensor[n, 10] -> Tensor[n]``, ``sample(n) -> Tensor[n, 10]``.
    Units: nats; z dimensionless.

    Raises:
        ValueError: ``z`` not of shape ``[n, 10]``.

    Source: Neal 2003, "Slice sampling", Annals of Statistics 31(3), sec. 8; inference-gym ``NealsFunnel``.
    """

    model: ClassVar[str] = "NealsFunnel"
    exact_ground_truth: ClassVar[bool] = True

    def _log_density_constrained(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised log density ``Tensor[n, 10] -> Tensor[n]`` (nats)."""
        v = x[:, 0]
        return _normal(v, 0.0, 3.0) + _normal(x[:, 1:], 0.0, (v / 2).exp()[:, None]).sum(-1)

    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Exact draws ``Tensor[num_samples, 10]`` float64."""
        e = torch.randn(int(num_samples), self.dim, generator=generator, dtype=_F)
        e[:, 0] *= 3.0
        e[:, 1:] *= (e[:, :1] / 2).exp()
        return e


@attrs.define(kw_only=True)
class Banana(InferenceGymTarget):
    """Banana in 2 dimensions: x_1 ~ N(0, 10), x_2 - 0.03 (x_1^2 - 100) ~ N(0, 1).

    Normalised (unit Jacobian); analytic ground truth (mean 0, sd 10 and sqrt(1 + 2 * 0.03^2 * 10^4)).
    Exact draws.

    Shapes: ``log_prob: Tensor[n, 2] -> Tensor[n]``, ``sample(n) -> Tensor[n, 2]``.
    Units: nats; x dimensionless.

    Raises:
        ValueError: ``z`` not of shape ``[n, 2]``.

    Source: Haario, Saksman & Tamminen 1999, "Adaptive proposal distribution for random walk
    Metropolis", Computational Statistics 14, sec. 4; inference-gym ``Banana`` (curvature 0.03).
    """

    model: ClassVar[str] = "Banana"
    exact_ground_truth: ClassVar[bool] = True
    curvature: ClassVar[float] = 0.03

    def _log_density_constrained(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised log density ``Tensor[n, 2] -> Tensor[n]`` (nats)."""
        x1, x2 = x[:, 0], x[:, 1]
        return _normal(x1, 0.0, 10.0) + _normal(x2 - self.curvature * (x1**2 - 100.0), 0.0, 1.0)

    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Exact draws ``Tensor[num_samples, 2]`` float64."""
        e = torch.randn(int(num_samples), 2, generator=generator, dtype=_F)
        e[:, 0] *= 10.0
        e[:, 1] += self.curvature * (e[:, 0] ** 2 - 100.0)
        return e


@attrs.define(kw_only=True)
class IllConditionedGaussian(InferenceGymTarget):
    """Ill-conditioned Gaussian N(0, Sigma) in 100 dimensions, Sigma = Q diag(lambda) Q^T.

    lambda_i = 1 / g_i with g_i ~ Gamma(0.5, 1) (sorted) and Q a random orthogonal matrix, both
    drawn exactly as inference-gym does (``numpy.random.RandomState(10)``); Sigma is rebuilt
    here in float64. Normalised; analytic ground truth. Exact draws.

    Shapes: ``log_prob: Tensor[n, 100] -> Tensor[n]``, ``sample(n) -> Tensor[n, 100]``,
    ``covariance: Tensor[100, 100]``.
    Units: nats; x dimensionless.

    Raises:
        ValueError: ``z`` not of shape ``[n, 100]``.

    Source: inference-gym ``IllConditionedGaussian`` (ndims 100, gamma shape 0.5, seed 10).
    """

    model: ClassVar[str] = "IllConditionedGaussian"
    exact_ground_truth: ClassVar[bool] = True
    _mvn: Any = attrs.field(init=False, default=None, repr=False)

    def _setup(self) -> None:
        """Rebuild Sigma with inference-gym's recipe and seed."""
        rng = np.random.RandomState(seed=10 & (2**32 - 1))
        eigenvalues = 1.0 / np.sort(rng.gamma(shape=0.5, scale=1.0, size=self.dim))
        q, r = np.linalg.qr(rng.randn(self.dim, self.dim))
        q *= np.sign(np.diag(r))
        cov = torch.as_tensor((q * eigenvalues).dot(q.T), dtype=_F)
        cov = 0.5 * (cov + cov.T)
        self._mvn = MultivariateNormal(torch.zeros(self.dim, dtype=_F), covariance_matrix=cov)

    @property
    def covariance(self) -> torch.Tensor:
        """Sigma, ``Tensor[100, 100]`` float64."""
        return self._mvn.covariance_matrix

    def _log_density_constrained(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised log density ``Tensor[n, 100] -> Tensor[n]`` (nats)."""
        return self._mvn.log_prob(x.to(_F)).to(x.dtype)

    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Exact draws ``Tensor[num_samples, 100]`` float64 (L e with L the Cholesky factor of Sigma)."""
        e = torch.randn(int(num_samples), self.dim, generator=generator, dtype=_F)
        return e @ self._mvn.scale_tril.T


@attrs.define(kw_only=True)
class BrownianMotionMissingMiddle(InferenceGymTarget):
    """Brownian motion observed with noise at 30 times, the middle ten observations missing (d = 30).

    x_0 ~ N(0, s), x_t ~ N(x_{t-1}, s), y_t ~ N(x_t, r) for the observed t, with inference-gym's
    bundled series and scales (innovation s = 0.1, observation r = 0.15). No constraint.

    Shapes: ``log_prob: Tensor[n, 30] -> Tensor[n]``.
    Units: nats; x in the units of the observations.

    Raises:
        ValueError: ``z`` not of shape ``[n, 30]``.

    Source: inference-gym ``BrownianMotionMissingMiddleObservations``; after Ambrogioni et al. 2021,
    "Automatic structured variational inference", AISTATS (Brownian bridge experiment).
    """

    model: ClassVar[str] = "BrownianMotionMissingMiddleObservations"
    _obs: Any = attrs.field(init=False, default=None, repr=False)
    _observed: Any = attrs.field(init=False, default=None, repr=False)
    _innovation: float = attrs.field(init=False, default=0.0, repr=False)
    _noise: float = attrs.field(init=False, default=0.0, repr=False)

    def _setup(self) -> None:
        """Read the bundled observations (NaN where missing) and the two scales."""
        ds = dataset("brownian_motion_missing_middle_observations")
        obs = torch.as_tensor(np.asarray(ds["observed_locs"], dtype=np.float64))
        self._observed = ~torch.isnan(obs)
        self._obs = torch.where(self._observed, obs, torch.zeros_like(obs))
        self._innovation = float(ds["innovation_noise_scale"])
        self._noise = float(ds["observation_noise_scale"])

    def _log_density_constrained(self, x: torch.Tensor) -> torch.Tensor:
        """Log joint density ``Tensor[n, 30] -> Tensor[n]`` (nats)."""
        s = self._innovation
        prev = torch.cat([torch.zeros_like(x[:, :1]), x[:, :-1]], 1)
        prior = _normal(x, prev, s).sum(-1)
        lik = _normal(self._obs.to(x.dtype), x, self._noise)
        return prior + torch.where(self._observed, lik, torch.zeros_like(lik)).sum(-1)


@attrs.define(kw_only=True)
class StochasticVolatilitySP500Small(InferenceGymTarget):
    """Stochastic volatility of the last 100 S&P 500 daily returns (d = 103).

    Coordinates (inference-gym's order): persistence phi (unconstrained by phi = 2 sigmoid(z) - 1),
    mean_log_volatility mu, white_noise_shock_scale sigma (sigma = softplus(z)), log_volatility h[100].
    (phi + 1) / 2 ~ Beta(20, 1.5), mu ~ Cauchy(0, 5), sigma ~ HalfCauchy(2),
    h_0 ~ N(mu, sigma / sqrt(1 - phi^2)), h_t ~ N(mu + phi (h_{t-1} - mu), sigma),
    r_t ~ N(0, exp(h_t / 2)) for the centred returns r (inference-gym's bundled closing prices).

    Shapes: ``log_prob: Tensor[n, 103] -> Tensor[n]``.
    Units: nats; returns in index points, so h is a log variance in points^2.

    Raises:
        ValueError: ``z`` not of shape ``[n, 103]``.

    Source: Kim, Shephard & Chib 1998, "Stochastic volatility: likelihood inference and comparison
    with ARCH models", Rev. Econ. Stud. 65; Stan User's Guide, "Stochastic volatility models";
    inference-gym ``StochasticVolatilitySP500Small``.
    """

    model: ClassVar[str] = "StochasticVolatilitySP500Small"
    _returns: Any = attrs.field(init=False, default=None, repr=False)

    def _setup(self) -> None:
        """Read the bundled returns (the last 100, centred)."""
        r = dataset("sp500_returns", num_points=100)["centered_returns"]
        self._returns = torch.as_tensor(np.asarray(r, dtype=np.float64))

    @staticmethod
    def _phi() -> ComposeTransform:
        return ComposeTransform([SigmoidTransform(), AffineTransform(-1.0, 2.0)])

    def _bijector(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``phi = 2 sigmoid(z_0) - 1``, ``sigma = softplus(z_2)``, the rest unchanged; with log |det J|."""
        phi_t, sig_t = self._phi(), SoftplusTransform()
        phi, sigma = phi_t(z[:, 0]), sig_t(z[:, 2])
        log_det = phi_t.log_abs_det_jacobian(z[:, 0], phi) + sig_t.log_abs_det_jacobian(z[:, 2], sigma)
        x = torch.cat([phi[:, None], z[:, 1:2], sigma[:, None], z[:, 3:]], 1)
        return x, log_det

    def _inverse_bijector(self, x: torch.Tensor) -> torch.Tensor:
        """Constrained to unconstrained (phi clipped into (-1, 1), sigma into (0, inf))."""
        z = x.clone()
        z[:, 0] = self._phi().inv(x[:, 0].clamp(-1 + 1e-6, 1 - 1e-6))
        z[:, 2] = SoftplusTransform().inv(x[:, 2].clamp_min(1e-6))
        return z

    def _log_density_constrained(self, x: torch.Tensor) -> torch.Tensor:
        """Log joint density of (phi, mu, sigma, h) ``Tensor[n, 103] -> Tensor[n]`` (nats)."""
        phi, mu, sigma, h = x[:, 0], x[:, 1], x[:, 2], x[:, 3:]
        lp = Beta(20.0, 1.5, validate_args=False).log_prob((phi + 1) / 2) - math.log(2.0)
        lp = lp + Cauchy(0.0, 5.0, validate_args=False).log_prob(mu)
        lp = lp + HalfCauchy(2.0, validate_args=False).log_prob(sigma)
        lp = lp + _normal(h[:, 0], mu, sigma / torch.sqrt(1 - phi**2))
        loc = mu[:, None] + phi[:, None] * (h[:, :-1] - mu[:, None])
        lp = lp + _normal(h[:, 1:], loc, sigma[:, None]).sum(-1)
        return lp + _normal(self._returns.to(x.dtype), 0.0, (h / 2).exp()).sum(-1)


@attrs.define(kw_only=True)
class SyntheticItemResponseTheory(InferenceGymTarget):
    """One-parameter item response theory on inference-gym's synthetic data (d = 501).

    Coordinates (inference-gym's order): centered_student_ability[400], mean_student_ability,
    question_difficulty[100]. Priors N(0, 1), N(0.75, 1), N(0, 1); each of the 30012 answers is
    Bernoulli with logit mean + centered_student_ability[s] - question_difficulty[q] (on the dense
    400 x 100 grid of answered pairs, as inference-gym builds it). No constraint.

    Shapes: ``log_prob: Tensor[n, 501] -> Tensor[n]``.
    Units: nats; abilities and difficulties in logits.

    Raises:
        ValueError: ``z`` not of shape ``[n, 501]``.

    Source: Rasch 1960, "Probabilistic models for some intelligence and attainment tests";
    inference-gym ``SyntheticItemResponseTheory``.
    """

    model: ClassVar[str] = "SyntheticItemResponseTheory"
    _y: Any = attrs.field(init=False, default=None, repr=False)
    _mask: Any = attrs.field(init=False, default=None, repr=False)

    def _setup(self) -> None:
        """Read the bundled answers into inference-gym's dense 400 x 100 layout."""
        ds = dataset("synthetic_item_response_theory")
        s, q, c = (np.asarray(ds[k]) for k in ("train_student_ids", "train_question_ids", "train_correct"))
        y = np.zeros((int(s.max()) + 1, int(q.max()) + 1))
        y[s, q] = c
        mask = np.zeros(y.shape, dtype=bool)
        mask[s, q] = True
        self._y, self._mask = torch.as_tensor(y, dtype=_F), torch.as_tensor(mask)

    def _log_density_constrained(self, x: torch.Tensor) -> torch.Tensor:
        """Log joint density ``Tensor[n, 501] -> Tensor[n]`` (nats)."""
        ns = self._y.shape[0]
        ability, mean, difficulty = x[:, :ns], x[:, ns], x[:, ns + 1 :]
        lp = _normal(ability, 0.0, 1.0).sum(-1) + _normal(mean, 0.75, 1.0)
        lp = lp + _normal(difficulty, 0.0, 1.0).sum(-1)
        logits = mean[:, None, None] + ability[:, :, None] - difficulty[:, None, :]
        ll = Bernoulli(logits=logits, validate_args=False).log_prob(self._y.to(x.dtype))
        return lp + torch.where(self._mask, ll, torch.zeros_like(ll)).sum((-1, -2))
