"""Retrain-after-removal ground truth: remove the top-k attributed points, or k random ones.

For each target t, the k training points with the largest ``tau[i, t]`` (those an attribution says
raise t's margin most) are removed and the model retrained (``w = 1 - 1_R``); the drop of t's
margin is compared with removing k random points. A faithful attribution makes the first drop
much larger (Ilyas et al. 2022, arXiv 2202.00622, sec. 4.1, brittleness; Hammoudeh & Lowd 2024,
"Training data influence analysis and estimation: a survey", sec. 4.2).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Estimate, Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator, named
from quadriga.params import param
from quadriga.seeding import numpy_rng
from quadriga.threads import single_thread
from quadriga.validators import positive_int

from .datamodeling import attribution_matrix
from .task import CHECK_SCORED_INPUTS, AttributionTask

__all__ = ["RemovalEffect", "removal_drops", "top_k_weights"]


def top_k_weights(tau: np.ndarray, k: int) -> np.ndarray:
    """``w[k_targets, n]``: ones, with zeros at each target's ``k`` largest ``tau[:, t]``."""
    order = np.argsort(-tau, axis=0, kind="stable")[:k]  # [k, targets]
    w = np.ones((tau.shape[1], tau.shape[0]))
    for t in range(tau.shape[1]):
        w[t, order[:, t]] = 0.0
    return w


def removal_drops(task: AttributionTask, weights: np.ndarray) -> np.ndarray:
    """Margin drop ``f_t(all) - f_t(w_t)`` of target t after retraining with row t of ``weights[k, n]``."""
    retrained = task.retrain(weights)  # [k, k]: model of row t, all targets
    return task.full_margins() - np.diag(retrained)


@attrs.define(kw_only=True)
class RemovalEffect(Evaluator):
    """Margin drop after removing each target's top-``k`` attributed points, against ``k`` random ones.

    Values: ``"<subject>/drop"`` (mean over targets of ``f(all) - f(removed)``, margin units),
    ``"<subject>/flip_fraction"`` (fraction of the targets classified correctly by the full model
    whose margin becomes negative), ``"random/drop"``, ``"random/flip_fraction"`` (the same ``k``
    random points for every subject of a target, drawn from this stage's generator).
    ``tables["per_target"]``: rows ``{subject, target, drop}`` (paired by target).

    Shapes: each subject's ``value`` is ``tau[n, k_targets]``; one retrained model per (arm, target).
    Units: drops are in margin units (logit differences); flip fractions are fractions.

    Raises:
        ConfigError: no ``attribution-task`` reference; ``k`` at least the training-set size.

    Source: Ilyas et al. 2022 (arXiv 2202.00622), sec. 4.1.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {
        "subject": (Estimate,),
        "reference": (AttributionTask,),
    }
    check_params: ClassVar[dict[str, Any]] = {"k": 3}
    check_inputs: ClassVar[dict[str, Any]] = CHECK_SCORED_INPUTS

    k: int = param(10, doc="training points removed per target", validator=positive_int)

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Retrain without each subject's top-k points and without k random points (class docstring)."""
        if not isinstance(reference, AttributionTask):
            raise ConfigError("removal-effect needs an attribution-task reference.", key="reference")
        n, k_t = reference.num_train, reference.num_targets
        if self.k >= n:
            raise ConfigError(f"k = {self.k} must be below the {n} training points.", key="k")
        full = reference.full_margins()
        correct = full > 0
        rng = numpy_rng(generator)
        random_w = np.ones((k_t, n))
        for t in range(k_t):
            random_w[t, rng.choice(n, size=self.k, replace=False)] = 0.0
        arms = {"random": random_w}
        for name, est in named(subject).items():
            arms[name] = top_k_weights(attribution_matrix(est), self.k)
        values: dict[str, float] = {}
        rows = []
        for name, w in arms.items():
            with single_thread():
                drop = removal_drops(reference, w)
            flipped = (full - drop) < 0
            values[f"{name}/drop"] = float(drop.mean())
            values[f"{name}/flip_fraction"] = (
                float(flipped[correct].mean()) if correct.any() else float("nan")
            )
            rows += [{"subject": name, "target": t, "drop": float(d)} for t, d in enumerate(drop)]
        return Metrics(values=values, tables={"per_target": rows}, info={"k": self.k})
