"""Characteristic guidance as a score model, and the DDIM / DDPM samplers that run it.

:class:`CharacteristicGuidance` follows quadriga-ddpm's score-model protocol
(``model(x, t, alpha_bar) -> score``): at every call it solves the correction's fixed point
(:func:`~quadriga_characteristic_guidance.correction.characteristic_correction`) and returns the
corrected guided score, so any sampler of the diffusion kit runs it through the kit's guidance hook
(``score_model``). The samplers here are quadriga-ddpm's ``ddim`` and ``ddpm`` with that hook
overridden: the same schedule, steps, x_T and noise draws as the classifier-free baseline
(``ddim``/``ddpm`` with ``guidance = w``), so replicate i of both arms starts from the same x_T.

Per step the correction is warm-started from the previous step's, rescaled by sigma_t^2 /
sigma_{t+1}^2 (Dx ~ sigma^2 (s_c - s_u); the code's ``dxs_buffer`` rescaling) when ``warm_start``.
Recorded in ``Samples.info``: ``guidance``, ``score_evals`` (rows evaluated by either model, the
cost), ``chg_converged_fraction`` (over all steps and samples), ``chg_min_step_converged_fraction``,
``chg_mean_iterations``, ``chg_correction_rms`` (RMS of Dx / sigma over converged samples, the size of
the correction in noise units) and ``chg_steps`` (steps solved).

Source: Zheng & Lan 2024, arXiv 2312.07586, sec. 5; the samplers: Song, Meng & Ermon 2021 (DDIM,
eq. 12), Ho et al. 2020 (DDPM, Algorithm 2), through quadriga-ddpm.
"""

from __future__ import annotations

from typing import Any

import attrs
import torch
from quadriga_ddpm.guidance import score_pair
from quadriga_ddpm.sampler import DDIM, DDPM

from quadriga import param
from quadriga.validators import in_range, int_at_least, non_negative_int, one_of
from quadriga_characteristic_guidance.correction import PROJECTIONS, characteristic_correction

__all__ = ["CharacteristicDDIM", "CharacteristicDDPM", "CharacteristicGuidance"]


class CharacteristicGuidance:
    """Score model of characteristic guidance (see the module docstring).

    Args:
        conditional, unconditional: score models with ``dim``.
        w: guidance weight >= -1.
        max_iterations, tol, memory, step_size, projection, regularization: see
            :func:`~quadriga_characteristic_guidance.correction.characteristic_correction`.
        warm_start: start each step's solve from the previous step's correction (rescaled).

    Source: Zheng & Lan 2024 (arXiv 2312.07586), sec. 5.
    """

    def __init__(
        self,
        conditional: Any,
        unconditional: Any,
        w: float,
        *,
        max_iterations: int = 50,
        tol: float = 1e-4,
        memory: int = 2,
        step_size: float = 1.0,
        projection: str = "identity",
        regularization: float = 0.0,
        regularization_range: float = 1.0,
        alpha_bar_min: float | None = None,
        warm_start: bool = True,
    ) -> None:
        self.conditional, self.unconditional, self.w = conditional, unconditional, float(w)
        self.dim = int(conditional.dim)
        self.options: dict[str, Any] = {
            "max_iterations": int(max_iterations),
            "tol": float(tol),
            "memory": int(memory),
            "step_size": float(step_size),
            "projection": projection,
        }
        self.regularization, self.regularization_range = float(regularization), float(regularization_range)
        self.alpha_bar_min = alpha_bar_min
        self.warm_start = bool(warm_start)
        self.evals = 0
        self._prev: tuple[torch.Tensor, float] | None = None
        self._steps: list[
            tuple[int, int, float, float, int]
        ] = []  # converged, n, iterations, dx^2 sum, n conv

    def __call__(self, x: torch.Tensor, t: int, alpha_bar: float) -> torch.Tensor:
        """Corrected guided score ``Tensor[n, d]`` at ``x: Tensor[n, d]`` (units 1 / x)."""
        sigma2 = 1.0 - float(alpha_bar)
        dx0 = None
        if (
            self.warm_start
            and self._prev is not None
            and self._prev[0].shape == x.shape
            and self._prev[1] > 0
        ):
            dx0 = self._prev[0] * (sigma2 / self._prev[1])
        if self.alpha_bar_min is None:  # a reverse sampler's first call is its noisiest level
            self.alpha_bar_min = float(alpha_bar)
        reg = self.regularization * (self.alpha_bar_min / float(alpha_bar)) ** (
            1.0 / self.regularization_range
        )
        out = characteristic_correction(
            self.conditional,
            self.unconditional,
            x,
            t,
            alpha_bar,
            self.w,
            dx0=dx0,
            regularization=reg,
            **self.options,
        )
        self._prev = (out.dx, sigma2)
        self.evals += out.evals
        conv = out.converged
        nconv = int(conv.sum())
        dx2 = float((out.dx[conv].pow(2).mean(-1) / max(sigma2, 1e-300)).sum()) if nconv else 0.0
        self._steps.append((nconv, int(x.shape[0]), float(out.iterations.double().mean()), dx2, nconv))
        return out.score

    def guidance_info(self) -> dict[str, Any]:
        """Guidance weight, cost and convergence record for ``Samples.info`` (module docstring)."""
        steps = self._steps
        total = sum(s[1] for s in steps)
        conv = sum(s[0] for s in steps)
        nconv = sum(s[4] for s in steps)
        return {
            "guidance": self.w,
            "score_evals": int(self.evals),
            "chg_steps": len(steps),
            "chg_converged_fraction": conv / total if total else 1.0,
            "chg_min_step_converged_fraction": min((s[0] / s[1] for s in steps), default=1.0),
            "chg_mean_iterations": sum(s[2] for s in steps) / len(steps) if steps else 0.0,
            "chg_correction_rms": (sum(s[3] for s in steps) / nconv) ** 0.5 if nconv else 0.0,
        }


