"""The PFGM++ sampler: EDM's Heun ODE in sigma on the field of augmentation dimension D.

Update (Xu et al. 2023, PFGM++, eq. 5 with r = sigma sqrt(D), sec. 4; Algorithm 1 of Karras et al.
2022 for the steps), on the EDM grid sigma_0 = sigma_max > ... > sigma_{M-1} = sigma_min > 0:

    x_T          = sigma_max sqrt(D / W) z                  # prior p_{r_max}: heavy-tailed for small D
    D_hat(x, s)  = E_D[y | x] + field_error * s * xi        # injected field error, xi ~ N(0, I) per call
    d_i          = (x_i - D_hat(x_i, sigma_i)) / sigma_i    # dx / d sigma of the PFGM++ ODE
    x'           = x_i + (sigma_{i+1} - sigma_i) d_i
    x_{i+1}      = x_i + (sigma_{i+1} - sigma_i) (d_i + d'_i) / 2   (Heun; Euler into sigma = 0)

As D -> inf the kernel, the prior and E_D[y | x] become the Gaussian ones and the sampler is EDM's
(``edm-heun`` of quadriga-ddpm, from the same z): the test suite measures the gap at D = 1e6.
"""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar

import attrs
import torch
from quadriga_ddpm.edm_heun import heun_solve, karras_sigmas
from quadriga_ddpm.probability_flow import x_T_digest

from quadriga import param
from quadriga.artifacts import Fitted, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Sampler, Target
from quadriga.seeding import child_generator
from quadriga.threads import single_thread
from quadriga.validators import in_range, positive, positive_int
from quadriga_pfgmpp.field import MixtureField
from quadriga_pfgmpp.kernel import check_aug_dim, prior_draw

__all__ = ["PFGMPP", "as_denoiser"]


def _aug_dim(instance: Any, attribute: Any, value: float) -> None:
    check_aug_dim(value, attribute.name)


def as_denoiser(target: Any, aug_dim: float, *, nodes: int = 512) -> tuple[Any, int]:
    """``(denoise(x, sigma) -> Tensor[n, N], N)`` for a mixture target or a Fitted PFGM++ network.

    Raises:
        ConfigError: a Fitted network trained at another D, or an input that is neither.
    """
    if isinstance(target, Fitted):
        trained = float(target.info.get("aug_dim", math.nan))
        if trained != float(aug_dim):
            raise ConfigError(
                f"the denoiser was trained with aug_dim = {trained}; sample with the same D "
                f"(set aug_dim = {trained}).",
                key="aug_dim",
            )
        net = target.model

        def denoise_net(x: torch.Tensor, sigma: float) -> torch.Tensor:
            with torch.no_grad():
                s = torch.full((x.shape[0],), float(sigma), dtype=torch.float64)
                return net(x.to(torch.float64), s)

        return denoise_net, int(target.info["dim"])
    field = MixtureField.from_target(target, nodes=nodes)
    return (lambda x, sigma: field.denoise(x, sigma, aug_dim)), field.dim


@attrs.define(kw_only=True)
class PFGMPP(Sampler):
    """PFGM++ sampling with augmentation dimension D (D = inf is the EDM sampler); see the module docstring.

    Inputs: ``target``, a Gaussian mixture with isotropic components (exact field by quadrature,
    :class:`~quadriga_pfgmpp.field.MixtureField`) or a ``Fitted`` from ``pfgmpp-denoiser``.
    Hyperparameters: ``aug_dim`` D, ``num_steps`` M (NFE = 2 M - 1), ``sigma_min``, ``sigma_max``,
    ``rho``, ``num_samples``, ``field_error`` epsilon, ``quadrature_nodes``.

    Returns ``Samples`` with ``x: Tensor[n, N]`` float64 and ``info``: ``aug_dim``, ``nfe``,
    ``score_evals``, ``x_T_digest``, ``prior_radius_median``, ``seconds``.

    Raises:
        ConfigError: D < 1, a network trained at another D, or a non-mixture target.
        FloatingPointError: non-finite samples.

    Source: Xu, Liu, Tian, Tong, Tegmark & Jaakkola 2023, "PFGM++: Unlocking the potential of
    physics-inspired generative models" (ICML, arXiv 2302.04265), eq. 4-5, sec. 4; official code
    ``Newbeeer/pfgmpp`` ``generate.py`` (prior) and Karras et al. 2022, Algorithm 1 (steps).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"target": (Target, Fitted)}

    aug_dim: float = param(
        128.0, doc="augmentation dimension D (>= 1; inf = diffusion / EDM)", validator=_aug_dim, infinite=True
    )
    num_steps: int = param(18, doc="sigma points M before 0; NFE = 2 M - 1 (count)", validator=positive_int)
    sigma_min: float = param(0.002, doc="smallest nonzero sigma (units of x)", validator=positive)
    sigma_max: float = param(
        80.0, doc="initial sigma; r_max = sigma_max sqrt(D) (units of x)", validator=positive
    )
    rho: float = param(7.0, doc="EDM step warping exponent", validator=positive)
    num_samples: int = param(1000, doc="n, trajectories (count)", validator=positive_int)
    field_error: float = param(
        0.0,
        doc="epsilon: N(0, (epsilon sigma)^2 I) noise added to every denoiser output (injected field error)",
        validator=in_range(0.0, 10.0),
    )
    quadrature_nodes: int = param(
        512, doc="nodes over log W for the exact mixture field (count)", validator=positive_int
    )

    def sample(self, target: Any, *, generator: torch.Generator) -> Samples:
        """Draw x_T from the PFGM++ prior and integrate the ODE; see the class docstring."""
        d = float(self.aug_dim)
        denoise, dim = as_denoiser(target, d, nodes=int(self.quadrature_nodes))
        sigmas = karras_sigmas(int(self.num_steps), self.sigma_min, self.sigma_max, self.rho)
        x_T = prior_draw(
            int(self.num_samples), dim, float(self.sigma_max), d, child_generator(generator, "x_T")
        )
        noise_gen = child_generator(generator, "field_error")
        eps = float(self.field_error)

        def noisy(x: torch.Tensor, sigma: float) -> torch.Tensor:
            out = denoise(x, sigma)
            if eps > 0:
                out = out + eps * sigma * torch.randn(out.shape, generator=noise_gen, dtype=torch.float64)
            return out

        start = time.perf_counter()
        with single_thread():
            x, nfe = heun_solve(noisy, x_T, sigmas)
        if not torch.isfinite(x).all():
            raise FloatingPointError("pfgmpp produced non-finite values")
        info = {
            "aug_dim": d,
            "nfe": nfe,
            "score_evals": nfe * int(self.num_samples),
            "x_T_digest": x_T_digest(x_T),
            "prior_radius_median": float(x_T.norm(dim=1).median()),
            "seconds": time.perf_counter() - start,
        }
        return Samples(x=x, info=info)
