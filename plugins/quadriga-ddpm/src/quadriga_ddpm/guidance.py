"""The guidance hook of the samplers: classifier-free guidance from a conditional and an unconditional score.

With a conditional score model s(x | c) and an unconditional one s(x) at the same noise level,
classifier-free guidance with weight w (Ho & Salimans 2022, eq. 6, written with scores:
eps_tilde = (1 + w) eps(x, c) - w eps(x), and eps = -sqrt(1 - alpha_bar) score) runs the sampler on

    s_w(x) = (1 + w) s(x | c) - w s(x),

the score of p_t(x | c)^{1 + w} p_t(x)^{-w} at every noise level t (not the noised law of the
t = 0 geometric target p(x | c)^{1 + w} p(x)^{-w}: noising and the geometric mixture do not commute).
w = 0 is the conditional sampler and w = -1 the unconditional one, exactly (the guidance scale of
other papers is h = 1 + w).

The hook: every sampler of this plugin (``ddpm``, ``ddim``, ``dpm-solver-pp``, ``reference-ode``) has a
``guidance`` parameter (w, or ``None`` for no guidance) and builds its score model with
``self.score_model(target)``, which calls :func:`guided_score_model`. A subclass replaces the guided
combination by overriding ``score_model`` (quadriga-characteristic-guidance does). The input must
offer a conditional pair (:func:`score_pair`): ``conditional_target`` and ``unconditional_target``
attributes, each anything :func:`~quadriga_ddpm.score_models.as_score_model` accepts (the
``conditional-gaussian-mixture`` target does). A guided score model may report its own cost and
diagnostics through ``guidance_info()`` (:func:`guidance_info`), merged into ``Samples.info``.
"""

from __future__ import annotations

from typing import Any

import torch

from quadriga.errors import ConfigError
from quadriga_ddpm.score_models import as_score_model

__all__ = ["ClassifierFreeGuidance", "guidance_info", "guided_score_model", "score_pair"]


def score_pair(target: Any) -> tuple[Any, Any]:
    """The (conditional, unconditional) score models of a guidance input.

    Args:
        target: an object with ``conditional_target`` and ``unconditional_target`` (each a target
            with ``noised_score``, a ``Fitted`` score network or a score model).

    Returns:
        ``(s_c, s_u)``: two score models ``(x: Tensor[n, d], t, alpha_bar) -> Tensor[n, d]`` of the same
        dimension.

    Raises:
        ConfigError: the input has no conditional pair, or the two dimensions differ.
    """
    if not (hasattr(target, "conditional_target") and hasattr(target, "unconditional_target")):
        raise ConfigError(
            f"guidance needs a conditional and an unconditional score, but '{type(target).__name__}' "
            "has no conditional_target / unconditional_target; use a conditional target such as "
            "'conditional-gaussian-mixture', or set guidance = None.",
            key="guidance",
        )
    cond = as_score_model(target.conditional_target)
    uncond = as_score_model(target.unconditional_target)
    if int(cond.dim) != int(uncond.dim):
        raise ConfigError(
            f"the conditional score has dimension {cond.dim} but the unconditional one {uncond.dim}.",
            key="guidance",
        )
    return cond, uncond


class ClassifierFreeGuidance:
    """The score model s_w = (1 + w) s(x | c) - w s(x) (see the module docstring).

    Args:
        conditional, unconditional: score models ``(x: Tensor[n, d], t: int, alpha_bar: float) ->
            Tensor[n, d]`` with ``dim``.
        w: guidance weight (dimensionless, >= -1; 0: conditional, -1: unconditional).

    Attributes:
        evals: rows evaluated by either model so far (2 n per call: the cost counter).

    Raises:
        ConfigError: w < -1 or not finite.

    Source: Ho & Salimans 2022, "Classifier-free diffusion guidance" (arXiv 2207.12598), eq. 6.
    """

    def __init__(self, conditional: Any, unconditional: Any, w: float) -> None:
        w = float(w)
        if not (w >= -1.0 and w < float("inf")):
            raise ConfigError(f"the guidance weight must be a finite number >= -1, got {w}.", key="guidance")
        self.conditional, self.unconditional, self.w = conditional, unconditional, w
        self.dim = int(conditional.dim)
        self.evals = 0

    def __call__(self, x: torch.Tensor, t: int, alpha_bar: float) -> torch.Tensor:
        """Guided score ``Tensor[n, d]`` at ``x: Tensor[n, d]`` (units 1 / x)."""
        self.evals += 2 * int(x.shape[0])
        w = self.w
        return (1.0 + w) * self.conditional(x, t, alpha_bar) - w * self.unconditional(x, t, alpha_bar)

    def guidance_info(self) -> dict[str, Any]:
        """``{"guidance": w, "score_evals": rows evaluated}`` for ``Samples.info``."""
        return {"guidance": self.w, "score_evals": int(self.evals)}


def guided_score_model(target: Any, guidance: float | None) -> Any:
    """The score model a sampler runs: unguided (``guidance=None``) or classifier-free guided.

    Args:
        target: the sampler's input (see :func:`score_pair` for a guided one).
        guidance: the weight w (>= -1) or ``None``.

    Returns:
        :func:`~quadriga_ddpm.score_models.as_score_model` of the input, or a
        :class:`ClassifierFreeGuidance` on its conditional pair.

    Raises:
        ConfigError: see :func:`score_pair` and :class:`ClassifierFreeGuidance`.
    """
    if guidance is None:
        return as_score_model(target)
    cond, uncond = score_pair(target)
    return ClassifierFreeGuidance(cond, uncond, float(guidance))


def guidance_info(model: Any) -> dict[str, Any]:
    """What a guided score model reports for ``Samples.info`` (``{}`` for an unguided one)."""
    report = getattr(model, "guidance_info", None)
    return dict(report()) if callable(report) else {}
