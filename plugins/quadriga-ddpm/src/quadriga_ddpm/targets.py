"""``sphere-mixture``: K isotropic Gaussians N(mu_k, sigma^2 I) with means on a sphere of radius R.

A thin wrapper of quadriga-std's ``GaussianMixture`` (preset ``random``, or equally spaced on
the circle when d = 2) that keeps its API (``mixture_weights``, ``component_means``,
``component_covariances``, ``mean``, ``covariance``, ``log_prob``, ``score``, ``sample``,
``component_log_probs``, ``assign``, ``noised_score``, ``noised_log_prob``) but evaluates the
isotropic densities with one matrix product (cost n K d instead of n K d^2), which is what
makes d = 256 cheap.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import torch

from quadriga import param
from quadriga.interfaces import Target
from quadriga.validators import non_negative, positive, positive_int

__all__ = ["SphereMixture"]

_LOG_2PI = math.log(2.0 * math.pi)


def _alpha(alpha_bar: Any, n: int, dtype: torch.dtype) -> torch.Tensor:
    """alpha_bar as ``Tensor[n|1, 1]`` in (0, 1]; ValueError otherwise."""
    a = torch.ones((), dtype=dtype) if alpha_bar is None else torch.as_tensor(alpha_bar, dtype=dtype)
    if a.ndim == 1:
        if a.shape[0] != n:
            raise ValueError(f"alpha_bar has {a.shape[0]} entries for {n} rows")
    elif a.ndim != 0:
        raise ValueError("alpha_bar must be a float or a Tensor[n]")
    if ((a <= 0) | (a > 1)).any():
        raise ValueError("alpha_bar must lie in (0, 1]")
    return a.reshape(-1, 1)


@attrs.define(kw_only=True)
class SphereMixture(Target):
    """Equal-weight mixture of K components N(mu_k, scale^2 I) in d dimensions, |mu_k| = radius.

    Means: for d = 2, equally spaced on the circle (angle 2 pi k / K); otherwise drawn
    uniformly on the sphere by ``prepare(generator=...)`` (std's ``random`` preset).

    Raises:
        ConfigError: invalid parameters (through the validators).

    Source: test design of Li, Cai & Wei 2025 (isotropic GMM targets); research note section c.
    """

    dim: int = param(16, doc="dimension d", validator=positive_int)
    num_components: int = param(2, doc="number of components K", validator=positive_int)
    scale: float = param(1.0, doc="component standard deviation sigma (units of x)", validator=positive)
    radius: float = param(6.0, doc="norm of every component mean (units of x)", validator=non_negative)
    _gmm: Any = attrs.field(init=False, default=None)
    _cache: dict = attrs.field(init=False, factory=dict)

    def __attrs_post_init__(self) -> None:
        from quadriga_std.targets.gaussian import GaussianMixture

        d, k = int(self.dim), int(self.num_components)
        if d == 2:
            ang = torch.arange(k, dtype=torch.float64) * (2 * math.pi / k)
            means = float(self.radius) * torch.stack([ang.cos(), ang.sin()], -1)
            self._gmm = GaussianMixture(means=means.tolist(), scale=float(self.scale))
        else:
            self._gmm = GaussianMixture(
                preset="random", dim=d, num_components=k, radius=float(self.radius), scale=float(self.scale)
            )

    def prepare(self, *, generator: torch.Generator) -> None:
        """Draw the means (d != 2) from ``generator``; d = 2 needs no randomness."""
        self._gmm.prepare(generator=generator)
        self._cache.clear()

    def _params(self, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Means ``[K, d]``, squared norms ``[K]`` and log weights ``[K]`` in ``dtype`` (cached)."""
        if dtype not in self._cache:
            mu = self._gmm.component_means.to(dtype)
            self._cache[dtype] = (mu, (mu * mu).sum(-1), self._gmm.mixture_weights.to(dtype).log())
        return self._cache[dtype]

    # -------------------------------------------------------------- delegated API
    @property
    def mixture_weights(self) -> torch.Tensor:
        """``Tensor[K]`` float64 (equal weights)."""
        return self._gmm.mixture_weights

    @property
    def component_means(self) -> torch.Tensor:
        """``Tensor[K, d]`` float64, each of norm ``radius``."""
        return self._gmm.component_means

    @property
    def component_covariances(self) -> torch.Tensor:
        """``Tensor[K, d, d]`` float64 (scale^2 I each)."""
        return self._gmm.component_covariances

    @property
    def mean(self) -> torch.Tensor:
        """Exact mean ``Tensor[d]`` float64."""
        return self._gmm.mean

    @property
    def covariance(self) -> torch.Tensor:
        """Exact covariance ``Tensor[d, d]`` float64."""
        return self._gmm.covariance

    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Exact samples ``Tensor[num_samples, d]`` float64."""
        return self._gmm.sample(num_samples, generator=generator)

    # -------------------------------------------------------------- fast isotropic path
    def _joint(self, x: torch.Tensor, alpha_bar: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """log w_k + log N(x; sqrt(ab) mu_k, v I) ``[n, K]``, sqrt(ab) ``[n|1, 1]`` and v ``[n|1, 1]``."""
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"x must have shape [n, {self.dim}], got {tuple(x.shape)}")
        dt = x.dtype
        mu, mu_sq, log_w = self._params(dt)
        a = _alpha(alpha_bar, x.shape[0], dt)
        v = a * float(self.scale) ** 2 + (1 - a)
        sa = a.sqrt()
        sq = (x * x).sum(-1, keepdim=True) - 2 * sa * (x @ mu.T) + a * mu_sq
        log_n = -0.5 * sq / v - 0.5 * self.dim * (v.log() + _LOG_2PI)
        return log_w + log_n, sa, v

    def _logits(self, x: torch.Tensor, alpha_bar: Any) -> tuple[torch.Tensor, torch.Tensor | float, Any]:
        """Softmax logits of P(k | x_t = x) ``[n, K]``, sqrt(ab) and v (floats or ``[n, 1]``).

        The joint of :meth:`_joint` less its per-row terms (|x|^2 / 2v and the Gaussian
        normaliser), which the softmax over k cancels: log w_k + (sqrt(ab) x.mu_k - ab |mu_k|^2 / 2) / v.
        A float (or None) alpha_bar is checked and combined in Python, so a step costs one
        matrix product and one [n, K] add.
        """
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"x must have shape [n, {self.dim}], got {tuple(x.shape)}")
        mu, mu_sq, log_w = self._params(x.dtype)
        if alpha_bar is None or isinstance(alpha_bar, (int, float)):
            a = 1.0 if alpha_bar is None else float(alpha_bar)
            if not 0.0 < a <= 1.0:
                raise ValueError("alpha_bar must lie in (0, 1]")
            v = a * float(self.scale) ** 2 + (1 - a)
            sa = math.sqrt(a)
            return torch.addmm(log_w - (0.5 * a / v) * mu_sq, x, mu.T, alpha=sa / v), sa, v
        at = _alpha(alpha_bar, x.shape[0], x.dtype)
        vt = at * float(self.scale) ** 2 + (1 - at)
        sat = at.sqrt()
        return log_w + (sat * (x @ mu.T) - 0.5 * at * mu_sq) / vt, sat, vt

    def component_log_probs(self, x: torch.Tensor) -> torch.Tensor:
        """log w_k + log N(x; mu_k, sigma^2 I): ``Tensor[n, d] -> Tensor[n, K]`` (nats)."""
        return self._joint(x, None)[0]

    def assign(self, x: torch.Tensor) -> torch.Tensor:
        """Bayes assignment (most probable component): ``Tensor[n, d] -> Tensor[n]`` long."""
        return self.component_log_probs(x).argmax(-1)

    def responsibilities(self, x: torch.Tensor, alpha_bar: Any = None) -> torch.Tensor:
        """Posterior component probabilities P(k | x_t = x): ``Tensor[n, d] -> Tensor[n, K]``."""
        return torch.softmax(self._logits(x, alpha_bar)[0], -1)

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised log density ``Tensor[n, d] -> Tensor[n]`` (nats)."""
        return torch.logsumexp(self.component_log_probs(x), -1)

    def score(self, x: torch.Tensor) -> torch.Tensor:
        """Exact score ``Tensor[n, d] -> Tensor[n, d]``."""
        return self.noised_score(x, None)

    def noised_log_prob(self, x: torch.Tensor, alpha_bar: Any) -> torch.Tensor:
        """log density of x_t = sqrt(ab) x_0 + sqrt(1 - ab) eps: ``Tensor[n, d] -> Tensor[n]``.

        Args:
            x: ``Tensor[n, d]``; alpha_bar: float in (0, 1] or ``Tensor[n]``.

        Raises:
            ValueError: alpha_bar outside (0, 1] or of the wrong shape.
        """
        return torch.logsumexp(self._joint(x, alpha_bar)[0], -1)

    def noised_score(self, x: torch.Tensor, alpha_bar: Any) -> torch.Tensor:
        """Exact noised score sum_k r_k(x) (sqrt(ab) mu_k - x) / v, v = ab sigma^2 + 1 - ab.

        Args:
            x: ``Tensor[n, d]``; alpha_bar: float in (0, 1] or ``Tensor[n]`` (None: 1).

        Returns:
            ``Tensor[n, d]``.

        Raises:
            ValueError: alpha_bar outside (0, 1] or of the wrong shape.

        Source: research note section c (isotropic case), Li, Cai & Wei 2025.
        """
        logits, sa, v = self._logits(x, alpha_bar)
        resp = torch.softmax(logits, -1)
        mu = self._params(x.dtype)[0]
        return (sa * (resp @ mu) - x) / v
