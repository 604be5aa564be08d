"""MAGIC: the exact influence of every training point through the training run, by metagradients.

Training is a deterministic map of per-example loss weights ``w`` (the task's
:class:`~quadriga_std.attribution.training.TrainingMap`: fixed initialisation, full-batch GD in
float64). MAGIC attributes a target's margin ``f`` to the training points by the metagradient

    tau_i = d f(theta_T(w)) / d w_i  at w = 1                      (Ilyas & Engstrom 2025, eq. (3))

computed by reverse-mode differentiation through all ``T`` optimizer steps (every iterate is
kept: at toy size this replaces the paper's REPLAY checkpoint tree, Engstrom et al. 2025,
arXiv 2503.13751, Alg. 2, which only saves memory). Removing a set R is predicted to change the
margin by ``-sum_{i in R} tau_i`` (first order in w, eq. (4)).

Metasmoothness (Engstrom et al. 2025, arXiv 2503.13751, Def. 2) says whether such first-order
predictions can work: train with ``w = 1, 1 + h v, 1 + 2 h v`` (``v ~ N(0, I)``) and score the
movement-weighted sign agreement of the two consecutive finite differences of the final
parameters; near 1 the map is locally linear in w.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import attrs
import numpy as np
from quadriga_std.attribution.task import CHECK_TASK, AttributionTask

from quadriga.artifacts import Estimate
from quadriga.errors import ConfigError
from quadriga.interfaces import Estimator
from quadriga.params import param
from quadriga.seeding import int_seed, make_generator
from quadriga.threads import single_thread
from quadriga.validators import in_range, positive_int

__all__ = ["MAGIC", "metagradients", "metasmoothness", "metasmoothness_score"]


def metagradients(tmap: Any, X_t: Any, y_t: Any) -> Any:
    """``tau[n, k] = d f_t(theta_T(w)) / d w_i`` at ``w = 1``, reverse mode through every step.

    Args:
        tmap: a :class:`~quadriga_std.attribution.training.TrainingMap` (its ``train`` is a pure
            function of the weights, differentiable with ``torch.func``).
        X_t, y_t: the targets ``Tensor[k, d]``, ``Tensor[k]``.

    Returns:
        ``Tensor[n, k]`` float64.

    Source: Ilyas & Engstrom 2025 (arXiv 2504.16430), eq. (3); the reverse pass of Engstrom et al.
    2025 (arXiv 2503.13751), Alg. 1, storing every iterate.
    """
    import torch

    weights = torch.ones(tmap.n, dtype=torch.float64, requires_grad=True)
    f = tmap.margins(tmap.train(weights), X_t, y_t)  # [k]; the graph spans all T steps
    rows = [torch.autograd.grad(f[t], weights, retain_graph=t < len(f) - 1)[0] for t in range(len(f))]
    return torch.stack(rows, dim=1).detach()


def metasmoothness_score(theta0: Any, theta_h: Any, theta_2h: Any) -> float:
    """Metasmoothness ``sum_j (d_j / |d|_1) sign(theta_h - theta0)_j sign(theta_2h - theta_h)_j``,
    ``d = |theta_2h - theta0|``
    (``theta*: Tensor[p]``, the final parameters of the three trainings).

    In [-1, 1]; 1 when both finite differences agree in sign on every coordinate that moves.

    Source: Engstrom et al. 2025 (arXiv 2503.13751), Def. 2.
    """
    import torch

    d = (theta_2h - theta0).abs()
    total = float(d.sum())
    if total == 0.0:
        return 1.0
    return float((d / total * torch.sign(theta_h - theta0) * torch.sign(theta_2h - theta_h)).sum())


def metasmoothness(tmap: Any, h: float, seed: int) -> float:
    """:func:`metasmoothness_score` of the training map along a random direction ``v ~ N(0, I_n)``.

    Three trainings: ``w = 1``, ``1 + h v``, ``1 + 2 h v`` (``v`` from ``seed``).
    """
    import torch

    v = torch.randn(tmap.n, generator=make_generator(seed), dtype=torch.float64)
    with torch.no_grad():
        thetas = [tmap.train(1.0 + h * j * v) for j in range(3)]
    return metasmoothness_score(*thetas)


@attrs.define(kw_only=True)
class MAGIC(Estimator):
    """MAGIC attributions of every target of an ``attribution-task`` (:func:`metagradients`).

    Returns ``Estimate(value = tau: Tensor[n, k])`` (the effect of including training point i on
    target t's margin); ``info``: ``seconds``, ``training_run_seconds`` (one training run's time:
    MAGIC's cost in training-run equivalents is their ratio), ``metasmoothness`` (Def. 2 of arXiv
    2503.13751 at step ``smoothness_h``, along ``smoothness_directions`` random directions,
    averaged) and ``metasmoothness_min``.

    Raises:
        ConfigError: the data is not an ``attribution-task``.

    Source: Ilyas & Engstrom 2025 (arXiv 2504.16430), sec. 3, eq. (3)-(4).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"data": (AttributionTask,)}
    check_inputs: ClassVar[dict[str, Any]] = {"task": {"bed": CHECK_TASK}, "inputs": {"data": "bed"}}
    check_params: ClassVar[dict[str, Any]] = {"smoothness_directions": 1}

    smoothness_h: float = param(
        0.01,
        doc="finite-difference step h of the metasmoothness check",
        validator=in_range(0.0, 1.0, low_open=True),
    )
    smoothness_directions: int = param(
        3, doc="random directions v averaged in the check", validator=positive_int
    )

    def estimate(self, data: Any, *, generator: Any) -> Estimate:
        """Metagradients of every target's margin, and the map's metasmoothness (class docstring)."""
        import torch

        if not isinstance(data, AttributionTask):
            raise ConfigError('magic reads an attribution-task: inputs = { data = "<task>" }.', key="data")
        tmap = data.training_map()
        ones = torch.ones(tmap.n, dtype=torch.float64)
        with single_thread():
            start = time.perf_counter()
            with torch.no_grad():
                tmap.train(ones)
            one_run = time.perf_counter() - start
            start = time.perf_counter()
            tau = metagradients(tmap, *data.targets())
            seconds = time.perf_counter() - start
            seeds = [int_seed(generator) for _ in range(self.smoothness_directions)]
            scores = [metasmoothness(tmap, self.smoothness_h, seed) for seed in seeds]
        return Estimate(
            value=tau,
            info={
                "seconds": seconds,
                "training_run_seconds": one_run,
                "metasmoothness": float(np.mean(scores)),
                "metasmoothness_min": float(np.min(scores)),
            },
        )
