"""The loss barrier along the linear path between two networks, and the ``zoo-pair`` endpoints.

``interpolation-barrier`` scores a :class:`~quadriga.artifacts.Fitted` whose model is a pair
``{"a": Params, "b": Params}`` (``zoo-pair`` gives the two members as trained; an alignment learner
gives ``b`` permuted onto ``a``): the loss and accuracy of ``(1 - lam) a + lam b`` on a declared
grid of ``lam``, and the barrier, the largest excess over the straight line between the endpoints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
import numpy as np
import torch

from quadriga.artifacts import Fitted, Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Evaluator, Learner, named
from quadriga.params import param
from quadriga.seeding import int_seed
from quadriga.validators import int_at_least, one_of, optional, positive_int
from quadriga_std.weightspace.mlp import Params, accuracy, cross_entropy, interpolate
from quadriga_std.weightspace.zoo import CHECK_ZOO, MLPZoo

__all__ = ["InterpolationBarrier", "ZooPair", "barrier", "interpolation_curve", "pair_of"]


def interpolation_curve(
    a: Params, b: Params, x: torch.Tensor, y: torch.Tensor, lambdas: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """Loss (nats) and accuracy of ``(1 - lam) a + lam b`` on ``(x, y)``: two ``ndarray[len(lambdas)]``."""
    losses, accs = [], []
    for lam in lambdas:
        mid = interpolate(a, b, float(lam))
        losses.append(cross_entropy(mid, x, y))
        accs.append(accuracy(mid, x, y))
    return np.asarray(losses), np.asarray(accs)


def barrier(values: Sequence[float], lambdas: Sequence[float], *, higher_is_worse: bool = True) -> float:
    """``max_lam [v(lam) - ((1 - lam) v(0) + lam v(1))]`` (sign flipped for accuracy-like values).

    ``lambdas`` must start at 0 and end at 1, so the barrier is ``>= 0`` and is 0 for a path that
    is no worse than the straight line between its endpoints (e.g. two identical networks).

    Raises:
        ValueError: a grid that does not run from 0 to 1, or lengths that differ.

    Source: Frankle et al. 2020, "Linear mode connectivity and the lottery ticket hypothesis", sec. 2
    (instability); Ainsworth et al. 2023, eq. 1 (loss barrier).
    """
    v, lam = np.asarray(values, float), np.asarray(lambdas, float)
    if v.shape != lam.shape or lam[0] != 0.0 or lam[-1] != 1.0:
        raise ValueError("barrier needs one value per lambda on a grid from 0 to 1")
    excess = v - ((1 - lam) * v[0] + lam * v[-1])
    return float(np.max(excess if higher_is_worse else -excess))


def pair_of(fitted: Any, name: str = "subject") -> tuple[Params, Params]:
    """The ``(a, b)`` networks of a pair artifact (``Fitted.model = {"a": ..., "b": ...}``).

    Raises:
        ConfigError: an artifact that holds no pair.
    """
    model = getattr(fitted, "model", None)
    if not isinstance(model, dict) or not {"a", "b"} <= set(model):
        raise ConfigError(
            f"'{name}' holds no pair of networks: connect zoo-pair or an alignment learner.", key="subject"
        )
    return model["a"], model["b"]


@attrs.define(kw_only=True)
class ZooPair(Learner):
    """Two members of an ``mlp-zoo`` from independent seeds, as trained (the naive, unaligned pair).

    The members' seed is drawn from the stage's generator, so replicate ``i`` of this stage and of
    an alignment learner share their pair. ``Fitted.model = {"a": Params, "b": Params}``;
    ``info``: ``seed``, ``width``.

    Shapes: see :class:`~quadriga_std.weightspace.zoo.MLPZoo` (``width`` replaces every hidden width).
    Units: none.

    Raises:
        ConfigError: a task that is not an ``mlp-zoo``.

    Source: Frankle et al. 2020, sec. 3 (instability between independent runs).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Dataset,)}
    check_task: ClassVar[dict[str, Any]] = CHECK_ZOO

    width: int | None = param(
        None, doc="hidden width of the pair (None: the zoo's hidden_sizes)", validator=optional(positive_int)
    )

    def fit(self, task: Any, *, generator: torch.Generator, progress: Any = None) -> Fitted:
        """Draw the pair's seed and return the two trained members."""
        zoo = _zoo(task)
        seed = int_seed(generator)
        a, b = zoo.pair(self.width, seed)
        return Fitted(model={"a": a, "b": b}, info={"seed": seed, "width": _width(a)})


