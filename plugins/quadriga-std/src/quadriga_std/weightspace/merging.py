"""Model merging on an ``mlp-zoo`` suite: task vectors, weight averaging, task arithmetic and TIES.

A suite (:meth:`~quadriga_std.weightspace.zoo.MLPZoo.suite`) holds a base network ``theta_0`` and
fine-tunes ``theta_t``, each with its own head (output layer). Merging acts on the shared hidden
layers (the trunk) through the task vectors ``tau_t = theta_t - theta_0`` (Ilharco et al. 2023,
eq. 1); the heads are not merged, each task keeps its own. A merging learner returns
``Fitted.model = {"trunk": Params (hidden layers), "heads": {task: Params (one layer)}}``.

:class:`MergingLearner` is the shared machinery (draw the suite, tune the scaling coefficient on the
validation split over a declared grid, build the artifact); a method supplies ``update(taus)``, its
merged task vector, and the trunk is ``base + scaling * update(taus)``. Methods with a scaling
coefficient all tune it on the same grid, so they get the same budget (``len(scaling_grid)``
settings, recorded in ``info``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
import numpy as np
import torch

from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Learner
from quadriga.params import param
from quadriga.seeding import int_seed
from quadriga.validators import in_range, instance_of, optional, positive_int
from quadriga_std.weightspace.mlp import Params, accuracy, combine
from quadriga_std.weightspace.zoo import CHECK_ZOO, MLPZoo, Suite

__all__ = [
    "CHECK_MERGED",
    "MergingLearner",
    "TaskArithmetic",
    "Ties",
    "WeightAveraging",
    "merged_network",
    "task_vectors",
    "ties_merge",
    "trunk",
]


def trunk(params: Params) -> Params:
    """The hidden layers of a network (every layer but the last)."""
    return {k: list(v[:-1]) for k, v in params.items()}


def head(params: Params) -> Params:
    """The output layer of a network, as a one-layer ``Params``."""
    return {k: [v[-1]] for k, v in params.items()}


def merged_network(model: Mapping[str, Any], task: str) -> Params:
    """The network of ``task`` in a merged model: the merged trunk followed by the task's own head."""
    t, h = model["trunk"], model["heads"][task]
    return {k: [*t[k], *h[k]] for k in ("weights", "biases")}


def task_vectors(suite: Suite) -> dict[str, Params]:
    """``{task: trunk(theta_t) - trunk(theta_0)}`` (Ilharco et al. 2023, eq. 1)."""
    base = trunk(suite.base)
    return {t: combine([(1.0, trunk(p)), (-1.0, base)]) for t, p in suite.finetuned.items()}


def _sum(taus: Mapping[str, Params]) -> Params:
    return combine([(1.0, tau) for tau in taus.values()])


def ties_merge(taus: Mapping[str, Params], density: float) -> Params:
    """TIES: trim each task vector to its ``density`` largest magnitudes, elect signs, disjoint mean.

    Trim: zero all but the top ``ceil(density * p)`` entries of ``|tau_t|`` over the whole trunk
    (``p`` parameters); elect: ``gamma = sign(sum_t trimmed tau_t)``; disjoint merge: each entry is
    the mean of the trimmed ``tau_t`` entries whose sign agrees with ``gamma`` (0 where none does).

    Shapes: every ``tau_t`` has the trunk's shapes; so has the result.

    Source: Yadav, Tam, Choshen, Raffel, Bansal 2023, "TIES-Merging", sec. 3, Algorithm 1 (steps 1-3).
    """
    names = list(taus)
    shapes = [t.shape for k in ("weights", "biases") for t in taus[names[0]][k]]
    flat = torch.stack(
        [torch.cat([t.reshape(-1) for k in ("weights", "biases") for t in taus[n][k]]) for n in names]
    )
    keep = max(1, int(np.ceil(density * flat.shape[1])))
    thresh = flat.abs().topk(keep, dim=1).values[:, -1:]
    trimmed = torch.where(flat.abs() >= thresh, flat, torch.zeros_like(flat))
    gamma = torch.sign(trimmed.sum(dim=0))
    agree = (torch.sign(trimmed) == gamma) & (trimmed != 0)
    merged = (trimmed * agree).sum(dim=0) / agree.sum(dim=0).clamp(min=1)
    out, pos, n_w = [], 0, len(taus[names[0]]["weights"])
    for shape in shapes:
        size = int(np.prod(shape))
        out.append(merged[pos : pos + size].reshape(shape))
        pos += size
    return {"weights": out[:n_w], "biases": out[n_w:]}


#: conformance inputs of evaluators that score a merged model (a cheap zoo, task arithmetic on it)
CHECK_MERGED: dict[str, Any] = {
    "task": {"zoo": CHECK_ZOO},
    "stage": {"merged": {"use": "task-arithmetic", "inputs": {"task": "zoo"}, "scaling_grid": [0.5]}},
    "inputs": {"subject": "merged", "reference": "zoo"},
}


def _grid(instance: Any, attribute: Any, value: Any) -> None:
    if not value or any(not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0 for v in value):
        raise ConfigError(
            f"{attribute.name} must be a non-empty list of positive numbers, got {value!r}.",
            key=attribute.name,
        )


def _default_grid() -> list[float]:
    """``linspace(0, 3, 31)[1:]``: the isotropic-merging paper's grid for its scaling coefficient."""
    return [round(0.1 * i, 10) for i in range(1, 31)]


