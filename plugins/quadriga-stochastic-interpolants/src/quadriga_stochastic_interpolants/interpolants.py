"""The stochastic interpolant x_t = alpha(t) x0 + beta(t) x1 + gamma(t) z and its quadratic objectives.

Albergo, Boffi & Vanden-Eijnden 2023, "Stochastic interpolants: a unifying framework for flows and
diffusions" (arXiv 2303.08797), Definition 2.1 with the spatially linear interpolant
I(t, x0, x1) = alpha(t) x0 + beta(t) x1 of their Sec. 3 / 4:

    x_t = alpha(t) x0 + beta(t) x1 + gamma(t) z,    z ~ N(0, I) independent of (x0, x1),
    alpha(0) = beta(1) = 1,  alpha(1) = beta(0) = 0,  gamma(t) = sqrt(a t (1 - t)).

Paths: ``linear`` (alpha = 1 - t, beta = t) and ``trig`` (alpha = cos(pi t / 2), beta = sin(pi t / 2)).
With a Gaussian base x0 ~ N(0, I) and ``a = 0`` the interpolant is *one-sided*: x0 itself plays the
role of the latent, and the linear path is conditional flow matching with sigma_min = 0 (Lipman et al.
2023; Liu et al. 2023 rectified flow), the trig path the variance-preserving diffusion path.

Fields (conditional expectations given x_t = x):

    velocity  b(t, x)   = E[alpha' x0 + beta' x1 + gamma' z | x_t = x]
    denoiser  eta(t, x) = E[z | x_t = x]           (one-sided: E[x0 | x_t = x])
    score     s(t, x)   = -eta(t, x) / gamma(t)     (one-sided: -eta(t, x) / alpha(t))

Each is the unique minimiser of a quadratic objective (the paper's (b, eta) pair, Sec. 2.2,
eq. 2.12 and the denoiser objective beside it; every one is a least-squares regression in disguise):

    L_b[b^]     = E_{t, x0, x1, z} [ 1/2 |b^(t, x_t)|^2 - (alpha' x0 + beta' x1 + gamma' z) . b^(t, x_t) ]
    L_eta[eta^] = E_{t, x0, x1, z} [ 1/2 |eta^(t, x_t)|^2 - z . eta^(t, x_t) ]

with t ~ U[t_clip, 1 - t_clip]. :func:`objectives` evaluates both on antithetic pairs
x_t^{+-} = I_t +- gamma z (the authors' ``calc_antithetic_xts``), which leaves the minimisers unchanged
and cancels the odd-in-z part of the Monte-Carlo noise.

"""

from __future__ import annotations

import math
from typing import Any

import attrs
import torch

from quadriga.errors import ConfigError

__all__ = ["PATHS", "Interpolant", "objectives"]

PATHS = ("linear", "trig")


def _check_path(inst: Any, attribute: Any, value: str) -> None:
    if value not in PATHS:
        raise ConfigError(f"path must be one of {', '.join(PATHS)}, got {value!r}.", key="path")


def _check_a(inst: Any, attribute: Any, value: float) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise ConfigError(f"gamma_scale a must be a finite number >= 0, got {value!r}.", key="gamma_scale")


