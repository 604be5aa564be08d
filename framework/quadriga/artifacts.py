"""Artifacts: what flows between pipeline stages and what is saved with a run.

Each interface returns one artifact type: a Sampler returns :class:`Samples`, a
Learner :class:`Fitted`, an Estimator :class:`Estimate`, an Evaluator
:class:`Metrics`. They are small attrs classes; tensors are ``torch.Tensor``
(this module does not import torch itself, so that ``import quadriga`` stays light).
"""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["ARTIFACT_TYPES", "Artifact", "Estimate", "Fitted", "Metrics", "Samples"]


class Artifact:
    """Base class of the four artifact types (used for input type checks)."""


@attrs.define(kw_only=True, eq=False)
class Samples(Artifact):
    """Draws from a target, possibly weighted.

    Attributes:
        x: ``Tensor[n, d]`` (float) or ``Tensor[n, d]`` in {-1, +1} for spin systems;
            the samples, in the target's own units. For several chains the rows
            are chain-major: ``n = num_chains * num_draws_per_chain``.
        log_weights: ``Tensor[n]`` unnormalised log importance weights, or ``None``
            for equally weighted samples.
        chains: ``Tensor[num_chains, num_draws, d]`` view of the chains when the
            sampler ran several Markov chains (for ESS and per-chain estimates), else ``None``.
        info: cost counters and diagnostics, plain numbers: e.g.
            ``score_evals`` (count), ``log_prob_evals`` (count), ``acceptance_rate``
            (fraction in [0, 1]), ``rejected_nonfinite`` (count), ``seconds``.
    """

    x: Any
    log_weights: Any = None
    chains: Any = None
    info: dict[str, Any] = attrs.field(factory=dict)

    @property
    def num_samples(self) -> int:
        """Number of rows ``n`` of ``x``."""
        return int(self.x.shape[0])

    @property
    def dim(self) -> int:
        """Dimension ``d`` of each sample."""
        return int(self.x.shape[1])


@attrs.define(kw_only=True, eq=False)
class Fitted(Artifact):
    """A trained model or policy.

    Attributes:
        model: the trained object: a ``torch.nn.Module`` (policy, Q-network,
            score network) or a fitted scikit-learn estimator.
        history: per-step training records, e.g. ``{"step": [...], "episode_return": [...]}``;
            lists of equal length per key, units given by the learner.
        info: summary numbers (``env_steps``, ``updates``, ``seconds``, ...).
        predict: optional callable for models that are not modules, e.g.
            ``predict(x: Tensor[n, d]) -> Tensor[n]``.
    """

    model: Any
    history: dict[str, list] = attrs.field(factory=dict)
    info: dict[str, Any] = attrs.field(factory=dict)
    predict: Any = None


@attrs.define(kw_only=True, eq=False)
class Estimate(Artifact):
    """A value with its uncertainty.

    Attributes:
        value: the estimate: a float, or a ``Tensor`` of any shape documented by the estimator.
        stderr: its standard error (same shape as ``value``) or ``None``.
        interval: a ``(low, high)`` confidence interval or ``None``.
        info: diagnostics and cost counters (plain numbers).
        predict: optional callable for estimators whose result is a function,
            e.g. conformal sets ``predict(x: ndarray[n, p]) -> (low[n], high[n])``.
    """

    value: Any
    stderr: Any = None
    interval: tuple[Any, Any] | None = None
    info: dict[str, Any] = attrs.field(factory=dict)
    predict: Any = None


@attrs.define(kw_only=True, eq=False)
class Metrics(Artifact):
    """Named scalar metrics with optional tables and figures.

    Attributes:
        values: ``{name: float}``; when an evaluator compares several subjects the
            names are ``"<subject>/<metric>"``.
        tables: ``{name: list of row dicts}`` (one row per subject, say).
        figures: ``{name: matplotlib.figure.Figure}``; the run saves each as ``<stage>-<name>.png``.
        info: anything else JSON-serialisable.
    """

    values: dict[str, float] = attrs.field(factory=dict)
    tables: dict[str, list[dict[str, Any]]] = attrs.field(factory=dict)
    figures: dict[str, Any] = attrs.field(factory=dict)
    info: dict[str, Any] = attrs.field(factory=dict)


ARTIFACT_TYPES: dict[str, type] = {
    "Samples": Samples,
    "Fitted": Fitted,
    "Estimate": Estimate,
    "Metrics": Metrics,
}
