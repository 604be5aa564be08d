"""Learner ``target-score-matching``: score networks regressed on the clean target score (TSM)
or its mixture with DSM.

Noising x_t = alpha_t x_0 + sigma_t z (VP, alpha_t^2 + sigma_t^2 = 1), x_0 ~ pi with a known score
grad log pi. Two identities give the noised score as a conditional mean (De Bortoli, Hutchinson,
Wirnsberger & Doucet 2024, arXiv 2402.08667):

* Denoising Score Identity (their eq. 2):  grad log p_t(x_t) = E[ -z / sigma_t | X_t = x_t ];
* Target Score Identity (sec. 1.2, the TSI for Y = alpha X + sigma W):
  grad log p_t(x_t) = E[ grad log pi(X_0) / alpha_t | X_t = x_t ].

Regression on either conditional-mean target gives a loss with the same minimiser (Target Score
Matching when the TSI target is used). The TSM target has small variance at low noise (it tends to
grad log p_t(x_t) as sigma_t -> 0) and large variance at high noise (1 / alpha_t blows up while
grad log pi(X_0) no longer depends on x_t); DSM is the reverse. Any convex combination

    target_mix = kappa_t * grad log pi(x_0) / alpha_t + (1 - kappa_t) * (-z / sigma_t),   kappa_t in [0, 1]

is again unbiased; the paper combines the two identities across noise levels. ``mixture_weight``:

* ``"alpha2"`` (default): kappa_t = alpha_t^2, which makes target_mix = alpha_t grad log pi(x_0) - sigma_t z
  (exact, zero-variance, when pi = N(0, I): then target_mix = -x_t = grad log p_t(x_t));
* ``"step"``: kappa_t = 1 for sigma_t < ``sigma_switch``, else 0 (TSM below, DSM above).

Everything else (network, data, noise levels, optimiser, random stream) is quadriga-ddpm's
``score-network`` learner, so a TSM learner and a DSM learner of the same seed see the same x_0, z and
sigma: the comparison of the two targets is paired and of equal budget.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import torch
from quadriga_ddpm.score_learner import ScoreNetwork

from quadriga import param
from quadriga.validators import in_range, one_of

__all__ = [
    "MIXTURE_WEIGHTS",
    "TARGETS",
    "TargetScoreMatching",
    "dsm_target",
    "mixture_target",
    "mixture_weight",
    "tsm_target",
]

TARGETS = ("tsm", "mixture")
MIXTURE_WEIGHTS = ("alpha2", "step")


def dsm_target(z: torch.Tensor, sigma: Any) -> torch.Tensor:
    """DSM target -z / sigma, ``Tensor[n, d]`` (units 1 / x); De Bortoli et al. 2024, eq. 2 (Vincent 2011)."""
    return -z / sigma


def tsm_target(score0: torch.Tensor, alpha: Any) -> torch.Tensor:
    """TSM target grad log pi(x_0) / alpha, ``Tensor[n, d]`` (1 / x); Target Score Identity, sec. 1.2."""
    return score0 / alpha


def mixture_weight(alpha: Any, sigma: Any, rule: str = "alpha2", sigma_switch: float = 0.4) -> Any:
    """kappa_t in [0, 1], the weight of the TSM target (see the module docstring).

    Args:
        alpha, sigma: VP coefficients (floats or tensors of one shape); rule: ``"alpha2"`` or ``"step"``;
        sigma_switch: the step's noise level (``"step"`` only).

    Raises:
        ValueError: an unknown rule.
    """
    if rule == "alpha2":
        return alpha * alpha
    if rule == "step":
        return (sigma < sigma_switch) * 1.0
    raise ValueError(f"unknown mixture weight '{rule}'; use one of {', '.join(MIXTURE_WEIGHTS)}")


def mixture_target(
    score0: torch.Tensor,
    z: torch.Tensor,
    alpha: Any,
    sigma: Any,
    rule: str = "alpha2",
    sigma_switch: float = 0.4,
) -> torch.Tensor:
    """kappa_t * TSM + (1 - kappa_t) * DSM target, ``Tensor[n, d]`` (units 1 / x).

    Both targets have conditional mean grad log p_t(x_t) given x_t, so any kappa_t in [0, 1] keeps
    the mixture unbiased (De Bortoli et al. 2024 combine the two identities across noise levels).
    """
    kappa = mixture_weight(alpha, sigma, rule, sigma_switch)
    return kappa * tsm_target(score0, alpha) + (1 - kappa) * dsm_target(z, sigma)


@attrs.define(kw_only=True)
class TargetScoreMatching(ScoreNetwork):
    """quadriga-ddpm's ``score-network`` regressed on the TSM target (``target="tsm"``) or its DSM mixture.

    Parameters beyond ``score-network``'s: ``target`` (``"tsm"`` or ``"mixture"``), ``mixture_weight``
    (``"alpha2"`` or ``"step"``) and ``sigma_switch``. The task must give exact draws and its score
    ``score(x: Tensor[n, d]) -> Tensor[n, d]`` (std's ``gaussian-mixture``, ``funnel``, ...).

    Shapes and units: as ``score-network`` (``Fitted.model(x, alpha_bar)`` predicts the noise;
    ``info["regression_target"]`` names the target).

    Raises:
        ConfigError: invalid parameters, or a task without an exact sampler or without a score.

    Source: De Bortoli, Hutchinson, Wirnsberger & Doucet 2024, "Target score matching" (arXiv 2402.08667),
    sec. 1.2 (Target Score Identity and the TSM loss) and the combination of the two identities.
    """

    needs_clean_score: ClassVar[bool] = True

    target: str = param(
        "mixture", doc="regression target: 'tsm' or 'mixture' (with DSM)", validator=one_of(TARGETS)
    )
    mixture_weight: str = param(
        "alpha2",
        doc="TSM weight kappa_t of the mixture: 'alpha2' (alpha_t^2) or 'step' (1 below sigma_switch)",
        validator=one_of(MIXTURE_WEIGHTS),
    )
    sigma_switch: float = param(
        0.4,
        doc="noise level of the 'step' weight (VP sigma)",
        validator=in_range(0, 1, low_open=True, high_open=True),
    )

    @property
    def target_name(self) -> str:  # type: ignore[override]
        """``"tsm"`` or ``"mixture-<rule>"``, written to ``Fitted.info["regression_target"]``."""
        return "tsm" if self.target == "tsm" else f"mixture-{self.mixture_weight}"

    def regression_target(
        self,
        x0: torch.Tensor,
        z: torch.Tensor,
        score0: torch.Tensor | None,
        alpha: torch.Tensor,
        sigma: torch.Tensor,
    ) -> torch.Tensor:
        """TSM: grad log pi(x_0) / alpha; mixture: kappa TSM + (1 - kappa) DSM; ``Tensor[b, d]``."""
        assert score0 is not None  # needs_clean_score
        if self.target == "tsm":
            return tsm_target(score0, alpha)
        return mixture_target(score0, z, alpha, sigma, self.mixture_weight, float(self.sigma_switch))
