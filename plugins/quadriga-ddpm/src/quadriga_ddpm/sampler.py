"""DDPM and DDIM reverse chains from a score model.

DDPM (Ho et al. 2020, Algorithm 2, written with the score s_t = grad log p_t):

    Y_T ~ N(0, I),   Y_{t-1} = (Y_t + beta_t s_t(Y_t)) / sqrt(alpha_t) + sigma_t Z_t,

with sigma_t^2 = beta_t (``variance="beta"``, the sampler analysed by Li, Cai & Wei 2025) or
the posterior variance beta~_t = beta_t (1 - alpha_bar_{t-1}) / (1 - alpha_bar_t)
(``variance="posterior"``, what diffusers calls ``fixed_small``). Noise is added at every step;
with the posterior variance it vanishes at t = 1 because alpha_bar_0 = 1.

DDIM (Song, Meng & Ermon 2021, eq. 12), with x0_hat = (Y_t + (1 - ab_t) s_t) / sqrt(ab_t) and
eps_hat = -sqrt(1 - ab_t) s_t:

    Y_{t-1} = sqrt(ab_{t-1}) x0_hat + sqrt(1 - ab_{t-1} - sigma_t^2) eps_hat + sigma_t Z_t,
    sigma_t = eta sqrt((1 - ab_{t-1}) / (1 - ab_t)) sqrt(1 - ab_t / ab_{t-1}).

Both run exactly T steps of the given schedule (no skipped timesteps) and never clip x0_hat:
the targets here are not images in [-1, 1]. Every schedule quantity (beta_t, 1 - beta_t, ab_t, ab_{t-1},
the posterior variance beta~_t of Ho et al. 2020, eq. 7) is read from the kit's schedule object,
:class:`quadriga_ddpm.noise_schedule.DiscreteSchedule`.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.artifacts import Fitted, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Sampler, Target
from quadriga.progress import current_progress
from quadriga.threads import single_thread
from quadriga.validators import in_range, one_of, optional, positive, positive_int, probability
from quadriga_ddpm.guidance import guidance_info, guided_score_model
from quadriga_ddpm.noise_schedule import DiscreteSchedule
from quadriga_ddpm.schedules import SCHEDULES

__all__ = ["DDIM", "DDPM", "VARIANCES", "run_chain"]

VARIANCES = ("beta", "posterior")
_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def _sigmas(
    schedule: DiscreteSchedule | torch.Tensor, method: str, variance: str, eta: float
) -> torch.Tensor:
    """Per-step noise standard deviations sigma_t, ``Tensor[T]`` float64 (see module docstring).

    ``schedule``: a :class:`DiscreteSchedule` or its beta table ``Tensor[T]``.
    """
    sched = DiscreteSchedule.from_betas(schedule)
    post = sched.posterior_variances
    if method == "ddpm":
        return (sched.betas if variance == "beta" else post).sqrt()
    return eta * post.sqrt()


def run_chain(
    score_model: Any,
    schedule: DiscreteSchedule | torch.Tensor,
    num_samples: int,
    *,
    generator: torch.Generator,
    method: str = "ddpm",
    variance: str = "beta",
    eta: float = 0.0,
    dtype: torch.dtype = torch.float64,
    progress: Any = None,
) -> torch.Tensor:
    """Run the reverse chain from Y_T ~ N(0, I) down to Y_0.

    Args:
        score_model: ``score_model(x: Tensor[n, d], t: int, alpha_bar: float) -> Tensor[n, d]`` with
            ``dim`` (see :mod:`quadriga_ddpm.score_models`).
        schedule: a :class:`DiscreteSchedule`, or its beta table ``Tensor[T]`` (each in (0, 1)).
        num_samples: n.
        generator: ``torch.Generator``, the only randomness (Y_T, then one N(0, I) draw per step).
        method: ``"ddpm"`` or ``"ddim"``.
        variance: ``"beta"`` or ``"posterior"`` (DDPM only).
        eta: DDIM stochasticity in [0, 1] (0: deterministic; 1: DDPM with the posterior variance).
        dtype: float32 or float64 for the state.
        progress: optional object with ``start(total, description)`` and ``advance(n)``.

    Returns:
        ``Tensor[n, d]``: Y_0, in the target's units.

    Raises:
        ConfigError: a beta table that is not 1-D with every entry in (0, 1).
        FloatingPointError: the state became non-finite.

    Source: Ho et al. 2020, Algorithm 2; Song et al. 2021, eq. 12; Li, Cai & Wei 2025, eq. (2.4).
    """
    sched = DiscreteSchedule.from_betas(schedule)
    T = sched.num_steps
    d = int(score_model.dim)
    if hasattr(score_model, "num_steps"):
        score_model.num_steps = T
    b = sched.betas.tolist()
    a = sched.step_alphas.tolist()  # 1 - beta_t
    ab = sched.alpha_bars.tolist()
    ab_prev = sched.alpha_bars_prev.tolist()  # ab_{t-1}, ab_0 = 1
    sig = _sigmas(sched, method, variance, eta).tolist()
    x = torch.randn(num_samples, d, generator=generator, dtype=dtype)
    if progress is not None:
        progress.start(T, description=f"{method} T={T}")
    for t in range(T, 0, -1):
        i = t - 1
        s = score_model(x, t, ab[i])
        if method == "ddpm":
            x = (x + b[i] * s) / a[i] ** 0.5
        else:
            ab_t, ab_p = ab[i], ab_prev[i]
            x0 = (x + (1 - ab_t) * s) / ab_t**0.5
            eps = -((1 - ab_t) ** 0.5) * s
            x = ab_p**0.5 * x0 + max(1 - ab_p - sig[i] ** 2, 0.0) ** 0.5 * eps
        if sig[i] > 0:
            x = x + sig[i] * torch.randn(num_samples, d, generator=generator, dtype=dtype)
        if progress is not None:
            progress.advance(1)
    if not torch.isfinite(x).all():
        raise FloatingPointError("the reverse chain produced non-finite values; check the score model")
    return x


def _check_num_steps(instance: Any, attribute: Any, value: int) -> None:
    if int(value) < 2:
        raise ConfigError(f"num_steps must be an integer >= 2, got {value}.", key="num_steps")


@attrs.define(kw_only=True)
class _Chain(Sampler):
    """Shared fields and ``sample`` of :class:`DDPM` and :class:`DDIM`."""

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"target": (Target, Fitted)}
    _method = "ddpm"

    num_steps: int = param(
        200, doc="T, number of reverse steps (each one score evaluation)", validator=_check_num_steps
    )
    num_samples: int = param(
        5000, doc="n, number of independent chains / output samples", validator=positive_int
    )
    schedule: str = param(
        "theory",
        doc="beta schedule: 'theory' (Li, Cai & Wei 2025), 'linear' "
        "(Ho et al. 2020, rescaled to T steps) or 'cosine' (Nichol & Dhariwal 2021)",
        validator=one_of(SCHEDULES),
    )
    c0: float = param(2.0, doc="theory schedule: beta_1 = T^(-c0) (dimensionless)", validator=positive)
    c1: float = param(
        4.0,
        doc="theory schedule: growth rate and plateau c1 log T / T (dimensionless)",
        validator=positive,
    )
    dtype: str = param(
        "float64",
        doc="float type of the chain's state: 'float32' or 'float64'",
        validator=one_of(tuple(_DTYPES)),
    )
    guidance: float | None = param(
        None,
        doc="classifier-free guidance weight w >= -1 on a conditional input (see quadriga_ddpm.guidance); "
        "None: unguided",
        validator=optional(in_range(-1.0)),
    )

    def score_model(self, target: Any) -> Any:
        """The score model this sampler runs on ``target`` (the guidance hook; subclasses override)."""
        return guided_score_model(target, self.guidance)

    def noise_schedule(self) -> DiscreteSchedule:
        """The :class:`DiscreteSchedule` this sampler runs (``schedule`` with T = ``num_steps``)."""
        return DiscreteSchedule.named(
            self.schedule,
            int(self.num_steps),
            **({"c0": self.c0, "c1": self.c1} if self.schedule == "theory" else {}),
        )

    def betas(self) -> torch.Tensor:
        """The beta table ``Tensor[T]`` float64 this sampler runs (``noise_schedule().betas``)."""
        return self.noise_schedule().betas

    def _chain_kwargs(self) -> dict[str, Any]:
        raise NotImplementedError

    def sample(self, target: Any, *, generator: torch.Generator) -> Samples:
        """Run the reverse chain on the score model built from ``target``.

        Args:
            target: a Target with ``noised_score`` (exact score) or a ``Fitted`` score network
                (see :func:`quadriga_ddpm.score_models.as_score_model`).
            generator: ``torch.Generator``.

        Returns:
            ``Samples`` with ``x: Tensor[num_samples, d]`` (dtype as configured) and ``info``:
            ``score_evals`` (n T), ``num_steps``, ``schedule``, ``method``, ``alpha_bar_T``,
            ``seconds``, and ``betas`` (the T step sizes, for exact checks downstream).

        Raises:
            ConfigError: the input cannot serve as a score model (or, with ``guidance``, has no
                conditional pair).
        """
        model = self.score_model(target)
        sched = self.noise_schedule()
        start = time.perf_counter()
        with single_thread():  # small batched tensors: intra-op threads only contend
            x = run_chain(
                model,
                sched,
                int(self.num_samples),
                generator=generator,
                dtype=_DTYPES[self.dtype],
                progress=current_progress(),
                **self._chain_kwargs(),
            )
        info = {
            "score_evals": int(self.num_samples) * int(self.num_steps),
            "num_steps": int(self.num_steps),
            "schedule": self.schedule,
            "alpha_bar_T": sched.alpha_bar_T,
            "seconds": time.perf_counter() - start,
            "betas": sched.betas.tolist(),
            **self._chain_kwargs(),
            **guidance_info(model),
        }
        return Samples(x=x, info=info)


@attrs.define(kw_only=True)
class DDPM(_Chain):
    """DDPM ancestral sampling from a score model (exact analytic score or a learned network).

    Hyperparameters: ``num_steps`` T, ``num_samples`` n, ``schedule``, ``c0``/``c1`` (theory
    schedule), ``variance`` ("beta" or "posterior"), ``dtype``. Cost: n T score evaluations.

    Raises:
        ConfigError: invalid parameters (when built) or an input that is no score model.

    Source: Ho et al. 2020, Algorithm 2; schedule and variance beta_t of Li, Cai & Wei 2025
    (arXiv 2504.05300), section 2.
    """

    variance: str = param(
        "beta",
        doc="per-step noise variance: 'beta' (beta_t, as analysed) or 'posterior' "
        "(beta_t (1 - ab_{t-1}) / (1 - ab_t), diffusers' 'fixed_small')",
        validator=one_of(VARIANCES),
    )

    def _chain_kwargs(self) -> dict[str, Any]:
        return {"method": "ddpm", "variance": self.variance}


@attrs.define(kw_only=True)
class DDIM(_Chain):
    """DDIM sampling from a score model: eta = 0 deterministic, eta = 1 the DDPM posterior chain.

    Hyperparameters: ``num_steps`` T, ``num_samples`` n, ``schedule``, ``c0``/``c1``, ``eta``, ``dtype``.

    Raises:
        ConfigError: invalid parameters or an input that is no score model.

    Source: Song, Meng & Ermon 2021, eq. 12 and eq. 16.
    """

    eta: float = param(
        0.0,
        doc="stochasticity eta in [0, 1] (0: deterministic DDIM)",
        validator=probability,
    )

    def _chain_kwargs(self) -> dict[str, Any]:
        return {"method": "ddim", "eta": float(self.eta)}