@attrs.define(kw_only=True)
class MergingLearner(Learner):
    """Shared machinery of the merging learners (subclasses implement :meth:`update`).

    ``fit`` draws a suite from the zoo (its seed, and with ``num_tasks`` the task subset, from the
    stage's generator: replicate ``i`` of every merging arm merges the same fine-tunes), merges the
    trunks for each scaling coefficient of ``scaling_grid`` and keeps the one with the highest mean
    normalized accuracy (merged / fine-tuned) on the validation split (methods without a
    coefficient, ``tuned = False``, skip the search). ``info``: ``seed``, ``width``, ``tasks``,
    ``scaling``, ``settings_tried``, ``validation_normalized_accuracy``.

    Shapes: ``Fitted.model = {"trunk": Params (L - 1 layers), "heads": {task: Params (1 layer)}}``.
    Units: the scaling coefficient multiplies the merged task vector (dimensionless).

    Raises:
        ConfigError: a task that is not an ``mlp-zoo``, more tasks asked than the zoo has.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Dataset,)}
    check_task: ClassVar[dict[str, Any]] = CHECK_ZOO
    check_params: ClassVar[dict[str, Any]] = {"scaling_grid": [0.5, 1.0]}
    #: whether the method has a scaling coefficient tuned on ``scaling_grid``
    tuned: ClassVar[bool] = True

    width: int | None = param(
        None, doc="hidden width of the suite (None: the zoo's hidden_sizes)", validator=optional(positive_int)
    )
    num_tasks: int | None = param(
        None,
        doc="tasks merged, a random subset per replicate (None: all the zoo's)",
        validator=optional(positive_int),
    )
    scaling_grid: list[float] = param(
        factory=_default_grid, doc="scaling coefficients tried on the validation split", validator=_grid
    )

    def update(self, taus: Mapping[str, Params]) -> Params:
        """The merged task vector at scaling 1 (the trunk is ``base + scaling * update``)."""
        raise NotImplementedError

    def merge(self, base: Params, taus: Mapping[str, Params], scaling: float) -> Params:
        """The merged trunk ``base + scaling * update(taus)`` (``base``: the base network's trunk)."""
        return combine([(1.0, base), (scaling, self.update(taus))])

    def fit(self, task: Any, *, generator: torch.Generator, progress: Any = None) -> Fitted:
        """Draw the suite, merge, tune the scaling coefficient on validation (see the class docstring)."""
        if not isinstance(task, MLPZoo):
            raise ConfigError(
                f"{type(self).__name__} needs an mlp-zoo task, got {type(task).__name__}.", key="task"
            )
        seed = int_seed(generator)
        names = list(task.tasks)
        if self.num_tasks is not None:
            if self.num_tasks > len(names):
                raise ConfigError(
                    f"num_tasks = {self.num_tasks} but the zoo has {len(names)} tasks.", key="num_tasks"
                )
            pick = torch.randperm(len(names), generator=generator)[: self.num_tasks].sort().values
            names = [names[int(i)] for i in pick]
        suite = task.suite(self.width, seed, names)
        taus, base = task_vectors(suite), trunk(suite.base)
        heads = {t: head(p) for t, p in suite.finetuned.items()}
        ft_val = {t: accuracy(p, *task.task_data(t, "validation")) for t, p in suite.finetuned.items()}
        grid = list(self.scaling_grid) if self.tuned else [1.0]
        step = self.update(taus)  # computed once: every method here is linear in the coefficient
        best: tuple[float, float, Params] | None = None
        for scaling in grid:
            merged = combine([(1.0, base), (float(scaling), step)])
            model = {"trunk": merged, "heads": heads}
            score = float(
                np.mean(
                    [
                        accuracy(merged_network(model, t), *task.task_data(t, "validation"))
                        / max(ft_val[t], 1e-12)
                        for t in names
                    ]
                )
            )
            if best is None or score > best[0]:
                best = (score, float(scaling), merged)
        assert best is not None
        return Fitted(
            model={"trunk": best[2], "heads": heads},
            info={
                "seed": seed,
                "width": int(base["weights"][0].shape[0]),
                "tasks": names,
                "scaling": best[1],
                "settings_tried": len(grid),
                "validation_normalized_accuracy": best[0],
            },
        )


@attrs.define(kw_only=True)
class WeightAveraging(MergingLearner):
    """Weight averaging: ``theta = theta_0 + mean_t tau_t``, the mean of the fine-tuned trunks (untuned).

    Shapes, Units, Raises: see :class:`MergingLearner`.

    Source: Wortsman et al. 2022, "Model soups", eq. 1 (uniform soup).
    """

    tuned: ClassVar[bool] = False

    def update(self, taus: Mapping[str, Params]) -> Params:
        """``mean_t tau_t``."""
        return combine([(1.0 / len(taus), tau) for tau in taus.values()])


@attrs.define(kw_only=True)
class TaskArithmetic(MergingLearner):
    """Task arithmetic: ``theta = theta_0 + alpha * sum_t tau_t``, alpha tuned on validation.

    Shapes, Units, Raises: see :class:`MergingLearner`.

    Source: Ilharco et al. 2023, "Editing models with task arithmetic", sec. 2 and 4 (addition).
    """

    def update(self, taus: Mapping[str, Params]) -> Params:
        """``sum_t tau_t``."""
        return _sum(taus)


@attrs.define(kw_only=True)
class Ties(MergingLearner):
    """TIES merging: ``theta = theta_0 + lambda * ties_merge(taus)``, lambda tuned on validation.

    Shapes, Units, Raises: see :class:`MergingLearner`.

    Source: Yadav et al. 2023, "TIES-Merging", Algorithm 1 (density k = 20 %, sec. 6).
    """

    density: float = param(
        0.2,
        doc="fraction of each task vector's entries kept (by magnitude)",
        validator=[instance_of(float, int), in_range(0, 1, low_open=True)],
    )

    def update(self, taus: Mapping[str, Params]) -> Params:
        """``ties_merge(taus, density)``."""
        return ties_merge(taus, self.density)
