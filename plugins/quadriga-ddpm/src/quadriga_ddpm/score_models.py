"""The score-model interface that the DDPM / DDIM samplers run on, and its two adapters.

A *score model* is any callable

    score_model(x: Tensor[n, d], t: int, alpha_bar: float) -> Tensor[n, d]

returning an estimate of grad_x log p_t(x), the score of the law of
x_t = sqrt(alpha_bar) x_0 + sqrt(1 - alpha_bar) eps, eps ~ N(0, I), at the step index
t in 1..T of the sampler's schedule and its cumulative alpha_bar = alpha_bar_t in (0, 1].
It also has an integer attribute ``dim`` (d). Nothing else is required, so any object that
follows this protocol can be passed to :func:`quadriga_ddpm.sampler.run_chain` directly.

Two adapters turn pipeline inputs into score models (:func:`as_score_model` picks one):

* :class:`AnalyticScore` wraps a target with an exact ``noised_score(x, alpha_bar)``, such as
  quadriga-std's ``gaussian-mixture`` or this plugin's ``sphere-mixture``.
* :class:`NetworkScore` wraps a learned network (a Learner's ``Fitted`` artifact or a plain
  ``torch.nn.Module``), epsilon- or score-parameterised (Ho et al. 2020, eq. 11: the
  epsilon-prediction relates to the score by eps = -sqrt(1 - alpha_bar) * score).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import torch

from quadriga.errors import ConfigError

__all__ = [
    "PARAMETERIZATIONS",
    "TIME_INPUTS",
    "AnalyticScore",
    "NetworkScore",
    "ScoreModel",
    "as_score_model",
]

PARAMETERIZATIONS = ("eps", "score")
TIME_INPUTS = ("alpha_bar", "index", "fraction")


@runtime_checkable
class ScoreModel(Protocol):
    """Protocol: ``__call__(x: Tensor[n, d], t: int, alpha_bar: float) -> Tensor[n, d]`` and ``dim``."""

    dim: int

    def __call__(self, x: torch.Tensor, t: int, alpha_bar: float) -> torch.Tensor: ...


class AnalyticScore:
    """Exact score of a noised target: ``target.noised_score(x, alpha_bar)``.

    Args:
        target: an object with ``dim`` and ``noised_score(x: Tensor[n, d], alpha_bar: float)
            -> Tensor[n, d]`` (the exact grad log of the noised law).

    Raises:
        ConfigError: the target has no ``noised_score``.

    Source: the forward process of Ho et al. 2020 (eq. 4); the mixture case is in the
    research note (section c) and quadriga-std's ``GaussianMixture.noised_score``.
    """

    def __init__(self, target: Any) -> None:
        if not callable(getattr(target, "noised_score", None)):
            raise ConfigError(
                f"target '{type(target).__name__}' has no exact noised_score(x, alpha_bar); use a target "
                "that gives one (e.g. 'gaussian-mixture' or 'sphere-mixture') or a learned score network "
                "(a Fitted input).",
                key="target",
            )
        self.target = target
        self.dim = int(target.dim)

    def __call__(self, x: torch.Tensor, t: int, alpha_bar: float) -> torch.Tensor:
        """Score ``Tensor[n, d]`` of the noised target at ``x`` (``Tensor[n, d]``); ``t`` is unused."""
        return self.target.noised_score(x, alpha_bar)


class NetworkScore:
    """A learned network used as a score model.

    The network is called as ``model(x, c)`` with ``x: Tensor[n, d]`` and the time input
    ``c: Tensor[n]`` (same dtype as x), and returns ``Tensor[n, d]``.

    Args:
        fitted: a ``quadriga.Fitted`` (its ``model`` is used; ``info`` may carry
            ``parameterization``, ``time_input``, ``num_train_steps`` and ``dim`` as defaults)
            or a ``torch.nn.Module`` / callable.
        parameterization: ``"eps"`` (the net predicts the noise eps; score = -eps / sqrt(1 - ab))
            or ``"score"`` (the net predicts the score). Default: ``fitted.info`` or ``"eps"``.
        time_input: what ``c`` is: ``"alpha_bar"`` (the cumulative alpha_bar_t, schedule-free),
            ``"index"`` (t as a float in 1..num_train_steps) or ``"fraction"`` (t / T in (0, 1]).
            Default: ``fitted.info`` or ``"alpha_bar"``.
        dim: d; default ``fitted.info["dim"]`` or the model's ``dim`` attribute.

    Raises:
        ConfigError: unknown parameterization / time input, or no dimension known.

    Source: Ho et al. 2020, eq. 11 (epsilon parameterisation); Song et al. 2021 (score SDE).
    """

    def __init__(
        self,
        fitted: Any,
        *,
        parameterization: str | None = None,
        time_input: str | None = None,
        dim: int | None = None,
    ) -> None:
        info = getattr(fitted, "info", None) or {}
        model = getattr(fitted, "model", fitted)
        self.parameterization = parameterization or info.get("parameterization", "eps")
        self.time_input = time_input or info.get("time_input", "alpha_bar")
        if self.parameterization not in PARAMETERIZATIONS:
            raise ConfigError(
                f"unknown parameterization '{self.parameterization}'; use 'eps' or 'score'.",
                key="parameterization",
            )
        if self.time_input not in TIME_INPUTS:
            raise ConfigError(
                f"unknown time_input '{self.time_input}'; use one of {', '.join(TIME_INPUTS)}.",
                key="time_input",
            )
        d = dim if dim is not None else info.get("dim", getattr(model, "dim", None))
        if d is None:
            raise ConfigError(
                "the score network's dimension is unknown: give the Fitted artifact "
                "info['dim'] or the model a 'dim' attribute.",
                key="target",
            )
        self.model, self.dim, self.num_steps = model, int(d), None

    def __call__(self, x: torch.Tensor, t: int, alpha_bar: float) -> torch.Tensor:
        """Score estimate ``Tensor[n, d]`` at ``x: Tensor[n, d]``, step ``t`` (1..T), ``alpha_bar``."""
        if self.time_input == "alpha_bar":
            c = float(alpha_bar)
        elif self.time_input == "index":
            c = float(t)
        else:
            c = float(t) / float(self.num_steps or 1)
        cond = torch.full((x.shape[0],), c, dtype=x.dtype, device=x.device)
        with torch.no_grad():
            out = self.model(x, cond)
        if self.parameterization == "eps":
            return out / (-((1.0 - float(alpha_bar)) ** 0.5))
        return out


def as_score_model(target: Any) -> Any:
    """Choose the adapter for a sampler's input.

    Args:
        target: a ``Fitted`` artifact (-> :class:`NetworkScore`), a target with
            ``noised_score`` (-> :class:`AnalyticScore`), or an object already following
            :class:`ScoreModel` (returned as is).

    Returns:
        A score model with ``dim`` and ``__call__(x, t, alpha_bar)``.

    Raises:
        ConfigError: none of the above.
    """
    if isinstance(target, (AnalyticScore, NetworkScore)):
        return target
    if hasattr(target, "model") and hasattr(target, "history"):  # a quadriga.Fitted
        return NetworkScore(target)
    if callable(getattr(target, "noised_score", None)):
        return AnalyticScore(target)
    if isinstance(target, torch.nn.Module):
        return NetworkScore(target)
    if callable(target) and hasattr(target, "dim"):
        return target
    raise ConfigError(
        f"cannot use a '{type(target).__name__}' as a score model: give a target with "
        "noised_score(x, alpha_bar) or a Fitted score network.",
        key="target",
    )
