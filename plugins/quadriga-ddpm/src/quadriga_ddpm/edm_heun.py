"""The EDM sampler: Heun's second-order method on the probability-flow ODE in sigma (Karras et al. 2022).

With x = y + sigma eps (variance exploding, alpha = 1) and a denoiser D(x, sigma) = E[y | x], the
probability-flow ODE is dx / d sigma = (x - D(x, sigma)) / sigma (Karras et al. 2022, "Elucidating
the design space of diffusion-based generative models", eq. 3 with s = 1, sigma(t) = t). The
deterministic sampler (their Algorithm 1, S_churn = 0) takes Heun steps on the sigma grid of
:func:`karras_sigmas` (eq. 5, rho = 7) and an Euler step into sigma = 0, so M sigma points cost
2 M - 1 denoiser evaluations.

:func:`heun_solve` takes any denoiser ``denoise(x, sigma) -> Tensor[n, d]``: a score model of this
kit through :func:`score_denoiser` (Tweedie, D = x + sigma^2 score) or another field that shares the
ODE form (PFGM++ with augmentation dimension D uses the same update, quadriga-pfgmpp).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.artifacts import Fitted, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Sampler, Target
from quadriga.seeding import child_generator
from quadriga.threads import single_thread
from quadriga.validators import positive, positive_int
from quadriga_ddpm.probability_flow import data_prediction, x_T_digest
from quadriga_ddpm.score_models import as_score_model

__all__ = ["EDMHeun", "heun_solve", "karras_sigmas", "score_denoiser"]

Denoiser = Callable[[torch.Tensor, float], torch.Tensor]


def karras_sigmas(num_steps: int, sigma_min: float, sigma_max: float, rho: float = 7.0) -> torch.Tensor:
    """The EDM time steps, Karras et al. 2022 eq. 5, with t_N = 0 appended.

    sigma_i = (sigma_max^(1/rho) + i / (M - 1) (sigma_min^(1/rho) - sigma_max^(1/rho)))^rho, i < M.

    Args:
        num_steps: M >= 2 sigma points before the final 0.
        sigma_min, sigma_max: the ends (units of x), 0 < sigma_min < sigma_max.
        rho: the warping exponent (7 in the paper).

    Returns:
        ``Tensor[M + 1]`` float64, decreasing, last entry 0.

    Raises:
        ConfigError: M < 2 or the ends out of order.
    """
    if int(num_steps) < 2:
        raise ConfigError(f"the EDM grid needs num_steps >= 2, got {num_steps}.", key="num_steps")
    if not 0 < float(sigma_min) < float(sigma_max):
        raise ConfigError(f"need 0 < sigma_min < sigma_max, got {sigma_min}, {sigma_max}.", key="sigma_min")
    i = torch.arange(int(num_steps), dtype=torch.float64) / (int(num_steps) - 1)
    lo, hi = float(sigma_min) ** (1 / rho), float(sigma_max) ** (1 / rho)
    return torch.cat([(hi + i * (lo - hi)) ** rho, torch.zeros(1, dtype=torch.float64)])


def heun_solve(denoise: Denoiser, x_T: torch.Tensor, sigmas: torch.Tensor) -> tuple[torch.Tensor, int]:
    """Deterministic EDM sampler (Karras et al. 2022, Algorithm 1 with S_churn = 0).

    d_i = (x_i - D(x_i, t_i)) / t_i; x' = x_i + (t_{i+1} - t_i) d_i; if t_{i+1} > 0 the Heun
    correction x_{i+1} = x_i + (t_{i+1} - t_i) (d_i + d'_i) / 2 with d'_i = (x' - D(x', t_{i+1})) / t_{i+1}.

    Args:
        denoise: ``(x: Tensor[n, d], sigma: float) -> Tensor[n, d]`` (units of x).
        x_T: ``Tensor[n, d]`` at ``sigmas[0]``.
        sigmas: ``Tensor[M + 1]`` decreasing, ``sigmas[-1]`` may be 0 (then an Euler step).

    Returns:
        ``(x_0: Tensor[n, d], nfe)`` with nfe the number of batched denoiser calls.
    """
    x = x_T.to(torch.float64)
    nfe = 0
    for t_cur, t_next in zip(sigmas[:-1].tolist(), sigmas[1:].tolist(), strict=True):
        d_cur = (x - denoise(x, t_cur)) / t_cur
        x_next = x + (t_next - t_cur) * d_cur
        nfe += 1
        if t_next > 0:
            d_prime = (x_next - denoise(x_next, t_next)) / t_next
            x_next = x + (t_next - t_cur) * 0.5 * (d_cur + d_prime)
            nfe += 1
        x = x_next
    return x, nfe


def score_denoiser(model: Any) -> Denoiser:
    """D(x, sigma) = x + sigma^2 score(x) (Tweedie) of a score model of this kit, at alpha = 1.

    Args:
        model: a score model (:mod:`quadriga_ddpm.score_models`).

    Returns:
        ``denoise(x: Tensor[n, d], sigma: float) -> Tensor[n, d]``.
    """
    return lambda x, sigma: data_prediction(model, x, 1.0, float(sigma))


@attrs.define(kw_only=True)
class EDMHeun(Sampler):
    """EDM's deterministic Heun sampler from a score model (analytic target or learned network).

    x_T = sigma_max z with z from the stage generator's ``"x_T"`` stream (so other samplers of the same
    replicate can start from it), then :func:`heun_solve` on :func:`karras_sigmas`.
    Hyperparameters: ``num_steps`` M (NFE = 2 M - 1), ``sigma_min``, ``sigma_max``, ``rho``,
    ``num_samples``.

    Returns ``Samples`` with ``x: Tensor[n, d]`` float64 and ``info``: ``nfe``, ``score_evals``,
    ``x_T_digest``, ``seconds``.

    Raises:
        ConfigError: an input that is not a score model, or an invalid grid.

    Source: Karras, Aittala, Aila & Laine 2022 (NeurIPS), Algorithm 1 and eq. 5, Table 1 defaults.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"target": (Target, Fitted)}

    num_steps: int = param(18, doc="sigma points M before 0; NFE = 2 M - 1 (count)", validator=positive_int)
    sigma_min: float = param(0.002, doc="smallest nonzero sigma (units of x)", validator=positive)
    sigma_max: float = param(80.0, doc="initial sigma (units of x)", validator=positive)
    rho: float = param(7.0, doc="step warping exponent of eq. 5", validator=positive)
    num_samples: int = param(1000, doc="n, trajectories (count)", validator=positive_int)

    def sample(self, target: Any, *, generator: torch.Generator) -> Samples:
        """Draw x_T and integrate the flow ODE with Heun steps; see the class docstring."""
        model = as_score_model(target)
        sigmas = karras_sigmas(int(self.num_steps), self.sigma_min, self.sigma_max, self.rho)
        gen = child_generator(generator, "x_T")
        z = torch.randn(int(self.num_samples), int(model.dim), generator=gen, dtype=torch.float64)
        x_T = float(self.sigma_max) * z
        start = time.perf_counter()
        with single_thread():
            x, nfe = heun_solve(score_denoiser(model), x_T, sigmas)
        if not torch.isfinite(x).all():
            raise FloatingPointError("edm-heun produced non-finite values")
        info = {
            "nfe": nfe,
            "score_evals": nfe * int(self.num_samples),
            "x_T_digest": x_T_digest(x_T),
            "seconds": time.perf_counter() - start,
        }
        return Samples(x=x, info=info)
