"""Attribution baselines on an ``attribution-task``: influence functions (exact Hessian) and TracIn.

Both return ``tau: Tensor[n, k]``, the estimated effect of *including* training point i on target
t's margin (the convention of every attribution estimate here; removing a set R changes the margin
by about ``-sum_{i in R} tau[i, t]``), derived for the task's training map
``L(theta; w) = sum_i w_i l_i / sum_i w_i + (lambda/2)||theta||^2`` at ``w = 1``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Estimate
from quadriga.errors import ConfigError
from quadriga.interfaces import Estimator
from quadriga.params import param
from quadriga.seeding import int_seed
from quadriga.threads import single_thread
from quadriga.validators import in_range, non_negative, positive_int

from .task import CHECK_TASK, AttributionTask

__all__ = ["InfluenceFunctions", "TracIn", "influence_scores", "tracin_scores"]


def _mixed_and_output_grads(tmap: Any, theta: Any, X_t: Any, y_t: Any) -> tuple[Any, Any]:
    """``J = d/dw grad_theta L(theta; w)|_{w=1}: [p, n]`` and ``G = d f / d theta: [k, p]``."""
    import torch
    from torch.func import grad, jacrev

    ones = torch.ones(tmap.n, dtype=torch.float64)
    J = jacrev(lambda w: grad(tmap.objective)(theta, w))(ones)
    G = jacrev(lambda th: tmap.margins(th, X_t, y_t))(theta)
    return J, G


def influence_scores(
    tmap: Any, X_t: Any, y_t: Any, dampings: Sequence[float] = (0.0,), theta: Any = None
) -> list[Any]:
    """Influence-function attributions ``tau = -J^T (H + delta I)^{-1} G^T: [n, k]``, one per damping.

    ``H = hess_theta L(theta*; 1)`` (exact, ``p x p``), ``J = d grad_theta L / dw`` at ``w = 1``
    (``p x n``; for this map ``J[:, i] = (grad l_i - mean_j grad l_j) / n``) and ``G = grad_theta f``
    of the target margins (``k x p``), at the trained ``theta* = theta_T(1)``. By the implicit
    function theorem this is ``d f(theta*(w)) / dw_i`` when ``theta*`` is a stationary point.

    Args:
        tmap: a :class:`~quadriga_std.attribution.training.TrainingMap`.
        X_t, y_t: the targets, ``Tensor[k, d]`` and ``Tensor[k]``.
        dampings: ``delta >= 0`` values (one inverse per value, from one eigendecomposition).
        theta: the parameters to linearise at (default ``tmap.train(1)``).

    Returns:
        one ``Tensor[n, k]`` per damping.

    Source: Koh & Liang 2017, "Understanding black-box predictions via influence functions",
    eq. (2)-(3) (weighted form: d theta / d eps = -H^{-1} grad l).
    """
    import torch

    ones = torch.ones(tmap.n, dtype=torch.float64)
    with torch.no_grad():
        theta = tmap.train(ones) if theta is None else theta
    H = torch.func.jacrev(torch.func.jacrev(lambda th: tmap.objective(th, ones)))(
        theta
    )  # no forward mode: it imports a deprecated torch.jit path
    J, G = _mixed_and_output_grads(tmap, theta, X_t, y_t)
    evals, evecs = torch.linalg.eigh(0.5 * (H + H.T))
    left = J.T @ evecs  # [n, p]
    right = evecs.T @ G.T  # [p, k]
    out = []
    for delta in dampings:
        out.append(-(left / (evals + float(delta))) @ right)
    return out


def tracin_scores(tmap: Any, X_t: Any, y_t: Any, every: int = 10) -> Any:
    """TracIn-CP attributions ``tau[i, t] = -sum_c lr * every * <grad l_i, grad f_t>(theta_c) / n``.

    Checkpoints ``theta_c`` are every ``every``-th iterate ``c = 0, every, 2 every, ...`` of the
    training run on all points; each stands for the ``every`` steps after it. It is the first-order
    effect of point i's term in each update on the margin, ignoring how later updates propagate it
    (which MAGIC's metagradient includes).

    Returns:
        ``Tensor[n, k]``.

    Source: Pruthi et al. 2020, "Estimating training data influence by tracing gradient descent",
    eq. (3) (TracInCP), with the target's margin in place of its loss.
    """
    import torch
    from torch.func import jacrev

    ones = torch.ones(tmap.n, dtype=torch.float64)
    with torch.no_grad():
        _, states = tmap.train(ones, path=True)
    tau = torch.zeros(tmap.n, int(X_t.shape[0]), dtype=torch.float64)
    for theta in states[:-1:every]:
        gl = jacrev(tmap.losses)(theta)  # [n, p]
        gf = jacrev(lambda th: tmap.margins(th, X_t, y_t))(theta)  # [k, p]
        tau -= tmap.lr * every / tmap.n * (gl @ gf.T)
    return tau


def _check_task(data: Any, name: str) -> AttributionTask:
    if not isinstance(data, AttributionTask):
        raise ConfigError(f'{name} reads an attribution-task: inputs = {{ data = "<task>" }}.', key="data")
    return data


@attrs.define(kw_only=True)
class InfluenceFunctions(Estimator):
    """Influence functions with the exact Hessian (toy sizes: ``p`` up to a few thousand).

    With several ``dampings`` the one with the best mean LDS on ``validation_subsets`` retrained
    ``alpha``-subsets (masks seeded from this stage's generator) is returned, the tuning budget of
    the baseline (``info["settings_tried"]``). Returns ``Estimate(value = tau: Tensor[n, k])``, the
    effect of including each training point on each target's margin; ``info``: ``damping``,
    ``seconds`` (including the validation models), ``training_runs``.

    Raises:
        ConfigError: the data is not an ``attribution-task``.

    Source: Koh & Liang 2017 (arXiv 1703.04730), eq. (2)-(3); see :func:`influence_scores`.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"data": (AttributionTask,)}
    check_inputs: ClassVar[dict[str, Any]] = {"task": {"bed": CHECK_TASK}, "inputs": {"data": "bed"}}

    dampings: list[float] = param(
        factory=lambda: [0.0],
        doc="damping values delta (>= 0) tried",
        validator=attrs.validators.deep_iterable(non_negative),
    )
    alpha: float = param(
        0.5,
        doc="subset fraction of the validation models (with several dampings)",
        validator=in_range(0.0, 1.0, low_open=True),
    )
    validation_subsets: int = param(
        20, doc="retrained validation models (with several dampings)", validator=positive_int
    )

    def estimate(self, data: Any, *, generator: Any) -> Estimate:
        """``tau[n, k]`` by :func:`influence_scores` (damping chosen as the class docstring says)."""
        from .datamodeling import lds_scores, predicted_margins

        task = _check_task(data, "influence-function")
        start = time.perf_counter()
        with single_thread():
            taus = influence_scores(task.training_map(), *task.targets(), dampings=self.dampings)
        best, runs = 0, 1
        scores = [float("nan")]
        if len(taus) > 1:
            with single_thread():
                zoo = task.zoo(self.alpha, self.validation_subsets, int_seed(generator))
            scores = [
                float(np.nanmean(lds_scores(predicted_margins(t.numpy(), zoo.masks), zoo.margins)))
                for t in taus
            ]
            best = int(np.nanargmax(scores))
            runs += zoo.m
        return Estimate(
            value=taus[best],
            info={
                "damping": float(self.dampings[best]),
                "validation_lds": scores[best],
                "settings_tried": len(taus),
                "seconds": time.perf_counter() - start,
                "training_runs": runs,
            },
        )


@attrs.define(kw_only=True)
class TracIn(Estimator):
    """TracIn-CP along the task's training run (:func:`tracin_scores`).

    Returns ``Estimate(value = tau: Tensor[n, k])``; ``info``: ``checkpoints``, ``seconds``.

    Raises:
        ConfigError: the data is not an ``attribution-task``.

    Source: Pruthi et al. 2020 (arXiv 2002.08484), eq. (3).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"data": (AttributionTask,)}
    check_inputs: ClassVar[dict[str, Any]] = {"task": {"bed": CHECK_TASK}, "inputs": {"data": "bed"}}

    every: int = param(10, doc="steps between checkpoints", validator=positive_int)

    def estimate(self, data: Any, *, generator: Any) -> Estimate:
        """``tau[n, k]`` by :func:`tracin_scores`."""
        task = _check_task(data, "tracin")
        start = time.perf_counter()
        with single_thread():
            tau = tracin_scores(task.training_map(), *task.targets(), every=self.every)
        return Estimate(
            value=tau,
            info={
                "checkpoints": len(range(0, task.steps, self.every)),
                "seconds": time.perf_counter() - start,
                "training_runs": 1,
            },
        )
