"""``attribution-task``: a classification data set, a deterministic training map and target examples.

The test bed every data-attribution method and yardstick reads: ``n`` training points, ``k``
target examples, and a :class:`~quadriga_std.attribution.training.TrainingMap` (linear softmax or a
small smooth MLP, full-batch GD in float64) that retrains exactly on any weighting of the training
points. It hands out subset zoos (:mod:`quadriga_std.attribution.zoo`, cached on disk) and
retrained margins (the ground truth of removal experiments).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset
from quadriga.params import param
from quadriga.seeding import numpy_rng
from quadriga.validators import non_negative, one_of, positive, positive_int

from .zoo import SubsetZoo, default_cache_dir, load_or_build_zoo

__all__ = ["CHECK_SCORED_INPUTS", "CHECK_TASK", "CLASSIFICATION_SETS", "AttributionTask"]

#: scikit-learn's bundled classification sets
CLASSIFICATION_SETS = {
    "breast_cancer": "load_breast_cancer",
    "digits": "load_digits",
    "wine": "load_wine",
    "iris": "load_iris",
}


#: a tiny task for the conformance checks (kept in memory)
CHECK_TASK: dict[str, Any] = {
    "use": "attribution-task",
    "num_train": 30,
    "num_targets": 4,
    "steps": 20,
    "cache_dir": "",
}

#: the conformance-check inputs of an evaluator of attribution scores: influence-function scores
#: (``subject``) of the check task (``reference``)
CHECK_SCORED_INPUTS: dict[str, Any] = {
    "task": {"bed": CHECK_TASK},
    "stage": {"influence": {"use": "influence-function", "inputs": {"data": "bed"}}},
    "inputs": {"subject": "influence", "reference": "bed"},
}


def _hidden(value: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in value)


@attrs.define(kw_only=True)
class AttributionTask(Dataset):
    """A classification set split into ``num_train`` training points and ``num_targets`` targets.

    Splits: ``"train"`` ``(X[n, d], y[n])`` and ``"test"`` (the targets, ``(X[k, d], y[k])``),
    float64 features standardised with the training split's mean and std, integer labels. The
    split is drawn in :meth:`prepare` from the task's generator.

    Methods used by the attribution components: :meth:`training_map`, :meth:`full_margins`
    (``ndarray[k]``), :meth:`retrain` (``weights[b, n] -> margins[b, k]``), :meth:`zoo`.

    Shapes: ``X[n, d]`` float64, ``y[n]`` int64; margins ``[b, k]`` for ``b`` weightings.
    Units: features in training standard deviations; margins are logit differences (nats of odds).

    Raises:
        ConfigError: an unknown data set, or more training points and targets than rows.

    Source: the CPU test beds of Ilyas et al. 2022 (arXiv 2202.00622) and Ilyas & Engstrom 2025
    (arXiv 2504.16430), as sized in the project's research notes (methods-wave3 sec. 8-9).
    """

    check_params: ClassVar[dict[str, Any]] = {k: v for k, v in CHECK_TASK.items() if k != "use"}

    dataset: str = param(
        "breast_cancer", doc="scikit-learn bundled set", validator=one_of(CLASSIFICATION_SETS)
    )
    num_train: int = param(400, doc="training points n", validator=positive_int)
    num_targets: int = param(
        50, doc="target examples k (drawn from the remaining rows)", validator=positive_int
    )
    hidden_sizes: tuple[int, ...] = param(
        (), doc="hidden widths of the MLP ([] = multinomial logistic regression)", converter=_hidden
    )
    activation: str = param(
        "gelu",
        doc="activation of the MLP (smooth ones for metagradients)",
        validator=one_of(("gelu", "tanh", "softplus", "relu")),
    )
    steps: int = param(200, doc="full-batch gradient steps T", validator=positive_int)
    learning_rate: float = param(1.0, doc="step size", validator=positive)
    weight_decay: float = param(1e-2, doc="L2 penalty lambda on every parameter", validator=non_negative)
    cache_dir: str | None = param(
        None, doc="where zoos are cached (default $QUADRIGA_CACHE_DIR/attribution); '' keeps them in memory"
    )

    def __attrs_post_init__(self) -> None:
        """Nothing is loaded until :meth:`prepare`."""
        self._splits: dict[str, Any] = {}
        self._train_index: np.ndarray | None = None
        self._map: Any = None
        self._full: np.ndarray | None = None

    def prepare(self, *, generator: Any) -> None:
        """Load the set, draw the train/target split and standardise (training statistics).

        Raises:
            ConfigError: ``num_train + num_targets`` exceeds the number of rows.
        """
        import sklearn.datasets

        X, y = getattr(sklearn.datasets, CLASSIFICATION_SETS[self.dataset])(return_X_y=True)
        if self.num_train + self.num_targets > len(y):
            raise ConfigError(
                f"num_train + num_targets = {self.num_train + self.num_targets} exceeds the "
                f"{len(y)} rows of {self.dataset}.",
                key="num_train",
            )
        order = numpy_rng(generator).permutation(len(y))
        tr, te = order[: self.num_train], order[self.num_train : self.num_train + self.num_targets]
        mean, std = X[tr].mean(0), X[tr].std(0)
        std[std == 0] = 1.0
        X = (X - mean) / std
        self._train_index = tr
        self._splits = {"train": (X[tr], y[tr].astype(np.int64)), "test": (X[te], y[te].astype(np.int64))}
        self._map, self._full = None, None

    # ------------------------------------------------------------------ what methods read
    @property
    def num_classes(self) -> int:
        """Number of classes of the data set."""
        return {"breast_cancer": 2, "digits": 10, "wine": 3, "iris": 3}[self.dataset]

    def training_map(self) -> Any:
        """The :class:`~quadriga_std.attribution.training.TrainingMap` of the training split."""
        if self._map is None:
            import torch

            from .training import TrainingMap

            X, y = self.split("train")
            self._map = TrainingMap(
                torch.as_tensor(X, dtype=torch.float64),
                torch.as_tensor(y),
                self.num_classes,
                hidden=self.hidden_sizes,
                activation=self.activation,
                steps=self.steps,
                lr=self.learning_rate,
                weight_decay=self.weight_decay,
            )
        return self._map

    def targets(self) -> tuple[Any, Any]:
        """The target examples as tensors ``(X[k, d] float64, y[k] int64)``."""
        import torch

        X, y = self.split("test")
        return torch.as_tensor(X, dtype=torch.float64), torch.as_tensor(y)

    def retrain(self, weights: Any) -> np.ndarray:
        """Retrain on every row of ``weights[b, n]`` and return the target margins ``ndarray[b, k]``."""
        from quadriga.threads import single_thread

        with single_thread():
            return self.training_map().retrain_margins(weights, *self.targets())

    def full_margins(self) -> np.ndarray:
        """Target margins of the model trained on the whole training split: ``ndarray[k]``."""
        if self._full is None:
            self._full = self.retrain(np.ones((1, self.num_train)))[0]
        return self._full

    def identity(self) -> dict[str, Any]:
        """What determines a zoo's margins: the data, the split, the model and its training."""
        if self._train_index is None:
            raise ConfigError("the task has no split yet: call prepare(generator=...) first.")
        X, _ = self.split("test")
        return {
            "dataset": self.dataset,
            "train": hashlib.sha256(self._train_index.tobytes()).hexdigest()[:16],
            "targets": hashlib.sha256(np.ascontiguousarray(X).tobytes()).hexdigest()[:16],
            "hidden_sizes": list(self.hidden_sizes),
            "activation": self.activation,
            "steps": self.steps,
            "learning_rate": self.learning_rate,
            "weight_decay": self.weight_decay,
        }

    def zoo(self, alpha: float, m: int, seed: int) -> SubsetZoo:
        """The zoo of ``m`` models on random ``alpha``-subsets with masks from ``seed`` (cached)."""
        cache = None if self.cache_dir == "" else Path(self.cache_dir or default_cache_dir())
        return load_or_build_zoo(
            self.identity(),
            n=self.num_train,
            m=m,
            alpha=alpha,
            seed=seed,
            retrain=self.retrain,
            cache_dir=cache,
        )
