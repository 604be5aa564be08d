"""``return-law-w1``: an estimated return law against the Monte-Carlo law of the target policy.

For each subject (an ``Estimate`` whose ``value`` holds the quantiles of the estimated law at the
start state, as FLE and its baselines give) and the reference data task (an
``offline-rl-dataset``, whose exact model and target policy give the Monte-Carlo reference):

- ``<subject>/w1``: the 1-Wasserstein distance between the estimate's quantiles (equal weights)
  and ``num_reference_episodes`` Monte-Carlo returns (``scipy.stats.wasserstein_distance``);
- ``<subject>/mean_error``: ``|mean estimate - mean reference|``;
- ``<subject>/uncovered_mass`` and ``<subject>/min_target_count``: the coverage diagnostics the
  estimator reported for its data (the target occupancy on pairs without data; the smallest count
  over the pairs the target visits);
- ``reference/mean``, ``reference/std`` and ``reference/w1_noise``: the reference's scale and the
  W1 distance between its two halves (about ``sqrt 2`` times the reference's own W1 error).

Source: Wu, Uehara & Sun 2023 (ICML) measure FLE's error in Wasserstein distance (discounted case)
against the true return law [recalled]; Villani 2009 for W1 on the line (``int |F - G|``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import Evaluator, Metrics, named, param
from quadriga.artifacts import Estimate
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset
from quadriga.validators import int_at_least

__all__ = ["ReturnLawW1"]


@attrs.define(kw_only=True)
class ReturnLawW1(Evaluator):
    """W1 distance of estimated return laws to the Monte-Carlo law of the target policy (module docstring).

    Shapes:
        Each subject's ``value`` is ``ndarray[q]`` quantiles; the reference draws are ``ndarray[m]``.

    Units:
        ``w1``, ``mean_error``, ``reference/*``: discounted return units; ``uncovered_mass``: a
        probability; ``min_target_count``: transitions.

    Raises:
        ConfigError: a reference without ``reference_returns`` (not an offline-rl-dataset); a subject
            whose value is not a 1-D array of quantiles.

    Source: see the module docstring.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Estimate,), "reference": (Dataset,)}

    num_reference_episodes: int = param(
        100_000, doc="Monte-Carlo rollouts of the target policy", validator=int_at_least(2)
    )

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """See the class docstring."""
        from scipy.stats import wasserstein_distance

        from quadriga.seeding import child_numpy_rng

        if reference is None or not hasattr(reference, "reference_returns"):
            raise ConfigError(
                "return-law-w1 needs the offline-rl-dataset task as reference (it gives the MC law).",
                key="reference",
            )
        mc = reference.reference_returns(self.num_reference_episodes, child_numpy_rng(generator, "reference"))
        half = mc.size // 2
        values: dict[str, float] = {
            "reference/mean": float(mc.mean()),
            "reference/std": float(mc.std()),
            "reference/w1_noise": float(wasserstein_distance(mc[:half], mc[half:])),
        }
        for name, est in named(subject).items():
            q = np.asarray(est.value, float)
            if q.ndim != 1 or q.size < 1:
                raise ConfigError(
                    f"subject '{name}' must hold 1-D quantiles of a return law, got shape {q.shape}.",
                    key="subject",
                )
            values[f"{name}/w1"] = float(wasserstein_distance(q, mc))
            values[f"{name}/mean_error"] = float(abs(q.mean() - mc.mean()))
            for key in ("uncovered_mass", "min_target_count"):
                if key in est.info:
                    values[f"{name}/{key}"] = float(est.info[key])
        return Metrics(values=values)
