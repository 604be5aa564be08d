"""Evaluator ``score-error``: mean squared error of a score model to the exact noised score, per noise level.

For each VP noise level sigma in ``sigmas`` (alpha = sqrt(1 - sigma^2)), n points
x = alpha x_0 + sigma z are drawn with x_0 ~ the reference target (exact sampler) and z ~ N(0, I)
(streams ``"x0"`` and ``"z"`` of the stage generator, so every subject sees the same points), and

    score_mse@sigma = mean_i | s_subject(x_i) - s_exact(x_i) |^2     (units 1 / x^2, summed over d)

with s_exact the reference's ``noised_score``. This is the metric of the score-learning rows
(target score matching, QCSBM, ...): the regression error of a learned score, noise level by noise
level, where a low-noise advantage and a crossover are visible.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.artifacts import Fitted, Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator, Target, named
from quadriga.seeding import child_generator
from quadriga.validators import positive_int
from quadriga_ddpm.probability_flow import score_at
from quadriga_ddpm.score_models import as_score_model

__all__ = ["ScoreError"]


def _sigmas(instance: Any, attribute: Any, value: Any) -> None:
    vals = list(value)
    if not vals or any(not (0.0 < float(v) < 1.0) for v in vals):
        raise ConfigError(
            f"sigmas must be a non-empty list of numbers in (0, 1), got {value!r}.", key="sigmas"
        )


@attrs.define(kw_only=True)
class ScoreError(Evaluator):
    """Score MSE of each subject against the reference target's exact noised score, per noise level.

    Inputs: ``subject`` one or several score models (a ``Fitted`` score network, or a target with
    ``noised_score``); ``reference`` a target with ``noised_score`` and an exact ``sample``.

    Shapes: the points are ``Tensor[num_samples, d]``; each score ``Tensor[num_samples, d]``.

    Units: ``score_mse@sigma=S`` in 1 / x^2 (squared Euclidean norm, averaged over points);
    sigma is the VP noise standard deviation (alpha^2 + sigma^2 = 1).

    Raises:
        ConfigError: no reference, a reference without ``noised_score`` or ``sample``, a subject
            that is no score model, sigmas outside (0, 1).

    Source: the score-estimation error of Vincent 2011 (denoising score matching) measured against
    the analytic score; the noise levels of De Bortoli et al. 2024 (target score matching, sec. 5).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Fitted, Target), "reference": (Target,)}
    required_inputs: ClassVar[tuple[str, ...]] = ("subject", "reference")

    sigmas: list[float] = param(
        [0.01, 0.03, 0.1, 0.3, 0.6, 0.9],
        toml_type="list[float]",
        doc="VP noise levels sigma in (0, 1) (units of x for unit-scale data)",
        validator=_sigmas,
    )
    num_samples: int = param(2000, doc="points per noise level (count)", validator=positive_int)

    def evaluate(self, subject: Any, reference: Any = None, *, generator: torch.Generator) -> Metrics:
        """Report ``<subject>/score_mse@sigma=S`` for every subject and noise level."""
        if reference is None or not callable(getattr(reference, "noised_score", None)):
            raise ConfigError(
                "score-error needs reference = a target with an exact noised_score ('gaussian-mixture').",
                key="reference",
            )
        exact = as_score_model(reference)
        d, n = int(reference.dim), int(self.num_samples)
        try:
            x0 = torch.as_tensor(
                reference.sample(n, generator=child_generator(generator, "x0")), dtype=torch.float64
            )
        except NotImplementedError as exc:
            raise ConfigError(f"the reference has no exact sampler ({exc}).", key="reference") from exc
        z = torch.randn(n, d, generator=child_generator(generator, "z"), dtype=torch.float64)
        models = {name: as_score_model(s) for name, s in named(subject).items()}
        values: dict[str, float] = {}
        for sigma in (float(s) for s in self.sigmas):
            alpha = math.sqrt(1.0 - sigma * sigma)
            x = alpha * x0 + sigma * z
            truth = score_at(exact, x, alpha, sigma)
            for name, model in models.items():
                est = score_at(model, x.to(torch.float64), alpha, sigma).to(torch.float64)
                values[f"{name}/score_mse@sigma={sigma:g}"] = float((est - truth).square().sum(-1).mean())
        return Metrics(values=values)
