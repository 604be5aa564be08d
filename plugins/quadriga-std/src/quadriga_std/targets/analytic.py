"""Analytic continuous targets: the banana (twisted Gaussian), Neal's funnel, a double well.

All three have exact log densities in closed form and closed-form scores; Banana and
Funnel are normalised in closed form and have exact samplers and moments; DoubleWell is
normalised by one-dimensional quadrature (scipy) of its first coordinate, which also
gives its exact mean and covariance. Parameters are float64; methods work in ``x``'s dtype.
"""

from __future__ import annotations

import math

import attrs
import torch

from quadriga import param
from quadriga.interfaces import Target
from quadriga.validators import finite, int_at_least, non_negative, positive

__all__ = ["Banana", "DoubleWell", "Funnel"]

_LOG_2PI = math.log(2.0 * math.pi)


def _check_x(x: torch.Tensor, dim: int) -> None:
    if x.ndim != 2 or x.shape[1] != dim:
        raise ValueError(f"x must have shape [n, {dim}], got {tuple(x.shape)}")


@attrs.define(kw_only=True)
class Banana(Target):
    """Twisted Gaussian ("banana"): the law of x with phi_b(x) ~ N(0, diag(s^2, 1, ..., 1)).

    phi_b(x) = (x_1, x_2 + b x_1^2 - b s^2, x_3, ..., x_d) has unit Jacobian, so
    log pi(x) = log N(phi_b(x); 0, C) is normalised. Exact moments: mean 0,
    Var x_1 = s^2, Var x_2 = 1 + 2 b^2 s^4, other coordinates 1, no correlations.

    Shapes: ``log_prob: Tensor[n, d] -> Tensor[n]``, ``score: Tensor[n, d] -> Tensor[n, d]``,
    ``sample(n) -> Tensor[n, d]`` float64, ``mean: Tensor[d]``, ``covariance: Tensor[d, d]``.
    Units: ``log_prob`` in nats; ``scale`` in units of x, ``b`` in 1/x.

    Raises:
        ConfigError: ``dim`` < 2 or not an int, ``b`` < 0, ``scale`` <= 0 (when built).
        ValueError: ``x`` not of shape ``[n, d]``.

    Source: Haario, Saksman & Tamminen 1999, "Adaptive proposal distribution for random
    walk Metropolis", sec. 4 (s = 10, b = 0.03 or 0.1).
    """

    dim: int = param(2, doc="dimension d (>= 2)", validator=int_at_least(2))
    b: float = param(0.1, doc="twist (curvature) b (units 1/x)", validator=non_negative)
    scale: float = param(10.0, doc="standard deviation s of x_1", validator=positive)

    def _phi(self, x: torch.Tensor) -> torch.Tensor:
        _check_x(x, self.dim)
        y = x.clone()
        y[:, 1] = x[:, 1] + self.b * x[:, 0] ** 2 - self.b * self.scale**2
        return y

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised log density ``Tensor[n, d] -> Tensor[n]`` (nats)."""
        y = self._phi(x)
        y0 = y[:, 0] / self.scale
        quad = y0**2 + (y[:, 1:] ** 2).sum(-1)
        return -0.5 * quad - math.log(self.scale) - 0.5 * self.dim * _LOG_2PI

    def score(self, x: torch.Tensor) -> torch.Tensor:
        """Closed-form score ``Tensor[n, d] -> Tensor[n, d]``."""
        y = self._phi(x)
        g = -y
        g[:, 0] = -x[:, 0] / self.scale**2 - y[:, 1] * 2 * self.b * x[:, 0]
        return g

    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Exact samples ``Tensor[num_samples, d]`` float64 (inverse of phi_b applied to Gaussian draws)."""
        y = torch.randn(int(num_samples), self.dim, generator=generator, dtype=torch.float64)
        y[:, 0] *= self.scale
        y[:, 1] = y[:, 1] - self.b * y[:, 0] ** 2 + self.b * self.scale**2
        return y

    @property
    def mean(self) -> torch.Tensor:
        """Exact mean ``Tensor[d]`` (zeros)."""
        return torch.zeros(self.dim, dtype=torch.float64)

    @property
    def covariance(self) -> torch.Tensor:
        """Exact covariance ``Tensor[d, d]``: diag(s^2, 1 + 2 b^2 s^4, 1, ...)."""
        v = torch.ones(self.dim, dtype=torch.float64)
        v[0] = self.scale**2
        v[1] = 1.0 + 2.0 * self.b**2 * self.scale**4
        return torch.diag(v)