@attrs.define(kw_only=True, slots=False)
class _Characteristic:
    """The correction's hyperparameters and the guidance hook shared by the samplers below."""

    guidance: float = param(
        3.0, doc="guidance weight w >= -1 (0: conditional, -1: unconditional)", validator=in_range(-1.0)
    )
    max_iterations: int = param(
        50, doc="fixed-point iterations per step at most (0: plain CFG)", validator=non_negative_int
    )
    tol: float = param(
        1e-4, doc="convergence: RMS residual / sigma at most tol", validator=in_range(0.0, 1.0, low_open=True)
    )
    memory: int = param(2, doc="Anderson acceleration memory m (0: damped Picard)", validator=int_at_least(0))
    step_size: float = param(
        1.0, doc="fixed-point step size beta in (0, 1]", validator=in_range(0.0, 1.0, low_open=True)
    )
    projection: str = param(
        "cfg-direction",
        doc="projection P: 'cfg-direction' (the official code's default one-basis projection) or 'identity'",
        validator=one_of(PROJECTIONS),
    )
    regularization: float = param(
        1.0,
        doc="reg_ini: P is shrunk by 1 / (1 + reg(t)), "
        "reg(t) = reg_ini (alpha_bar_T / alpha_bar_t)^(1 / range) (0: unregularised; inf: CFG)",
        validator=in_range(0.0),
    )
    regularization_range: float = param(
        1.0,
        doc="reg_range: how slowly reg(t) decays from the noisiest step",
        validator=in_range(0.0, low_open=True),
    )
    warm_start: bool = param(True, doc="start each solve from the previous step's rescaled correction")

    def _alpha_bar_min(self) -> float | None:
        """alpha_bar at the noisiest step of the sampler's schedule (None: the first call's)."""
        betas = getattr(self, "betas", None)
        if betas is None:
            return None
        from quadriga_ddpm.schedules import alpha_bars

        return float(alpha_bars(betas())[-1])

    def score_model(self, target: Any) -> Any:
        """:class:`CharacteristicGuidance` on the input's conditional pair (the kit's guidance hook)."""
        cond, uncond = score_pair(target)
        return CharacteristicGuidance(
            cond,
            uncond,
            float(self.guidance),
            max_iterations=int(self.max_iterations),
            tol=float(self.tol),
            memory=int(self.memory),
            step_size=float(self.step_size),
            projection=self.projection,
            regularization=float(self.regularization),
            regularization_range=float(self.regularization_range),
            alpha_bar_min=self._alpha_bar_min(),
            warm_start=bool(self.warm_start),
        )


@attrs.define(kw_only=True, slots=False)
class CharacteristicDDIM(_Characteristic, DDIM):  # type: ignore[misc]  # guidance: float, not optional
    """DDIM (eta = 0: the probability-flow sampler) with characteristic guidance.

    Hyperparameters: those of quadriga-ddpm's ``ddim`` (``num_steps``, ``num_samples``, ``schedule``,
    ``eta``, ...) and of the correction (``guidance`` w, ``max_iterations``, ``tol``, ``memory``,
    ``step_size``, ``projection``, ``regularization``, ``warm_start``). Cost: ``info["score_evals"]``.

    Raises:
        ConfigError: invalid parameters, or an input without a conditional pair.

    Source: Zheng & Lan 2024 (arXiv 2312.07586), sec. 5; Song, Meng & Ermon 2021, eq. 12.
    """


@attrs.define(kw_only=True, slots=False)
class CharacteristicDDPM(_Characteristic, DDPM):  # type: ignore[misc]  # guidance: float, not optional
    """DDPM ancestral sampling with characteristic guidance (see :class:`CharacteristicDDIM`).

    Source: Zheng & Lan 2024 (arXiv 2312.07586), sec. 5; Ho et al. 2020, Algorithm 2.
    """