def _zoo(task: Any) -> MLPZoo:
    if not isinstance(task, MLPZoo):
        raise ConfigError(f"this learner needs an mlp-zoo task, got {type(task).__name__}.", key="task")
    return task


def _width(params: Params) -> int:
    return int(params["weights"][0].shape[0])


@attrs.define(kw_only=True)
class InterpolationBarrier(Evaluator):
    """Loss and accuracy barriers along the linear path between the two networks of each subject.

    For every subject (a pair ``{"a", "b"}``) and ``lam`` in ``linspace(0, 1, num_points)``: the
    cross-entropy and accuracy of ``(1 - lam) a + lam b`` on the reference zoo's ``split``.
    Values ``"<subject>/loss_barrier"`` (nats), ``"/accuracy_barrier"`` (fraction),
    ``"/midpoint_loss"``, ``"/endpoint_loss"`` (mean of the two endpoints), ``"/endpoint_accuracy"``;
    ``tables["curve"]`` one row per subject and ``lam``; ``figures["path"]``.

    Shapes: reads ``reference.data(split) -> (Tensor[n, 64], LongTensor[n])``.
    Units: loss in nats (mean cross-entropy), accuracy and its barrier as fractions.

    Raises:
        ConfigError: no ``mlp-zoo`` reference, a subject without a pair.

    Source: Ainsworth, Hayase, Srinivasa 2023, "Git Re-Basin", eq. 1 and sec. 5 (25-point grid);
    Frankle et al. 2020, sec. 2.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Fitted,), "reference": (Dataset,)}
    check_params: ClassVar[dict[str, Any]] = {"num_points": 3}
    check_inputs: ClassVar[dict[str, Any]] = {
        "task": {"zoo": CHECK_ZOO},
        "stage": {"pair": {"use": "zoo-pair", "inputs": {"task": "zoo"}}},
        "inputs": {"subject": "pair", "reference": "zoo"},
    }

    num_points: int = param(25, doc="points of the lambda grid, ends included", validator=int_at_least(3))
    split: str = param("test", doc="zoo split scored", validator=one_of(("train", "validation", "test")))

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Score every subject's path (see the class docstring)."""
        if not isinstance(reference, MLPZoo):
            raise ConfigError("interpolation-barrier needs the mlp-zoo as reference.", key="reference")
        x, y = reference.data(self.split)
        lambdas = np.linspace(0.0, 1.0, self.num_points)
        values, rows, curves = {}, [], {}
        for name, fitted in named(subject).items():
            a, b = pair_of(fitted, name)
            loss, acc = interpolation_curve(a, b, x, y, lambdas)
            curves[name] = (loss, acc)
            values.update(
                {
                    f"{name}/loss_barrier": barrier(loss, lambdas),
                    f"{name}/accuracy_barrier": barrier(acc, lambdas, higher_is_worse=False),
                    f"{name}/midpoint_loss": float(loss[len(loss) // 2]),
                    f"{name}/endpoint_loss": float((loss[0] + loss[-1]) / 2),
                    f"{name}/endpoint_accuracy": float((acc[0] + acc[-1]) / 2),
                }
            )
            rows += [
                {"subject": name, "lambda": float(t), "loss": float(lo), "accuracy": float(ac)}
                for t, lo, ac in zip(lambdas, loss, acc, strict=True)
            ]
        return Metrics(
            values=values, tables={"curve": rows}, figures={"path": _figure(lambdas, curves, self.split)}
        )


def _figure(lambdas: np.ndarray, curves: dict[str, tuple[np.ndarray, np.ndarray]], split: str) -> Any:
    """Loss and accuracy along the path, one line per subject (x: lambda, 0 = network a, 1 = network b)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.0, 3.4), layout="constrained")
    ax_l, ax_a = fig.subplots(1, 2)
    for name, (loss, acc) in list(curves.items())[:12]:
        ax_l.plot(lambdas, loss, label=name)
        ax_a.plot(lambdas, acc, label=name)
    ax_l.set_xlabel("lambda (0: network a, 1: network b)")
    ax_l.set_ylabel(f"{split} loss (nats)")
    ax_a.set_xlabel("lambda (0: network a, 1: network b)")
    ax_a.set_ylabel(f"{split} accuracy (fraction)")
    ax_l.legend(fontsize=7)
    ax_l.set_title("loss along the linear path", fontsize=9)
    ax_a.set_title("accuracy along the linear path", fontsize=9)
    return fig
