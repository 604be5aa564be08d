"""``least-squares`` and ``ridge-regression``: linear learners on a dataset's ``"train"`` split."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from quadriga.artifacts import Fitted
from quadriga.interfaces import Learner
from quadriga.params import param
from quadriga.validators import non_negative
from quadriga_std.randomdesign.design import ridge_coefficients

__all__ = ["LeastSquares", "Ridge", "linear_predictor"]


def linear_predictor(coef: np.ndarray) -> Any:
    """``predict(X) = X @ coef`` accepting a numpy array or a torch tensor (the same type back).

    Shapes: ``X`` ``(m, d)``; returns ``(m,)`` or ``(m, k)``. Raises: nothing. Source: -.
    """

    def predict(X: Any) -> Any:
        if isinstance(X, np.ndarray):
            return X @ coef
        import torch

        return torch.as_tensor(np.asarray(X.detach().cpu().numpy()) @ coef, dtype=X.dtype)

    return predict


def _fit(task: Any, penalty: float, progress: Any) -> Fitted:
    X, y = task.split("train")
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    coef = ridge_coefficients(X, y, penalty)
    resid = y - X @ coef
    mse = float(np.mean(resid**2))
    if progress is not None:
        progress.log(0, train_mse=mse)
    info = {"n": int(X.shape[0]), "d": int(X.shape[1]), "penalty": float(penalty), "train_mse": mse}
    return Fitted(model={"coef": coef}, info=info, predict=linear_predictor(coef))


@attrs.define(kw_only=True)
class LeastSquares(Learner):
    """Minimum-norm least squares ``W = X^+ Y`` on the ``"train"`` split (no intercept).

    Returns ``Fitted`` with ``model = {"coef": ...}``, ``predict(X) = X @ coef`` (numpy or torch
    in, the same type out) and ``info`` (``n``, ``d``, ``train_mse``).

    Shapes:
        train ``X`` ``(n, d)``, ``y`` ``(n,)`` or ``(n, k)``; ``coef`` ``(d,)`` or ``(d, k)``.

    Units:
        coefficients in target units per feature unit; ``train_mse`` in squared target units.

    Raises:
        KeyError, ConfigError: from the dataset (no ``"train"`` split, not prepared).

    Source: Gauss 1809; Penrose 1955 (the minimum-norm solution, ``numpy.linalg.lstsq``).
    """

    def fit(self, task: Any, *, generator: Any = None, progress: Any = None) -> Fitted:
        """Fit on ``task.split("train")``; the generator is unused (deterministic)."""
        del generator
        return _fit(task, 0.0, progress)


@attrs.define(kw_only=True)
class Ridge(Learner):
    """Ridge regression ``W = (X^T X + n lam I)^{-1} X^T Y`` on the ``"train"`` split (no intercept).

    Minimises ``(1/n) |Y - X W|_F^2 + lam |W|_F^2``. Returns ``Fitted`` as :class:`LeastSquares`.

    Shapes:
        train ``X`` ``(n, d)``, ``y`` ``(n,)`` or ``(n, k)``; ``coef`` ``(d,)`` or ``(d, k)``.

    Units:
        ``penalty`` in squared target units per squared coefficient unit (the loss is a mean).

    Raises:
        ConfigError: a negative penalty (at build time); the dataset's errors.

    Source: Hoerl & Kennard 1970, eq. 2 (penalty scaled by n as in scikit-learn's ``alpha = n lam``).
    """

    penalty: float = param(
        0.1,
        doc="ridge penalty lam >= 0 on (1/n)|Y - XW|^2 + lam |W|^2 (0: least squares)",
        validator=non_negative,
    )

    def fit(self, task: Any, *, generator: Any = None, progress: Any = None) -> Fitted:
        """Fit on ``task.split("train")``; the generator is unused (deterministic)."""
        del generator
        return _fit(task, self.penalty, progress)