@attrs.frozen(kw_only=True)
class Interpolant:
    """Coefficients of x_t = alpha(t) x0 + beta(t) x1 + gamma(t) z and their time derivatives.

    Attributes:
        path: ``"linear"`` or ``"trig"`` (the (alpha, beta) pair).
        gamma_scale: ``a >= 0`` in gamma(t) = sqrt(a t (1 - t)) (units of x); 0 gives gamma = 0.
        gaussian_source: ``True`` when x0 ~ N(0, I) (the Gaussian-base case).

    Shapes: every method maps ``t: Tensor[n]`` or ``Tensor[n, 1]`` to tensors of the same shape.
    Units: t is dimensionless in [0, 1]; alpha, beta dimensionless; gamma in units of x.

    Raises:
        ConfigError: unknown path or negative ``gamma_scale``.

    Source: Albergo, Boffi & Vanden-Eijnden 2023 (arXiv 2303.08797), Definition 2.1 and Sec. 4.
    """

    path: str = attrs.field(default="linear", validator=_check_path)
    gamma_scale: float = attrs.field(default=0.0, validator=_check_a)
    gaussian_source: bool = False

    @property
    def one_sided(self) -> bool:
        """True when x0 ~ N(0, I) and gamma = 0: x0 is the latent (score = -E[x0 | x] / alpha)."""
        return self.gaussian_source and self.gamma_scale == 0

    @property
    def has_score(self) -> bool:
        """True when a score can be learned (gamma > 0 inside (0, 1), or the one-sided case)."""
        return self.gamma_scale > 0 or self.one_sided

    def alpha_beta(self, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(alpha, beta, alpha', beta')`` at times ``t``."""
        if self.path == "linear":
            return 1 - t, t.clone(), -torch.ones_like(t), torch.ones_like(t)
        h = 0.5 * math.pi
        return torch.cos(h * t), torch.sin(h * t), -h * torch.sin(h * t), h * torch.cos(h * t)

    def gamma(self, t: torch.Tensor) -> torch.Tensor:
        """gamma(t) = sqrt(a t (1 - t)) (units of x)."""
        return torch.sqrt((self.gamma_scale * t * (1 - t)).clamp_min(0))

    def gamma_gamma_dot(self, t: torch.Tensor) -> torch.Tensor:
        """gamma(t) gamma'(t) = a (1 - 2t) / 2, finite at both ends."""
        return 0.5 * self.gamma_scale * (1 - 2 * t)

    def gamma_dot(self, t: torch.Tensor) -> torch.Tensor:
        """gamma'(t) = a (1 - 2t) / (2 gamma(t)); 0 for a = 0, singular at t = 0, 1 for a > 0."""
        if self.gamma_scale == 0:
            return torch.zeros_like(t)
        return self.gamma_gamma_dot(t) / self.gamma(t)

    def sample_xt(
        self, t: torch.Tensor, x0: torch.Tensor, x1: torch.Tensor, z: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Antithetic pair ``(x_t^+, x_t^-) = alpha x0 + beta x1 +- gamma z``.

        Args:
            t: ``Tensor[n, 1]``; x0, x1, z: ``Tensor[n, d]``.

        Returns:
            Two ``Tensor[n, d]``; equal when gamma = 0.
        """
        a, b, _, _ = self.alpha_beta(t)
        mean = a * x0 + b * x1
        g = self.gamma(t) * z
        return mean + g, mean - g

    def velocity_target(
        self, t: torch.Tensor, x0: torch.Tensor, x1: torch.Tensor, z: torch.Tensor
    ) -> torch.Tensor:
        """The regression target of L_b, ``alpha' x0 + beta' x1 + gamma' z``: ``Tensor[n, d]``."""
        _, _, da, db = self.alpha_beta(t)
        return da * x0 + db * x1 + self.gamma_dot(t) * z

    def score_from_denoiser(self, t: torch.Tensor, eta: torch.Tensor) -> torch.Tensor:
        """s = -eta / gamma (two-sided) or -eta / alpha (one-sided): ``Tensor[n, d]``.

        Raises:
            ConfigError: the interpolant has no score (gamma = 0 and a non-Gaussian source).
        """
        if self.gamma_scale > 0:
            return -eta / self.gamma(t)
        if self.one_sided:
            return -eta / self.alpha_beta(t)[0]
        raise ConfigError(
            "this interpolant has no score: gamma = 0 between two data densities. "
            "Set gamma_scale > 0 (or use a Gaussian source) to sample with epsilon > 0.",
            key="gamma_scale",
        )


def objectives(
    interpolant: Interpolant,
    velocity: Any,
    denoiser: Any,
    x0: torch.Tensor,
    x1: torch.Tensor,
    *,
    generator: torch.Generator,
    t_clip: float = 1e-3,
) -> dict[str, torch.Tensor]:
    """Monte-Carlo estimates of L_b and L_eta on one batch (antithetic in z).

    Args:
        interpolant: the :class:`Interpolant`.
        velocity: ``b^(t: Tensor[n, 1], x: Tensor[n, d]) -> Tensor[n, d]``.
        denoiser: ``eta^(t, x) -> Tensor[n, d]`` or ``None`` (then only L_b).
        x0, x1: ``Tensor[n, d]`` draws of rho_0 and rho_1 (independent coupling).
        generator: source of t ~ U[t_clip, 1 - t_clip] and z ~ N(0, I) (or of nothing else).
        t_clip: keeps t away from the ends where gamma' is singular (dimensionless, in [0, 0.5)).

    Returns:
        ``{"loss_b": scalar, "loss_eta": scalar}`` (units of x^2 / time^2 and x^2 / x^2), each the
        batch mean of the objective; their minimisers are b and eta (see the module docstring).

    Source: Albergo, Boffi & Vanden-Eijnden 2023, Sec. 2.2 (L_b, eq. 2.12; the denoiser objective);
    antithetic sampling as in the authors' ``interflow.stochastic_interpolant.calc_antithetic_xts``.
    """
    n = x0.shape[0]
    t = t_clip + (1 - 2 * t_clip) * torch.rand(n, 1, generator=generator, device=x0.device, dtype=x0.dtype)
    if interpolant.one_sided:
        z = torch.zeros_like(x0)
    else:
        z = torch.randn(x0.shape, generator=generator, device=x0.device, dtype=x0.dtype)
    xp, xm = interpolant.sample_xt(t, x0, x1, z)
    target = interpolant.velocity_target(t, x0, x1, z)
    _, _, da, db = interpolant.alpha_beta(t)
    target_m = da * x0 + db * x1 - interpolant.gamma_dot(t) * z
    bp, bm = velocity(t, xp), velocity(t, xm)
    loss_b = (
        0.5 * ((0.5 * bp.square() - target * bp).sum(-1) + (0.5 * bm.square() - target_m * bm).sum(-1)).mean()
    )
    out = {"loss_b": loss_b}
    if denoiser is not None:
        latent = x0 if interpolant.one_sided else z
        ep = denoiser(t, xp)
        if interpolant.one_sided:
            loss_eta = (0.5 * ep.square() - latent * ep).sum(-1).mean()
        else:
            em = denoiser(t, xm)
            loss_eta = (
                0.5
                * (
                    (0.5 * ep.square() - latent * ep).sum(-1) + (0.5 * em.square() + latent * em).sum(-1)
                ).mean()
            )
        out["loss_eta"] = loss_eta
    return out
