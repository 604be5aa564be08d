"""The linear datamodeling score (LDS) and the ``lds`` evaluator.

An attribution ``tau: [n, k]`` (``tau[i, t]``: the effect of including training point i on target
t's margin) predicts the margin of target t after training on a subset S as
``sum_{i in S} tau[i, t]`` (plus a constant per target, which no rank statistic sees). The LDS of
target t is the Spearman rank correlation, over ``s`` fresh random subsets of the same size, between
these predictions and the margins of models actually trained on the subsets (Park et al. 2023,
TRAK, arXiv 2303.14186, Def. 2.3; Ilyas et al. 2022, arXiv 2202.00622, sec. 3). ``alpha`` near 1
scores random removals (``alpha = 0.99``: 1 % removed, MAGIC's setting, arXiv 2504.16430 sec. 4).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Estimate, Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator, named
from quadriga.params import param
from quadriga.seeding import int_seed
from quadriga.threads import single_thread
from quadriga.validators import in_range, int_at_least

from .task import CHECK_SCORED_INPUTS, AttributionTask

__all__ = ["LDS", "attribution_matrix", "lds_interval", "lds_scores", "predicted_margins"]


def attribution_matrix(estimate: Any) -> np.ndarray:
    """``tau: float64[n, k]`` of an attribution ``Estimate`` (its ``value``), as numpy.

    Raises:
        ConfigError: the value is not a 2-d array.
    """
    value = getattr(estimate, "value", estimate)
    tau = value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value, dtype=np.float64)
    if tau.ndim != 2:
        raise ConfigError(f"an attribution estimate holds tau[n, k]; got shape {tau.shape}.", key="subject")
    return tau.astype(np.float64)


def predicted_margins(tau: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``masks[s, n] @ tau[n, k] -> [s, k]``: the linear prediction of each subset's target margins."""
    return np.asarray(masks, dtype=np.float64) @ tau


def lds_scores(predicted: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Per-target Spearman correlation over subsets: ``predicted, actual: [s, k] -> [k]``.

    A constant prediction ranks nothing: its LDS is 0 (an all-zero sparse datamodel, say). A
    target whose actual margins are constant over the subsets gets NaN (undefined).

    Source: Park et al. 2023 (arXiv 2303.14186), Def. 2.3.
    """
    from scipy.stats import rankdata

    pr = rankdata(np.asarray(predicted, dtype=np.float64), axis=0)
    ac = rankdata(np.asarray(actual, dtype=np.float64), axis=0)
    pr -= pr.mean(0)
    ac -= ac.mean(0)
    sp, sa = (pr * pr).sum(0), (ac * ac).sum(0)
    den = np.sqrt(sp * sa)
    out = np.where(den > 0, (pr * ac).sum(0) / np.where(den > 0, den, 1.0), 0.0)
    return np.where(sa > 0, out, np.nan)


def lds_interval(values: np.ndarray, level: float = 0.95) -> Any:
    """Mean LDS over targets with its interval (:func:`quadriga.stats.interval`, Student t), NaNs dropped."""
    from quadriga.stats import interval

    v = np.asarray(values, dtype=np.float64)
    return interval(v[np.isfinite(v)], "mean", level=level)


@attrs.define(kw_only=True)
class LDS(Evaluator):
    """Linear datamodeling score of attribution estimates against retrained models.

    The reference ``attribution-task`` trains ``num_subsets`` models on fresh random
    ``alpha``-subsets (masks seeded from this stage's generator; cached as a zoo), and each
    subject's ``tau[n, k]`` predicts their target margins. Values per subject:
    ``"<subject>/lds"`` (mean over targets), ``"/lds_low"``, ``"/lds_high"`` (Student-t interval
    over targets at 95 %), ``"/seconds"`` (the estimate's cost, from its ``info``); and
    ``"ground_truth_seconds"``. ``tables["per_target"]``: one row per (subject, target) with its
    LDS; the claims read intervals over targets from it (paired across subjects).

    Shapes: each subject's ``value`` is ``tau[n, k]`` (n training points, k targets); the
    held-out masks are ``bool[num_subsets, n]`` and the retrained margins ``[num_subsets, k]``.
    Units: LDS is a rank correlation in [-1, 1]; seconds are wall-clock.

    Raises:
        ConfigError: no ``attribution-task`` reference, a subject that is not ``tau[n, k]``.

    Source: Park et al. 2023 (arXiv 2303.14186), Def. 2.3.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {
        "subject": (Estimate,),
        "reference": (AttributionTask,),
    }
    check_params: ClassVar[dict[str, Any]] = {"num_subsets": 5}
    check_inputs: ClassVar[dict[str, Any]] = CHECK_SCORED_INPUTS

    alpha: float = param(
        0.5,
        doc="fraction of the training set in each held-out subset",
        validator=in_range(0.0, 1.0, low_open=True),
    )
    num_subsets: int = param(100, doc="held-out subsets (retrained models)", validator=int_at_least(3))

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Score every subject's LDS on the same held-out subsets (see the class docstring)."""
        if not isinstance(reference, AttributionTask):
            raise ConfigError(
                "lds needs an attribution-task reference: "
                'inputs = { subject = [...], reference = "<task>" }.',
                key="reference",
            )
        with single_thread():
            zoo = reference.zoo(self.alpha, self.num_subsets, int_seed(generator))
        values: dict[str, float] = {"ground_truth_seconds": zoo.seconds}
        rows = []
        for name, est in named(subject).items():
            tau = attribution_matrix(est)
            if tau.shape != (reference.num_train, reference.num_targets):
                raise ConfigError(
                    f"subject '{name}' has tau of shape {tau.shape}; the task has "
                    f"({reference.num_train}, {reference.num_targets}).",
                    key="subject",
                )
            per = lds_scores(predicted_margins(tau, zoo.masks), zoo.margins)
            ci = lds_interval(per)
            values.update(
                {f"{name}/lds": ci.estimate, f"{name}/lds_low": ci.low, f"{name}/lds_high": ci.high}
            )
            values[f"{name}/seconds"] = float(getattr(est, "info", {}).get("seconds", float("nan")))
            rows += [{"subject": name, "target": t, "lds": float(v)} for t, v in enumerate(per)]
        return Metrics(values=values, tables={"per_target": rows}, info={"alpha": self.alpha})
