"""Learners: ``feasible-learning`` (FL and resilient FL) and its ``erm`` baseline.

Both train the same ReLU MLP with the same optimizer (Adam), the same number of epochs,
mini-batch size and mini-batch order (drawn from the stage's generator, so replicate ``i`` of
both arms sees the same initialisation and batches). They differ only in the weights of the
per-sample losses in each step: ``1 / |B|`` for ERM, the multipliers ``lam_i`` after the dual
step for FL (:mod:`quadriga_feasible_learning.feasible`).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import numpy as np
import torch

from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Learner
from quadriga.params import param
from quadriga.seeding import child_generator
from quadriga.validators import (
    non_negative,
    non_negative_int,
    positive,
    positive_int,
    positive_int_list,
)
from quadriga_feasible_learning.feasible import (
    CLASSIFICATION,
    REGRESSION,
    dual_step,
    make_mlp,
    sample_losses,
)

__all__ = ["ERM", "FeasibleLearning", "prepare_arrays"]

_TASK_TYPES = ("auto", CLASSIFICATION, REGRESSION)


def _check_task_type(inst: Any, attribute: Any, value: str) -> None:
    if value not in _TASK_TYPES:
        raise ConfigError(
            f"task_type must be one of {', '.join(_TASK_TYPES)}, got {value!r}.", key="task_type"
        )


def prepare_arrays(task: Any, task_type: str, split: str = "train") -> dict[str, Any]:
    """Read one split of a dataset as float32 features and targets ready for the losses.

    Classification targets become int64 class indices ``0..K-1``; regression targets are
    z-scored with the *train* split's mean and standard deviation (``y_mean``, ``y_scale``).

    Shapes:
        returns ``X`` ``Tensor[n, p]``, ``y`` ``Tensor[n]``, ``task_type``, ``classes`` (K, or 1),
        ``y_mean``, ``y_scale`` (floats, target units).

    Units: features as the dataset gives them; regression ``y`` in train standard deviations.

    Raises:
        ConfigError: the task has no such split, or ``task_type="auto"`` cannot tell the type.

    Source: the data conventions of Ramirez et al. 2025, sec. 5 (normalised regression targets).
    """
    try:
        X_tr, y_tr = task.split("train")
        X, y = task.split(split) if split != "train" else (X_tr, y_tr)
    except (KeyError, AttributeError) as exc:
        raise ConfigError(
            f"feasible-learning needs a Dataset with a '{split}' split ({exc}); use sklearn-dataset.",
            key="task",
        ) from exc
    y_tr, y = np.asarray(y_tr), np.asarray(y)
    if y_tr is None or y_tr.ndim != 1:
        raise ConfigError("the dataset needs one target per row (y of shape [n]).", key="task")
    if task_type == "auto":
        integral = np.issubdtype(y_tr.dtype, np.integer) or np.all(np.mod(y_tr, 1) == 0)
        task_type = CLASSIFICATION if integral and np.unique(y_tr).size <= 50 else REGRESSION
    out: dict[str, Any] = {"X": torch.as_tensor(np.asarray(X, np.float32)), "task_type": task_type}
    if task_type == CLASSIFICATION:
        out["y"] = torch.as_tensor(np.asarray(y).astype(np.int64))
        out["classes"] = int(max(int(y_tr.max()), int(y.max())) + 1)
        out["y_mean"], out["y_scale"] = 0.0, 1.0
    else:
        mean, scale = float(y_tr.mean()), float(y_tr.std()) or 1.0
        out["y"] = torch.as_tensor(((np.asarray(y, np.float64) - mean) / scale).astype(np.float32))
        out["classes"], out["y_mean"], out["y_scale"] = 1, mean, scale
    return out


@attrs.define(kw_only=True)
class _MLPLearner(Learner):
    """Shared training loop of FL and ERM (one MLP, Adam, fixed epochs and batches)."""

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Dataset,)}
    check_params: ClassVar[dict[str, Any]] = {"num_epochs": 3, "hidden_sizes": [8]}
    #: whether the learner keeps per-sample multipliers
    constrained: ClassVar[bool] = False

    hidden_sizes: list = param(
        factory=lambda: [64], doc="hidden layer widths of the ReLU MLP", validator=positive_int_list
    )
    num_epochs: int = param(100, doc="passes over the training split", validator=positive_int)
    batch_size: int = param(0, doc="mini-batch size (0: the full training split)", validator=non_negative_int)
    learning_rate: float = param(1e-3, doc="Adam learning rate of the model parameters", validator=positive)
    weight_decay: float = param(
        0.0, doc="Adam (L2) weight decay of the model parameters", validator=non_negative
    )
    task_type: str = param(
        "auto",
        doc="classification, regression or auto (integer targets: classification)",
        validator=_check_task_type,
    )
    epsilon: float = param(
        math.log(1 / 0.6),
        doc="loss threshold eps of the constraints l_i <= eps (nats for "
        "classification, default log(1/0.6) = 0.511; squared standardized target units "
        "for regression); ERM only reports the fraction below it",
        validator=positive,
    )
    log_every: int = param(10, doc="epochs between history records", validator=positive_int)

    def _weights(self, lam: torch.Tensor | None, idx: torch.Tensor, losses: torch.Tensor) -> torch.Tensor:
        """Weights ``Tensor[|B|]`` of the batch's losses (may update the multipliers ``lam`` in place)."""
        raise NotImplementedError

    def fit(self, task: Any, *, generator: Any, progress: Any) -> Fitted:
        """Train the MLP on ``task``'s ``"train"`` split.

        Shapes:
            ``task.split("train")`` gives ``X[n, p]``, ``y[n]``; the returned ``Fitted.model`` maps
            ``Tensor[m, p]`` to logits ``Tensor[m, K]`` or predictions ``Tensor[m, 1]`` (standardized).

        Units: losses in nats or squared standardized target units; epochs and updates are counts.

        Raises:
            ConfigError: a task without a train split or targets.

        Source: Ramirez et al. 2025, Algorithm 1 (FL); ERM is its unconstrained counterpart (sec. 5).
        """
        data = prepare_arrays(task, self.task_type)
        device = generator.device
        X, y = data["X"].to(device), data["y"].to(device)
        n = X.shape[0]
        model = make_mlp(
            X.shape[1],
            list(self.hidden_sizes),
            data["classes"] if data["task_type"] == CLASSIFICATION else 1,
            generator=child_generator(generator, "init"),
        )
        opt = torch.optim.Adam(model.parameters(), lr=self.learning_rate, weight_decay=self.weight_decay)
        batches = child_generator(generator, "batches")
        batch = n if self.batch_size in (0, None) or self.batch_size >= n else int(self.batch_size)
        lam = self._multipliers(n, device)
        history: dict[str, list] = {
            "epoch": [],
            "train_mean_loss": [],
            "train_max_loss": [],
            "feasible_fraction": [],
        }
        if self.constrained:
            history.update(multiplier_mean=[], multiplier_max=[])
        progress.start(self.num_epochs)
        updates = 0
        for epoch in range(1, self.num_epochs + 1):
            order = (
                torch.randperm(n, generator=batches, device=device)
                if batch < n
                else torch.arange(n, device=device)
            )
            for start in range(0, n, batch):
                idx = order[start : start + batch]
                losses = sample_losses(model(X[idx]), y[idx], data["task_type"])
                weights = self._weights(lam, idx, losses.detach())
                opt.zero_grad(set_to_none=True)
                (weights * losses).sum().backward()
                opt.step()
                updates += 1
            if epoch % self.log_every == 0 or epoch == self.num_epochs:
                with torch.no_grad():
                    full = sample_losses(model(X), y, data["task_type"])
                rec = {
                    "train_mean_loss": float(full.mean()),
                    "train_max_loss": float(full.max()),
                    "feasible_fraction": float((full <= self.epsilon).float().mean()),
                }
                if lam is not None:
                    rec.update(multiplier_mean=float(lam.mean()), multiplier_max=float(lam.max()))
                history["epoch"].append(epoch)
                for k, v in rec.items():
                    history[k].append(v)
                progress.log(epoch, **rec)
            progress.advance(1)
        model.eval()
        info: dict[str, Any] = {
            "task_type": data["task_type"],
            "epsilon": float(self.epsilon),
            "y_mean": data["y_mean"],
            "y_scale": data["y_scale"],
            "n_train": int(n),
            "epochs": int(self.num_epochs),
            "batch_size": int(batch),
            "updates": updates,
        }
        if lam is not None:
            info["multipliers"] = lam.detach().cpu().clone()
        return Fitted(model=model, history=history, info=info)

    def _multipliers(self, n: int, device: Any) -> torch.Tensor | None:
        """The run's per-sample multipliers ``Tensor[n]`` at their initial values (``None``: none kept)."""
        return None


