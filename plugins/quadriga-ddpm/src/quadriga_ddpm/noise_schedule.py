"""Continuous-time noise schedules in the (alpha_t, sigma_t, lambda_t) parameterization.

The forward law is x_t = alpha_t x_0 + sigma_t eps, eps ~ N(0, I), and the half log-SNR
lambda_t = log(alpha_t / sigma_t) decreases strictly in t, so it has an inverse t(lambda)
(Lu et al. 2022, "DPM-Solver", sec. 3.1 and Appendix; Kingma et al. 2021, "Variational diffusion
models", eq. 2). Every schedule here gives closed-form ``alpha``, ``sigma``, ``lam`` and
``t_of_lambda``, and ``alpha_sigma_of_lambda`` (which depends on the family only):

* ``vp-linear``: log alpha_t = -(beta_1 - beta_0) t^2 / 4 - beta_0 t / 2, sigma_t^2 = 1 - alpha_t^2,
  t in (0, 1], beta_0 = 0.1, beta_1 = 20 (Song et al. 2021, "Score-based generative modeling through
  SDEs", eq. 33; inverse from DPM-Solver, Appendix D).
* ``vp-cosine``: alpha_t = cos((t + s) / (1 + s) pi / 2) / cos(s / (1 + s) pi / 2), s = 0.008,
  t in (0, 0.9946] (Nichol & Dhariwal 2021, eq. 17, continuous time as in DPM-Solver).
* ``edm``: alpha_t = 1, sigma_t = t, t in [0.002, 80] (Karras et al. 2022, "Elucidating the design
  space", Table 1; variance exploding, lambda = -log t).

Time ``t`` is in the schedule's own units (a fraction of the diffusion for VP, sigma itself for
EDM). Floats in and out, or float64 tensors (elementwise).

:class:`DiscreteSchedule` is the same concept on the integer steps t = 0, 1, ..., T of a DDPM beta
table (``NoiseSchedule.discrete(betas)``, ``DiscreteSchedule.named("cosine", T)``): alpha_bar_t =
prod_{s <= t} (1 - beta_s) (Ho et al. 2020, eq. 4), alpha_t = sqrt(alpha_bar_t), sigma_t =
sqrt(1 - alpha_bar_t), lambda_t = log(alpha_t / sigma_t), the same VP maps of lambda, and the posterior
variance of the reverse step (Ho et al. 2020, eq. 7). The ``ddpm`` / ``ddim`` samplers read every
schedule quantity from it.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import torch

from quadriga.errors import ConfigError
from quadriga_ddpm.schedules import alpha_bars, make_betas

__all__ = ["SCHEDULE_KINDS", "DiscreteSchedule", "NoiseSchedule"]

SCHEDULE_KINDS = ("vp-linear", "vp-cosine", "edm")

_COSINE_S = 0.008


def _t(x: Any) -> torch.Tensor:
    return torch.as_tensor(x, dtype=torch.float64)


def _vp_alpha_sigma_of_lambda(lam: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """VP (alpha, sigma) at half log-SNR ``lam``: alpha^2 = sigmoid(2 lam), sigma^2 = sigmoid(-2 lam)."""
    return torch.sigmoid(2 * lam).sqrt(), torch.sigmoid(-2 * lam).sqrt()


@attrs.frozen(kw_only=True)
class NoiseSchedule:
    """One continuous noise schedule: alpha_t, sigma_t, lambda_t and the inverse t(lambda).

    Attributes:
        kind: one of :data:`SCHEDULE_KINDS`.
        beta_0, beta_1: the ``vp-linear`` rates (dimensionless per unit time).
        t_max: the end of the diffusion (1 for ``vp-linear``, 0.9946 for ``vp-cosine``, sigma_max 80
            for ``edm``); default per kind when ``None``.
        t_min: the default end of sampling (1e-3 VP, 0.002 EDM) when ``None``.

    Raises:
        ConfigError: an unknown kind or t_min >= t_max.

    Source: see the module docstring (Song et al. 2021; Nichol & Dhariwal 2021; Karras et al. 2022;
    Lu et al. 2022 for lambda and its inverse).
    """

    kind: str = "vp-linear"
    beta_0: float = 0.1
    beta_1: float = 20.0
    t_max: float | None = None
    t_min: float | None = None

    def __attrs_post_init__(self) -> None:
        if self.kind not in SCHEDULE_KINDS:
            raise ConfigError(
                f"unknown schedule '{self.kind}'; use one of {', '.join(SCHEDULE_KINDS)}.", key="schedule"
            )
        defaults = {"vp-linear": (1e-3, 1.0), "vp-cosine": (1e-3, 0.9946), "edm": (0.002, 80.0)}[self.kind]
        if self.t_min is None:
            object.__setattr__(self, "t_min", defaults[0])
        if self.t_max is None:
            object.__setattr__(self, "t_max", defaults[1])
        if not 0 < float(self.t_min) < float(self.t_max):  # type: ignore[arg-type]
            raise ConfigError(f"need 0 < t_min < t_max, got {self.t_min}, {self.t_max}.", key="t_end")

    @property
    def variance_preserving(self) -> bool:
        """Whether alpha_t^2 + sigma_t^2 = 1 (VP); else alpha_t = 1 (VE / EDM)."""
        return self.kind != "edm"

    @staticmethod
    def discrete(betas: Any) -> DiscreteSchedule:
        """The discrete schedule of a DDPM beta table: ``DiscreteSchedule.from_betas(betas)``."""
        return DiscreteSchedule.from_betas(betas)

    # ------------------------------------------------------------------ forward maps
    def log_alpha(self, t: Any) -> torch.Tensor:
        """log alpha_t (float64, elementwise)."""
        t = _t(t)
        if self.kind == "vp-linear":
            return -0.25 * (self.beta_1 - self.beta_0) * t**2 - 0.5 * self.beta_0 * t
        if self.kind == "vp-cosine":
            s = _COSINE_S
            return torch.log(torch.cos((t + s) / (1 + s) * math.pi / 2)) - math.log(
                math.cos(s / (1 + s) * math.pi / 2)
            )
        return torch.zeros_like(t)

    def alpha(self, t: Any) -> torch.Tensor:
        """alpha_t, the signal coefficient (float64)."""
        return self.log_alpha(t).exp()

    def sigma(self, t: Any) -> torch.Tensor:
        """sigma_t, the noise standard deviation (units of x, float64)."""
        if self.kind == "edm":
            return _t(t).clone()
        return (-torch.expm1(2 * self.log_alpha(t))).sqrt()

    def lam(self, t: Any) -> torch.Tensor:
        """Half log-SNR lambda_t = log alpha_t - log sigma_t (float64, decreasing in t)."""
        return self.log_alpha(t) - self.sigma(t).log()

    # ------------------------------------------------------------------ inverses
    def alpha_sigma_of_lambda(self, lam: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """(alpha, sigma) at half log-SNR ``lam``: VP a^2 = sigmoid(2 lam); EDM alpha = 1, sigma = e^-lam."""
        lam = _t(lam)
        if self.variance_preserving:
            return _vp_alpha_sigma_of_lambda(lam)
        return torch.ones_like(lam), torch.exp(-lam)

    def t_of_lambda(self, lam: Any) -> torch.Tensor:
        """The inverse t(lambda) in closed form (float64, elementwise).

        ``vp-linear``: with Lg = log(1 + e^(-2 lam)) = -2 log alpha,
        t = 2 Lg / (beta_0 + sqrt(beta_0^2 + 2 (beta_1 - beta_0) Lg)) (DPM-Solver, Appendix D,
        written in the cancellation-free form). ``vp-cosine``: t = 2 (1 + s) / pi arccos(alpha
        cos(s pi / (2 (1 + s)))) - s. ``edm``: t = e^(-lam).
        """
        lam = _t(lam)
        if self.kind == "edm":
            return torch.exp(-lam)
        lg = torch.nn.functional.softplus(-2 * lam)
        if self.kind == "vp-linear":
            b0, db = self.beta_0, self.beta_1 - self.beta_0
            return 2 * lg / (b0 + torch.sqrt(b0 * b0 + 2 * db * lg))
        s = _COSINE_S
        log_a = -0.5 * lg + math.log(math.cos(s / (1 + s) * math.pi / 2))
        return 2 * (1 + s) / math.pi * torch.arccos(log_a.exp()) - s

    def dlog_alpha_dlambda(self, lam: Any) -> torch.Tensor:
        """d log alpha / d lambda: sigma^2 (VP), 0 (EDM)."""
        lam = _t(lam)
        return torch.sigmoid(-2 * lam) if self.variance_preserving else torch.zeros_like(lam)

    def lambda_range(self, t_end: float | None = None, t_start: float | None = None) -> tuple[float, float]:
        """(lambda at t_start = t_max, lambda at t_end = t_min): the sampling interval, increasing."""
        ts = float(self.t_max if t_start is None else t_start)  # type: ignore[arg-type]
        te = float(self.t_min if t_end is None else t_end)  # type: ignore[arg-type]
        return float(self.lam(ts)), float(self.lam(te))

    def lambda_steps(
        self, num_steps: int, *, t_end: float | None = None, skip: str = "logSNR"
    ) -> torch.Tensor:
        """``Tensor[num_steps + 1]`` float64 of increasing lambda from t_max to t_end.

        Args:
            num_steps: M >= 1 intervals (M solver steps).
            t_end: end time (default ``t_min``).
            skip: ``"logSNR"`` (uniform in lambda, DPM-Solver's default for low resolution) or
                ``"time"`` (uniform in t).

        Raises:
            ConfigError: an unknown ``skip`` or ``num_steps < 1``.
        """
        if int(num_steps) < 1:
            raise ConfigError(f"need at least one step, got {num_steps}.", key="nfe")
        lam_T, lam_0 = self.lambda_range(t_end)
        if skip == "logSNR":
            return torch.linspace(lam_T, lam_0, int(num_steps) + 1, dtype=torch.float64)
        if skip == "time":
            te = float(self.t_min if t_end is None else t_end)  # type: ignore[arg-type]
            return self.lam(torch.linspace(float(self.t_max), te, int(num_steps) + 1, dtype=torch.float64))  # type: ignore[arg-type]
        raise ConfigError(f"unknown skip '{skip}'; use 'logSNR' or 'time'.", key="skip")


def _as_float64(betas: Any) -> torch.Tensor:
    return torch.as_tensor(betas, dtype=torch.float64)


def _check_betas(instance: Any, attribute: Any, value: torch.Tensor) -> None:
    if value.ndim != 1 or value.numel() < 1:
        raise ConfigError(
            f"betas must be a 1-D tensor [T] with T >= 1, got shape {tuple(value.shape)}.", key="betas"
        )
    if not bool(((value > 0) & (value < 1)).all()):
        raise ConfigError(
            "every beta_t must lie in (0, 1); build the table with quadriga_ddpm.schedules.make_betas.",
            key="betas",
        )


@attrs.frozen(kw_only=True, eq=False)
class DiscreteSchedule:
    """A DDPM beta table as a noise schedule on the integer steps t = 0, 1, ..., T.

    The forward chain x_t = sqrt(1 - beta_t) x_{t-1} + sqrt(beta_t) eps_t has the marginal
    x_t = sqrt(alpha_bar_t) x_0 + sqrt(1 - alpha_bar_t) eps, alpha_bar_t = prod_{s <= t} (1 - beta_s)
    (Ho et al. 2020, eq. 4), so in :class:`NoiseSchedule`'s terms (always variance preserving):
    alpha_t = sqrt(alpha_bar_t), sigma_t = sqrt(1 - alpha_bar_t) and the half log-SNR
    lambda_t = log(alpha_t / sigma_t) (Kingma et al. 2021, eq. 2, whose log-SNR is 2 lambda_t), which
    decreases strictly in t. At t = 0: alpha_bar = 1, sigma = 0, lambda = +inf.

    Per-step tables (``Tensor[T]`` float64, entry t - 1 for step t = 1..T): :attr:`betas`,
    :attr:`step_alphas` (Ho's per-step alpha_t = 1 - beta_t, *not* the signal coefficient
    :meth:`alpha`), :attr:`alpha_bars`, :attr:`alpha_bars_prev` (alpha_bar_{t-1}, alpha_bar_0 = 1) and
    :attr:`posterior_variances` (beta~_t = beta_t (1 - alpha_bar_{t-1}) / (1 - alpha_bar_t), Ho et al.
    2020, eq. 7). Maps of t (an int or an integer tensor in [0, T]): :meth:`alpha_bar`,
    :meth:`log_alpha`, :meth:`alpha`, :meth:`sigma`, :meth:`lam`; of lambda:
    :meth:`alpha_sigma_of_lambda`, :meth:`dlog_alpha_dlambda` (as :class:`NoiseSchedule` VP) and
    :meth:`t_of_lambda` (piecewise linear between the integer steps, exact at them).

    Build with :meth:`from_betas` (any beta table) or :meth:`named` (``theory``, ``linear``,
    ``cosine`` of :mod:`quadriga_ddpm.schedules`).

    Raises:
        ConfigError: betas not a non-empty 1-D tensor with every entry in (0, 1).

    Source: Ho et al. 2020, eq. 4 and eq. 7; Kingma et al. 2021 (log-SNR); Lu et al. 2022
    (DPM-Solver, sec. 3.1, lambda and its inverse).
    """

    betas: torch.Tensor = attrs.field(converter=_as_float64, validator=_check_betas)
    step_alphas: torch.Tensor = attrs.field(init=False)
    alpha_bars: torch.Tensor = attrs.field(init=False)
    alpha_bars_prev: torch.Tensor = attrs.field(init=False)
    posterior_variances: torch.Tensor = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        ab = alpha_bars(self.betas)
        ab_prev = torch.cat([torch.ones(1, dtype=ab.dtype), ab[:-1]])
        object.__setattr__(self, "step_alphas", 1 - self.betas)
        object.__setattr__(self, "alpha_bars", ab)
        object.__setattr__(self, "alpha_bars_prev", ab_prev)
        object.__setattr__(self, "posterior_variances", self.betas * (1 - ab_prev) / (1 - ab))

    @classmethod
    def from_betas(cls, betas: Any) -> DiscreteSchedule:
        """The schedule of a beta table ``Tensor[T]`` (converted to float64), each beta_t in (0, 1)."""
        if isinstance(betas, DiscreteSchedule):
            return betas
        return cls(betas=betas)

    @classmethod
    def named(cls, schedule: str, num_steps: int, **kwargs: float) -> DiscreteSchedule:
        """The schedule ``schedule`` of :func:`quadriga_ddpm.schedules.make_betas` with T = ``num_steps``.

        Raises:
            ConfigError: an unknown schedule name, or T too small for it.
        """
        return cls(betas=make_betas(schedule, int(num_steps), **kwargs))

    @property
    def num_steps(self) -> int:
        """T, the number of steps."""
        return int(self.betas.shape[0])

    @property
    def variance_preserving(self) -> bool:
        """Always True: alpha_t^2 + sigma_t^2 = 1."""
        return True

    @property
    def alpha_bar_T(self) -> float:
        """alpha_bar_T, the signal fraction left at the last step (a Python float)."""
        return float(self.alpha_bars[-1])

    # ------------------------------------------------------------------ maps of the integer step
    def alpha_bar(self, t: Any) -> torch.Tensor:
        """alpha_bar_t at integer t in [0, T] (float64; alpha_bar_0 = 1).

        Raises:
            ValueError: t not an integer in [0, T].
        """
        t = torch.as_tensor(t)
        if t.is_floating_point() or t.is_complex() or bool(((t < 0) | (t > self.num_steps)).any()):
            raise ValueError(f"t must be an integer step in [0, {self.num_steps}], got {t.tolist()}")
        return torch.cat([torch.ones(1, dtype=torch.float64), self.alpha_bars])[t]

    def log_alpha(self, t: Any) -> torch.Tensor:
        """log alpha_t = log(alpha_bar_t) / 2 (float64)."""
        return 0.5 * self.alpha_bar(t).log()

    def alpha(self, t: Any) -> torch.Tensor:
        """alpha_t = sqrt(alpha_bar_t), the signal coefficient (float64)."""
        return self.alpha_bar(t).sqrt()

    def sigma(self, t: Any) -> torch.Tensor:
        """sigma_t = sqrt(1 - alpha_bar_t), the noise standard deviation (units of x, float64)."""
        return (1 - self.alpha_bar(t)).sqrt()

    def lam(self, t: Any) -> torch.Tensor:
        """Half log-SNR lambda_t = (log alpha_bar_t - log(1 - alpha_bar_t)) / 2 (float64; +inf at t = 0)."""
        ab = self.alpha_bar(t)
        return 0.5 * (ab.log() - torch.log1p(-ab))

    # ------------------------------------------------------------------ maps of lambda
    def alpha_sigma_of_lambda(self, lam: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """(alpha, sigma) at half log-SNR ``lam``: alpha^2 = sigmoid(2 lam), sigma^2 = sigmoid(-2 lam)."""
        return _vp_alpha_sigma_of_lambda(_t(lam))

    def dlog_alpha_dlambda(self, lam: Any) -> torch.Tensor:
        """d log alpha / d lambda = sigma^2 (float64)."""
        return torch.sigmoid(-2 * _t(lam))

    def t_of_lambda(self, lam: Any) -> torch.Tensor:
        """The inverse t(lambda) on [lambda_T, lambda_1]: linear in lambda between the integer steps.

        Returns float64 t in [1, T], equal to the step t where lambda = lambda_t.

        Raises:
            ValueError: lambda outside [lambda_T, lambda_1] (or T = 1, where there is no interval).
        """
        lam = _t(lam)
        steps = torch.arange(1, self.num_steps + 1)
        knots = self.lam(steps).flip(0)  # increasing
        lo, hi = float(knots[0]), float(knots[-1])
        if self.num_steps < 2 or bool(((lam < lo) | (lam > hi)).any()):
            raise ValueError(f"lambda must lie in [lambda_T, lambda_1] = [{lo}, {hi}] (T >= 2)")
        ts = steps.flip(0).to(torch.float64)
        j = torch.searchsorted(knots, lam.reshape(-1), right=True).clamp(1, self.num_steps - 1)
        w = (lam.reshape(-1) - knots[j - 1]) / (knots[j] - knots[j - 1])
        return (ts[j - 1] + w * (ts[j] - ts[j - 1])).reshape(lam.shape)
