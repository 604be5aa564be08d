"""The ``lr-qr`` estimator: conformal prediction sets under covariate shift."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np
import torch
from quadriga_std.estimators.conformal import REGRESSORS, check_alpha, make_regressor

from quadriga.artifacts import Estimate
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Estimator
from quadriga.params import param
from quadriga.seeding import numpy_rng
from quadriga.validators import one_of, positive, positive_int
from quadriga_lr_qr.lrqr import check_min_calibration, features, select_and_fit

__all__ = ["LRQR", "prepare_problem"]


def _check_lambdas(inst: Any, attribute: Any, value: Any) -> None:
    if len(value) == 0 or any(float(v) < 0 for v in value):
        raise ConfigError(
            "'lambdas' must be a non-empty list of values >= 0, e.g. [0.1, 0.3, 1, 3].", key="lambdas"
        )


def _check_fraction(inst: Any, attribute: Any, value: float) -> None:
    if not 0.0 < value < 1.0:
        raise ConfigError(f"'{attribute.name}' must be in (0, 1) (got {value!r}).", key=attribute.name)


def prepare_problem(data: Any, regressor: str, alpha: float, generator: Any) -> tuple[dict[str, Any], Any]:
    """Read the splits, check them, fit ``mu`` on ``"train"`` and build the LR-QR inputs.

    Returns:
        ``(problem, model)``: ``problem`` has ``X1[n1, p]``, ``s1[n1]`` (scores ``|y - mu(x)|`` on
        ``"calibration"``), ``X2[n2, p]`` (``"target_calibration"`` covariates), ``perm1``, ``perm2``.

    Raises:
        ConfigError: missing splits, source and target covariates with different numbers of features,
            too few calibration points for ``alpha`` -- all before any fitting.
    """
    try:
        X_tr, y_tr = data.split("train")
        X1, y1 = data.split("calibration")
        X2, _ = data.split("target_calibration")
    except (KeyError, AttributeError) as exc:
        raise ConfigError(
            f"lr-qr needs a Dataset with 'train', 'calibration' and 'target_calibration' "
            f"splits ({exc}); for sklearn-dataset set shift = true.",
            key="data",
        ) from exc
    X_tr, X1, X2 = (np.asarray(a, np.float64) for a in (X_tr, X1, X2))
    if X2.ndim != 2 or X1.ndim != 2 or X1.shape[1] != X2.shape[1] or X_tr.shape[1] != X1.shape[1]:
        raise ConfigError(
            f"source covariates have {X1.shape[-1]} features but target covariates have "
            f"{X2.shape[-1]}; give both domains the same features.",
            key="data",
        )
    check_min_calibration(len(y1), alpha)
    rng = numpy_rng(generator)
    model = make_regressor(regressor, int(rng.integers(2**31 - 1))).fit(X_tr, y_tr)
    problem = {
        "X1": X1,
        "s1": np.abs(np.asarray(y1, np.float64) - model.predict(X1)),
        "X2": X2,
        "perm1": rng.permutation(len(y1)),
        "perm2": rng.permutation(len(X2)),
    }
    return problem, model


def interval_predictor(model: Any, theta: torch.Tensor):
    """``X[n, p] -> (low[n], high[n])`` for ``C(x) = [mu(x) - h(x), mu(x) + h(x)]`` (empty as ``[mu, mu]``
    with ``low > high`` when ``h(x) < 0``)."""

    def predict(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        X = np.asarray(X, np.float64)
        mu = model.predict(X)
        h = (features(X) @ theta).numpy()
        return mu - h, mu + h

    return predict


@attrs.define(kw_only=True)
class LRQR(Estimator):
    """LR-QR conformal prediction sets ``C(x) = {y : |y - mu(x)| <= h(x)}`` under covariate shift.

    Inputs (``data``: a Dataset): ``"train"`` fits the point predictor ``mu`` (scikit-learn
    ``regressor``); ``"calibration"`` gives the labeled source scores; ``"target_calibration"`` gives
    the unlabeled target covariates. Both are split (``validation_fraction``) to choose ``lambda``
    from ``lambdas`` (times the mean score), then ``h`` is refitted on all of them
    (:func:`quadriga_lr_qr.lrqr.select_and_fit`). Threshold class: linear in ``phi(x) = [1, x]``.

    Returns ``Estimate(value = mean set width on evaluation_split (units of y), info = {alpha,
    lambda, beta, ...}, predict = X[n, p] -> (low[n], high[n]))``.

    Shapes:
        Splits are ``X: ndarray[n, p]``, ``y: ndarray[n]``; the threshold has ``p + 1`` coefficients;
        ``predict`` maps ``ndarray[m, p]`` to two ``ndarray[m]``.

    Units:
        Scores, thresholds and widths are in the units of ``y``; ``alpha`` is a probability.

    Raises:
        ConfigError: alpha outside (0, 1); source/target feature counts that differ; too few
            calibration points for the level; missing splits -- all before fitting.

    Source: Joshi, Kiyani, Pappas, Dobriban, Hassani 2025, arXiv 2502.13030 (LR-QR, sec. 3).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"data": (Dataset,)}

    alpha: float = param(0.1, doc="miscoverage level in (0, 1)", validator=check_alpha)
    regressor: str = param(
        "ridge",
        doc=f"point predictor: one of {', '.join(REGRESSORS)}",
        validator=one_of(REGRESSORS),
    )
    lambdas: list = param(
        factory=lambda: [0.1, 0.3, 1.0, 3.0],
        doc="grid of regularisation strengths (multiples of the mean score)",
        validator=_check_lambdas,
    )
    validation_fraction: float = param(
        0.3, doc="share of each set held out to choose lambda", validator=_check_fraction
    )
    steps: int = param(300, doc="Adam iterations of each fit", validator=positive_int)
    learning_rate: float = param(0.1, doc="initial Adam step size", validator=positive)
    evaluation_split: str = param("target_test", doc="split on which the reported mean width is computed")

    def estimate(self, data: Any, *, generator: Any) -> Estimate:
        """Fit ``mu``, choose ``lambda``, fit ``h`` and return the set predictor (see the class docstring)."""
        problem, model = prepare_problem(data, self.regressor, self.alpha, generator)
        fit = select_and_fit(
            [problem],
            self.alpha,
            tuple(float(v) for v in self.lambdas),
            validation_fraction=self.validation_fraction,
            steps=self.steps,
            lr=self.learning_rate,
        )[0]
        predict = interval_predictor(model, fit["theta"])
        low, high = predict(data.split(self.evaluation_split)[0])
        return Estimate(
            value=float(np.maximum(high - low, 0).mean()),
            predict=predict,
            info={
                "alpha": self.alpha,
                "lambda": fit["lam"],
                "beta": fit["beta"],
                "validation_gap": fit["gap"],
                "n_calibration": len(problem["s1"]),
                "n_target_unlabeled": len(problem["X2"]),
                "evaluation_split": self.evaluation_split,
            },
        )