@attrs.define(kw_only=True)
class ERM(_MLPLearner):
    """Empirical risk minimisation: Adam on the batch mean of the per-sample losses.

    The baseline of Feasible Learning with the same model, optimizer, epochs and batches:
    ``theta <- Adam step on (1/|B|) sum_{i in B} l_i(theta)``.

    Shapes:
        trains on ``X[n, p]``, ``y[n]`` of the ``"train"`` split (see :meth:`fit`).

    Units: learning rate per Adam step; losses in nats (classification) or squared standardized
    target units (regression).

    Raises:
        ConfigError: bad hyperparameters (naming the key) or a task without a train split.

    Source: Ramirez et al. 2025, "Feasible Learning", AISTATS 2025, arXiv 2501.14912, sec. 2 (ERM, eq. 0).
    """

    def _weights(self, lam: torch.Tensor | None, idx: torch.Tensor, losses: torch.Tensor) -> torch.Tensor:
        return torch.full_like(losses, 1.0 / losses.numel())


@attrs.define(kw_only=True)
class FeasibleLearning(_MLPLearner):
    """Feasible Learning: find theta with ``l_i(theta) <= eps`` for every training sample (primal-dual).

    One multiplier ``lam_i >= 0`` per training sample, initialised at 0. Each mini-batch B takes
    the dual step first at the current parameters,
    ``lam_B <- [lam_B + dual_learning_rate (l_B - eps - lam_B / alpha)]_+``, then an Adam step on
    ``sum_{i in B} lam_i l_i`` (Algorithm 1). With ``resilient = false`` (``alpha = inf``) this is FL
    (eq. 1); with ``resilient = true`` it is the minimal-norm slack relaxation
    ``l_i <= eps + u_i``, ``min (alpha/2) ||u||^2`` (RFL, eq. 4), whose slacks are
    ``u_i = lam_i / alpha`` (``info["slacks"]``). The final multipliers are ``info["multipliers"]``
    (``Tensor[n_train]``, in the order of the train split).

    Shapes:
        trains on ``X[n, p]``, ``y[n]``; ``info["multipliers"]``: ``Tensor[n]``.

    Units: ``epsilon`` in nats (classification) or squared standardized target units (regression);
    multipliers dimensionless; ``dual_learning_rate`` per unit of constraint violation.

    Raises:
        ConfigError: bad hyperparameters (naming the key) or a task without a train split.

    Source: Ramirez, Hounie, Elenter, Gallego-Posada, Hashemizadeh, Ribeiro, Lacoste-Julien,
    "Feasible Learning", AISTATS 2025, arXiv 2501.14912, eq. 1 (FL), eq. 4 (RFL), Algorithm 1
    (alternating dual-then-primal updates, as cooper's AlternatingDualPrimalOptimizer).
    """

    constrained: ClassVar[bool] = True

    dual_learning_rate: float = param(
        1e-2,
        doc="step size eta_lam of the multipliers' projected ascent",
        validator=positive,
    )
    resilient: bool = param(False, doc="relax l_i <= eps + u_i with minimal-norm slacks (RFL)")
    alpha: float = param(
        1.0,
        doc="RFL slack cost (alpha/2)||u||^2; the multipliers decay by 1/alpha",
        validator=positive,
    )

    def _multipliers(self, n: int, device: Any) -> torch.Tensor:
        return torch.zeros(n, device=device)

    def _weights(self, lam: torch.Tensor | None, idx: torch.Tensor, losses: torch.Tensor) -> torch.Tensor:
        assert lam is not None
        alpha = self.alpha if self.resilient else math.inf
        lam[idx] = dual_step(lam[idx], losses, self.epsilon, self.dual_learning_rate, alpha)
        return lam[idx]

    def fit(self, task: Any, *, generator: Any, progress: Any) -> Fitted:
        """Train by alternating dual-then-primal steps (see the class docstring).

        Shapes:
            ``X[n, p]``, ``y[n]`` from ``task.split("train")``; ``info["multipliers"]``
            and, for RFL, ``info["slacks"]``: ``Tensor[n]``.

        Units: multipliers dimensionless; slacks in loss units.

        Raises:
            ConfigError: a task without a train split or targets.

        Source: Ramirez et al. 2025, Algorithm 1.
        """
        fitted = super().fit(task, generator=generator, progress=progress)
        fitted.info["resilient"] = bool(self.resilient)
        if self.resilient:
            fitted.info["slacks"] = fitted.info["multipliers"] / self.alpha
        return fitted
