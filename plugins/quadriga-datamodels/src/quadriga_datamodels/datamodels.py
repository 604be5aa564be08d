"""Linear datamodels: per target, a sparse linear map from training-subset masks to margins.

For each target example x, with ``m`` models trained on random ``alpha``-subsets ``S_i`` (the
subset zoo of :mod:`quadriga_std.attribution`) and their margins ``f_x(S_i)``,

    theta_x = argmin_{theta, theta_0} (1/2m) sum_i (theta^T 1_{S_i} + theta_0 - f_x(S_i))^2
              + lambda ||theta||_1                                       (Ilyas et al. 2022, eq. (2))

on a path of ``num_lambdas`` values from ``lambda_max`` down to ``eps * lambda_max`` (warm starts),
``lambda`` chosen by the mean squared error on held-out models (the validation split of the zoo),
as the official ``regression_config.yaml`` does (k = 10 lambdas, eps = 1e-2; the official code solves
each point with the GPU SAGA solver ``fast_l1``, here scikit-learn's coordinate descent,
:func:`sklearn.linear_model.lasso_path`, which solves the same problem exactly).
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
from quadriga.seeding import int_seed
from quadriga.threads import single_thread
from quadriga.validators import in_range, int_at_least

__all__ = ["Datamodels", "fit_datamodel"]


def fit_datamodel(
    masks: np.ndarray,
    margins: np.ndarray,
    val_masks: np.ndarray,
    val_margins: np.ndarray,
    *,
    num_lambdas: int = 10,
    eps: float = 1e-2,
) -> tuple[np.ndarray, float, float, float]:
    """One target's datamodel: the lasso path on ``(masks, margins)``, lambda chosen on validation models.

    Args:
        masks: ``bool[m, n]`` regression subsets; margins: ``float[m]``.
        val_masks: ``bool[v, n]`` held-out subsets; val_margins: ``float[v]``.
        num_lambdas: points on the path (log-spaced from ``lambda_max`` to ``eps * lambda_max``).
        eps: ratio of the smallest to the largest lambda.

    Returns:
        ``(theta[n], theta_0, lambda, validation MSE)``.

    Source: Ilyas et al. 2022 (arXiv 2202.00622), eq. (2); lambda path of the official
    ``datamodels/regression/compute_datamodels.py`` (``lam_decay = exp(log(eps) / k)``).
    """
    from sklearn.linear_model import lasso_path

    X = masks.astype(np.float64)
    mean_x, mean_y = X.mean(0), float(margins.mean())
    Xc, yc = X - mean_x, margins - mean_y
    lam_max = float(np.abs(Xc.T @ yc).max()) / len(yc)  # the smallest lambda with theta = 0
    if lam_max == 0.0:  # constant margins: the zero model
        return np.zeros(X.shape[1]), mean_y, 0.0, float(((val_margins - mean_y) ** 2).mean())
    grid = lam_max * eps ** (np.arange(num_lambdas) / max(num_lambdas - 1, 1))
    lambdas, coefs, _ = lasso_path(Xc, yc, alphas=grid)
    val_pred = (val_masks.astype(np.float64) - mean_x) @ coefs + mean_y  # [v, num_lambdas]
    mse = ((val_pred - val_margins[:, None]) ** 2).mean(0)
    best = int(np.argmin(mse))
    theta = coefs[:, best]
    return theta, mean_y - float(mean_x @ theta), float(lambdas[best]), float(mse[best])


@attrs.define(kw_only=True)
class Datamodels(Estimator):
    """Datamodels of every target of an ``attribution-task`` (:func:`fit_datamodel` per target).

    The zoo of ``num_models`` models on random ``alpha``-subsets (masks seeded from this stage's
    generator; trained once and cached by the task) is split into regression and validation
    models (``validation_fraction``). Returns ``Estimate(value = theta: ndarray[n, k])`` (the
    effect of including training point i on target t's margin), ``predict(masks[s, n]) ->
    margins[s, k]`` (the counterfactual prediction ``theta^T 1_S + theta_0``); ``info``:
    ``seconds`` (zoo training, cached or not, plus regression), ``regression_seconds``,
    ``training_runs`` (= ``num_models``), ``mean_lambda``, ``mean_nonzero`` (weights per target),
    ``validation_mse``.

    Raises:
        ConfigError: the data is not an ``attribution-task``; fewer than 2 validation models.

    Source: Ilyas et al. 2022 (arXiv 2202.00622), sec. 2 and eq. (2).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"data": (AttributionTask,)}
    check_params: ClassVar[dict[str, Any]] = {"num_models": 20}
    check_inputs: ClassVar[dict[str, Any]] = {"task": {"bed": CHECK_TASK}, "inputs": {"data": "bed"}}

    num_models: int = param(1000, doc="subset models m (regression + validation)", validator=int_at_least(10))
    alpha: float = param(
        0.5, doc="fraction of the training set in each subset", validator=in_range(0.0, 1.0, low_open=True)
    )
    validation_fraction: float = param(
        0.1,
        doc="share of the models held out to choose lambda",
        validator=in_range(0.0, 1.0, low_open=True, high_open=True),
    )
    num_lambdas: int = param(10, doc="lambdas on the path (the official k)", validator=int_at_least(1))
    eps: float = param(
        1e-2,
        doc="smallest / largest lambda on the path",
        validator=in_range(0.0, 1.0, low_open=True, high_open=True),
    )

    def estimate(self, data: Any, *, generator: Any) -> Estimate:
        """Fit every target's datamodel (see the class docstring)."""
        if not isinstance(data, AttributionTask):
            raise ConfigError(
                'datamodels reads an attribution-task: inputs = { data = "<task>" }.', key="data"
            )
        num_val = round(self.validation_fraction * self.num_models)
        if num_val < 2 or num_val >= self.num_models - 1:
            raise ConfigError(
                f"validation_fraction {self.validation_fraction} of {self.num_models} models leaves "
                f"{num_val} validation models; need at least 2 and a regression set.",
                key="validation_fraction",
            )
        with single_thread():
            zoo = data.zoo(self.alpha, self.num_models, int_seed(generator))
        train, val = zoo.split(self.num_models - num_val)
        start = time.perf_counter()
        k = data.num_targets
        theta = np.zeros((data.num_train, k))
        bias, lams, mses = np.zeros(k), np.zeros(k), np.zeros(k)
        for t in range(k):
            theta[:, t], bias[t], lams[t], mses[t] = fit_datamodel(
                train.masks,
                train.margins[:, t],
                val.masks,
                val.margins[:, t],
                num_lambdas=self.num_lambdas,
                eps=self.eps,
            )
        regression = time.perf_counter() - start

        def predict(masks: np.ndarray) -> np.ndarray:
            return np.asarray(masks, dtype=np.float64) @ theta + bias

        return Estimate(
            value=theta,
            predict=predict,
            info={
                "seconds": zoo.seconds + regression,
                "regression_seconds": regression,
                "training_runs": self.num_models,
                "settings_tried": self.num_lambdas,
                "mean_lambda": float(lams.mean()),
                "mean_nonzero": float((theta != 0).sum(0).mean()),
                "validation_mse": float(mses.mean()),
            },
        )
