"""Evaluator ``regression-target-noise``: E|T - grad log p_t(X_t)|^2 of the DSM, TSM and mixture targets
per noise level.

For each VP noise level sigma, ``num_samples`` pairs (x_0, z) are drawn (x_0 from the target's exact
sampler), and the squared distance of each regression target to the exact noised score at
x_t = alpha x_0 + sigma z is averaged (:func:`~quadriga_target_score_matching.target_noise.target_noise_mc`).
Reported per sigma: ``dsm/target_noise@sigma=S``, ``tsm/...``, ``mixture/...`` (1 / x^2), their
standard errors (``.../target_noise_se@sigma=S``), the ratio ``tsm_over_dsm@sigma=S``, and
``crossover_sigma`` (where TSM's noise overtakes DSM's, log-linear interpolation on the grid).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator, Target
from quadriga.validators import in_range, int_at_least, one_of
from quadriga_target_score_matching.target_noise import crossover_sigma, target_noise_mc
from quadriga_target_score_matching.tsm import MIXTURE_WEIGHTS

__all__ = ["RegressionTargetNoise"]

ARMS = ("dsm", "tsm", "mixture")


def _sigmas(instance: Any, attribute: Any, value: Any) -> None:
    vals = [float(v) for v in value]
    if not vals or any(not 0.0 < v < 1.0 for v in vals) or vals != sorted(vals):
        raise ConfigError(
            f"sigmas must be an increasing list of numbers in (0, 1), got {value!r}.", key="sigmas"
        )


@attrs.define(kw_only=True)
class RegressionTargetNoise(Evaluator):
    """Regression-target noise of DSM, TSM and their mixture on a target with exact scores (module docstring).

    Inputs: ``subject`` a target with exact ``sample``, ``score`` and ``noised_score`` (std's
    ``gaussian-mixture``).

    Shapes: ``num_samples`` points ``Tensor[num_samples, d]`` per noise level.
    Units: noise in 1 / x^2 (squared norm summed over d); sigma the VP noise standard deviation.

    Raises:
        ConfigError: a subject without exact draws, score or noised score; sigmas not increasing in (0, 1).

    Source: De Bortoli, Hutchinson, Wirnsberger & Doucet 2024 (arXiv 2402.08667), the variance comparison
    of the DSM and TSM regression targets (sec. 1.2, sec. 5).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Target,)}
    required_inputs: ClassVar[tuple[str, ...]] = ("subject",)
    check_inputs: ClassVar[dict[str, Any]] = {
        "task": {"gmm": {"use": "gaussian-mixture", "means": [[-2.0], [2.0]], "scale": 0.5}},
        "inputs": {"subject": "gmm"},
    }
    check_params: ClassVar[dict[str, Any]] = {"num_samples": 500}

    sigmas: list[float] = param(
        [0.01, 0.03, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.9],
        toml_type="list[float]",
        doc="increasing VP noise levels in (0, 1)",
        validator=_sigmas,
    )
    num_samples: int = param(
        200000, doc="Monte Carlo pairs (x_0, z) per noise level (count)", validator=int_at_least(2)
    )
    mixture_weight: str = param(
        "alpha2", doc="TSM weight of the mixture target", validator=one_of(MIXTURE_WEIGHTS)
    )
    sigma_switch: float = param(
        0.4, doc="noise level of the 'step' weight", validator=in_range(0, 1, low_open=True, high_open=True)
    )

    def evaluate(self, subject: Any, reference: Any = None, *, generator: torch.Generator) -> Metrics:
        """Report the noise of each target, its standard error, the TSM / DSM ratio and the crossover."""
        for need in ("sample", "score", "noised_score"):
            if not callable(getattr(subject, need, None)):
                raise ConfigError(
                    f"regression-target-noise needs a target with exact {need}() ('gaussian-mixture').",
                    key="subject",
                )
        values: dict[str, float] = {}
        curves: dict[str, list[float]] = {a: [] for a in ARMS}
        sigmas = [float(s) for s in self.sigmas]
        for sigma in sigmas:
            try:
                res = target_noise_mc(
                    subject,
                    sigma,
                    int(self.num_samples),
                    generator=generator,
                    mixture_weight=self.mixture_weight,
                    sigma_switch=float(self.sigma_switch),
                )
            except NotImplementedError as exc:
                raise ConfigError(f"the subject has no exact sampler ({exc}).", key="subject") from exc
            for arm, (mean, se) in res.items():
                values[f"{arm}/target_noise@sigma={sigma:g}"] = mean
                values[f"{arm}/target_noise_se@sigma={sigma:g}"] = se
                curves[arm].append(mean)
            values[f"tsm_over_dsm@sigma={sigma:g}"] = res["tsm"][0] / res["dsm"][0]
        values["crossover_sigma"] = crossover_sigma(sigmas, curves["dsm"], curves["tsm"])
        return Metrics(values=values)