@attrs.define(kw_only=True)
class Funnel(Target):
    """Neal's funnel: v = x_1 ~ N(0, s^2), x_i | v ~ N(0, e^v) for i = 2..d; normalised.

    Exact moments: mean 0, Var v = s^2, Var x_i = E[e^v] = exp(s^2 / 2), no correlations.

    Shapes: ``log_prob: Tensor[n, d] -> Tensor[n]``, ``score: Tensor[n, d] -> Tensor[n, d]``,
    ``sample(n) -> Tensor[n, d]`` float64 (column 0 is v), ``mean: Tensor[d]``, ``covariance: Tensor[d, d]``.
    Units: ``log_prob`` in nats; ``scale`` in units of v (v is a log variance of x_2..x_d).

    Raises:
        ConfigError: ``dim`` < 2 or not an int, ``scale`` <= 0 (when built).
        ValueError: ``x`` not of shape ``[n, d]``.

    Source: Neal 2003, "Slice sampling", Annals of Statistics, sec. 8 (d = 10, s = 3).
    """

    dim: int = param(10, doc="dimension d = 1 + number of x coordinates (>= 2)", validator=int_at_least(2))
    scale: float = param(3.0, doc="standard deviation s of v", validator=positive)

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised log density ``Tensor[n, d] -> Tensor[n]`` (nats)."""
        _check_x(x, self.dim)
        v, z = x[:, 0], x[:, 1:]
        k = self.dim - 1
        lp_v = -0.5 * (v / self.scale) ** 2 - math.log(self.scale) - 0.5 * _LOG_2PI
        lp_z = -0.5 * (z**2).sum(-1) * torch.exp(-v) - 0.5 * k * v - 0.5 * k * _LOG_2PI
        return lp_v + lp_z

    def score(self, x: torch.Tensor) -> torch.Tensor:
        """Closed-form score ``Tensor[n, d] -> Tensor[n, d]``."""
        _check_x(x, self.dim)
        v, z = x[:, 0], x[:, 1:]
        e = torch.exp(-v)
        g = torch.empty_like(x)
        g[:, 0] = -v / self.scale**2 - 0.5 * (self.dim - 1) + 0.5 * (z**2).sum(-1) * e
        g[:, 1:] = -z * e[:, None]
        return g

    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Exact samples ``Tensor[num_samples, d]`` float64."""
        x = torch.randn(int(num_samples), self.dim, generator=generator, dtype=torch.float64)
        x[:, 0] *= self.scale
        x[:, 1:] *= torch.exp(0.5 * x[:, :1])
        return x

    @property
    def mean(self) -> torch.Tensor:
        """Exact mean ``Tensor[d]`` (zeros)."""
        return torch.zeros(self.dim, dtype=torch.float64)

    @property
    def covariance(self) -> torch.Tensor:
        """Exact covariance ``Tensor[d, d]``: diag(s^2, e^{s^2/2}, ...)."""
        v = torch.full((self.dim,), math.exp(0.5 * self.scale**2), dtype=torch.float64)
        v[0] = self.scale**2
        return torch.diag(v)


