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
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import torch

from quadriga.errors import ConfigError

__all__ = ["SCHEDULE_KINDS", "NoiseSchedule"]

SCHEDULE_KINDS = ("vp-linear", "vp-cosine", "edm")

_COSINE_S = 0.008


def _t(x: Any) -> torch.Tensor:
    return torch.as_tensor(x, dtype=torch.float64)


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
            return torch.sigmoid(2 * lam).sqrt(), torch.sigmoid(-2 * lam).sqrt()
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