@attrs.define(kw_only=True)
class DoubleWell(Target):
    """Double well: log pi(x) = -(a x_1 + b x_1^2 + c x_1^4) - |x_{2:d}|^2 / 2 - log Z.

    With the defaults (a = -0.5, b = -6, c = 1) the wells sit near x_1 = +-1.7 and are
    separated by a barrier of about 9 nats; the left/right weights differ because of a.
    log Z is computed by scipy quadrature of the first coordinate (the rest is Gaussian),
    so ``log_prob`` is normalised to quadrature accuracy (~1e-10).

    Shapes: ``log_prob: Tensor[n, d] -> Tensor[n]``, ``score: Tensor[n, d] -> Tensor[n, d]``,
    ``mean: Tensor[d]``, ``covariance: Tensor[d, d]``; no exact sampler (``sample`` raises
    ``NotImplementedError``, so ``iid`` refuses it).
    Units: ``log_prob`` in nats; a, b, c in nats per unit of x_1, x_1^2, x_1^4.

    Raises:
        ConfigError: ``dim`` < 2 or not an int, ``a`` or ``b`` not finite, ``c`` <= 0 (when built).
        ValueError: ``x`` not of shape ``[n, d]``.

    Source: Wu, Koehler & Noe 2020, "Stochastic Normalizing Flows", experiment 1 (double well).
    """

    dim: int = param(2, doc="dimension d (>= 2)", validator=int_at_least(2))
    a: float = param(-0.5, doc="linear coefficient a (tilts the wells)", validator=finite)
    b: float = param(-6.0, doc="quadratic coefficient b (negative: two wells)", validator=finite)
    c: float = param(1.0, doc="quartic coefficient c (> 0)", validator=positive)
    _log_z1: float = attrs.field(init=False, default=0.0)
    _m1: float = attrs.field(init=False, default=0.0)
    _v1: float = attrs.field(init=False, default=1.0)

    def __attrs_post_init__(self) -> None:
        from scipy import integrate

        def u(t: float) -> float:
            return self.a * t + self.b * t * t + self.c * t**4

        # shift by the minimum of u on a grid for numerical stability
        grid = torch.linspace(-10, 10, 20001, dtype=torch.float64)
        umin = float((self.a * grid + self.b * grid**2 + self.c * grid**4).min())
        lim = 2.0 + (abs(self.b) / self.c) ** 0.5 + (abs(self.a) / self.c) ** (1 / 3) + 10 / self.c**0.25
        moments = [
            integrate.quad(
                lambda t, k=k: t**k * math.exp(-(u(t) - umin)),
                -lim,
                lim,
                points=[0.0],
                limit=200,
                epsabs=0,
                epsrel=1e-12,
            )[0]
            for k in range(3)
        ]
        self._log_z1 = math.log(moments[0]) - umin
        self._m1 = moments[1] / moments[0]
        self._v1 = moments[2] / moments[0] - self._m1**2

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised log density ``Tensor[n, d] -> Tensor[n]`` (nats; log Z by quadrature)."""
        _check_x(x, self.dim)
        t = x[:, 0]
        u = self.a * t + self.b * t**2 + self.c * t**4
        rest = 0.5 * (x[:, 1:] ** 2).sum(-1) + 0.5 * (self.dim - 1) * _LOG_2PI
        return -u - rest - self._log_z1

    def score(self, x: torch.Tensor) -> torch.Tensor:
        """Closed-form score ``Tensor[n, d] -> Tensor[n, d]``."""
        _check_x(x, self.dim)
        g = -x.clone()
        t = x[:, 0]
        g[:, 0] = -(self.a + 2 * self.b * t + 4 * self.c * t**3)
        return g

    @property
    def mean(self) -> torch.Tensor:
        """Exact mean ``Tensor[d]`` (first coordinate by quadrature)."""
        m = torch.zeros(self.dim, dtype=torch.float64)
        m[0] = self._m1
        return m

    @property
    def covariance(self) -> torch.Tensor:
        """Exact covariance ``Tensor[d, d]``: diag(Var x_1 by quadrature, 1, ..., 1)."""
        v = torch.ones(self.dim, dtype=torch.float64)
        v[0] = self._v1
        return torch.diag(v)
