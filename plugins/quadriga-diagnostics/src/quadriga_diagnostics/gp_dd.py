"""``diag-gp-dd``: Gaussian-process marginal likelihood and predictive losses as covariates are added.

Row 003:106 ("Double descent for uncertainty in Gaussian processes"): for GPs whose
hyperparameters maximise the marginal likelihood (ML-II), the optimised marginal likelihood is
monotone in the input dimension, while posterior predictive losses (test NLL, CRPS, calibration)
need not be. For nested models (an ARD kernel on the first ``d`` covariates) the monotonicity of
the maximum is exact: the ``d + 1`` model contains the ``d`` one in the limit of an infinite
lengthscale on the new covariate, so ``max ML(d + 1) >= max ML(d)``. The evaluator respects this
with a nested warm start (the previous optimum, new lengthscale ``1e4``) beside a fresh start for
the new lengthscale (1.0) and the un-optimised nested model (lengthscale at its bound), keeping
the best; the predictive losses are measured on a
held-out test set.

Test bed: ``y = sin(2 x_1) + x_2^2 / 2 + noise * e`` with ``x ~ N(0, I_D)``: two relevant
covariates, ``D - 2`` synthetic (irrelevant) ones added one at a time; ``n`` training points.
Kernel ``c * RBF_ARD + White`` (scikit-learn's ``GaussianProcessRegressor``, L-BFGS-B).
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.interfaces import Evaluator
from quadriga.validators import int_at_least, positive

__all__ = [
    "LEVELS",
    "GPDimensionCurve",
    "calibration_error",
    "gaussian_crps",
    "gaussian_nll",
    "gp_dimension_curve",
]

#: central-interval levels of the calibration error
LEVELS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def gaussian_nll(y: np.ndarray, mean: np.ndarray, std: np.ndarray) -> float:
    """Mean negative log density of ``y`` under ``N(mean, std^2)`` (nats per point).

    Shapes: all ``(m,)``; returns a float. Raises: nothing. Source: standard.
    """
    z = (y - mean) / std
    return float(np.mean(0.5 * np.log(2 * np.pi) + np.log(std) + 0.5 * z**2))


def gaussian_crps(y: np.ndarray, mean: np.ndarray, std: np.ndarray) -> float:
    """Mean CRPS of ``N(mean, std^2)`` at ``y``: ``std [z (2 Phi(z) - 1) + 2 phi(z) - 1/sqrt(pi)]``.

    Shapes: all ``(m,)``; returns a float in units of ``y``. Raises: nothing.
    Source: Gneiting & Raftery 2007 (JASA), eq. 21.
    """
    from scipy.stats import norm

    z = (y - mean) / std
    return float(np.mean(std * (z * (2 * norm.cdf(z) - 1) + 2 * norm.pdf(z) - 1 / np.sqrt(np.pi))))


def calibration_error(y: np.ndarray, mean: np.ndarray, std: np.ndarray, levels: Any = LEVELS) -> float:
    """Mean over ``levels`` of ``|coverage of the central interval - level|``.

    Shapes: all ``(m,)``; returns a float in [0, 1]. Raises: nothing.
    Source: the interval-calibration error of Kuleshov, Fenner & Ermon 2018 (ICML), sec. 3.
    """
    from scipy.stats import norm

    z = np.abs(y - mean) / std
    return float(np.mean([abs(np.mean(z <= norm.ppf(0.5 + p / 2)) - p) for p in levels]))


def _kernel(constant: float, lengthscales: list[float], noise_level: float) -> Any:
    from sklearn.gaussian_process.kernels import RBF, WhiteKernel  # type: ignore[import-untyped]
    from sklearn.gaussian_process.kernels import ConstantKernel as C

    return C(constant, (1e-3, 1e3)) * RBF(lengthscales, (1e-2, 1e5)) + WhiteKernel(noise_level, (1e-6, 1e1))


def gp_dimension_curve(
    X: np.ndarray, y: np.ndarray, X_test: np.ndarray, y_test: np.ndarray, *, warm_start: bool = True
) -> list[dict[str, float]]:
    """ML-II GP on the first ``d`` covariates for ``d = 1 .. D``: marginal likelihood and losses.

    With ``warm_start`` each ``d + 1`` fit starts from the ``d`` optimum twice (new lengthscale
    ``1e4`` and ``1.0``), and the nested model itself (new lengthscale at its bound ``1e5``, not
    optimised) is a third candidate; the best of the three is kept. Without it: one fresh start
    (all lengthscales 1, constant 1, noise 0.1).

    Shapes: ``X`` ``(n, D)``, ``y`` ``(n,)``, test likewise; returns ``D`` rows with ``d``,
    ``log_ml`` (nats, the optimised log marginal likelihood), ``nll`` (nats per test point),
    ``crps`` and ``rmse`` (units of y), ``calibration`` (dimensionless), ``noise_level``.

    Raises: scikit-learn's errors (a singular kernel matrix). Source: Rasmussen & Williams 2006,
    ch. 5 (ML-II, eq. 5.8); scikit-learn's ``GaussianProcessRegressor``.
    """
    from sklearn.gaussian_process import GaussianProcessRegressor  # type: ignore[import-untyped]

    rows: list[dict[str, float]] = []
    prev = None
    for d in range(1, X.shape[1] + 1):
        if prev is None or not warm_start:
            starts = [_kernel(1.0, [1.0] * d, 0.1)]
        else:
            p = prev.get_params()
            ls = list(np.atleast_1d(p["k1__k2__length_scale"]).astype(float))
            const, noise = p["k1__k1__constant_value"], p["k2__noise_level"]
            starts = [_kernel(const, [*ls, new], noise) for new in (1e4, 1.0)]
            # the nested model itself, not optimised: the new covariate switched off (lengthscale at
            # its bound 1e5), so the kept maximum is never below the previous one by more than the
            # bound's O(1e-10) effect
            starts.append((_kernel(const, [*ls, 1e5], noise), None))
        best: Any = None
        for start in starts:
            kernel, optimizer = start if isinstance(start, tuple) else (start, "fmin_l_bfgs_b")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # L-BFGS-B stopping at a bound warns; the value is kept
                gp = GaussianProcessRegressor(kernel, optimizer=optimizer, n_restarts_optimizer=0).fit(
                    X[:, :d], y
                )
            if best is None or gp.log_marginal_likelihood_value_ > best.log_marginal_likelihood_value_:
                best = gp
        prev = best.kernel_
        mean, std = best.predict(X_test[:, :d], return_std=True)
        rows.append(
            {
                "d": d,
                "log_ml": float(best.log_marginal_likelihood_value_),
                "nll": gaussian_nll(y_test, mean, std),
                "crps": gaussian_crps(y_test, mean, std),
                "calibration": calibration_error(y_test, mean, std),
                "rmse": float(np.sqrt(np.mean((y_test - mean) ** 2))),
                "noise_level": float(prev.get_params()["k2__noise_level"]),
            }
        )
    return rows


def draw_problem(n: int, n_test: int, dim: int, noise: float, rng: np.random.Generator) -> tuple:
    """``X ~ N(0, I_dim)``, ``y = sin(2 x_1) + x_2^2 / 2 + noise e``: train and test arrays.

    Shapes: returns ``(X[n, dim], y[n], X_test[n_test, dim], y_test[n_test])``. Raises: nothing.
    Source: the module docstring's test bed.
    """
    X = rng.standard_normal((n + n_test, dim))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + noise * rng.standard_normal(n + n_test)
    return X[:n], y[:n], X[n:], y[n:]


@attrs.define(kw_only=True)
class GPDimensionCurve(Evaluator):
    """ML-II Gaussian process as covariates are added: optimised marginal likelihood (predicted
    monotone) beside test NLL, CRPS and calibration (not predicted monotone).

    Input: none (``subject`` and ``reference`` are ignored; the test bed of the module docstring).

    Returns (``Metrics``): per ``d``: ``log_ml/<d>``, ``nll/<d>``, ``crps/<d>``,
    ``calibration/<d>``; ``min_log_ml_step`` (smallest ``log_ml(d + 1) - log_ml(d)``, predicted
    ``>= 0``), ``nll_excess`` (``nll(D) - nll(2)``, the cost of the irrelevant covariates),
    ``nll_increases``, ``crps_increases``, ``calibration_increases`` (number of steps at which the
    loss rises by more than 1e-6); table ``curve``.

    Shapes:
        scalars; the table has ``dim`` rows.

    Units:
        log marginal likelihood in nats (total), NLL in nats per test point, CRPS in units of y.

    Raises:
        ConfigError: ``dim < 3``, non-positive sizes or noise (at build time).

    Source: row 003:106, "Double descent for uncertainty in Gaussian processes" (marginal
    likelihood monotone in the input dimension, predictive losses not); Rasmussen & Williams 2006,
    eq. 5.8; Gneiting & Raftery 2007, eq. 21 (CRPS).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {"dim": 3, "n_train": 15, "n_test": 50}

    dim: int = param(
        8, doc="largest number of covariates D (2 relevant, D - 2 irrelevant)", validator=int_at_least(3)
    )
    n_train: int = param(30, doc="training points n", validator=int_at_least(5))
    n_test: int = param(300, doc="test points", validator=int_at_least(10))
    noise: float = param(0.3, doc="label noise standard deviation (units of y)", validator=positive)
    warm_start: bool = param(
        True, doc="nested warm start (guarantees the monotone maximum up to the optimizer)"
    )

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any) -> Metrics:
        """Draw the problem and fit the nested GPs; see the class docstring."""
        from quadriga.seeding import numpy_rng

        del subject, reference
        X, y, Xt, yt = draw_problem(self.n_train, self.n_test, self.dim, self.noise, numpy_rng(generator))
        rows = gp_dimension_curve(X, y, Xt, yt, warm_start=self.warm_start)
        return Metrics(values=curve_summary(rows), tables={"curve": rows})


def curve_summary(rows: list[dict[str, float]]) -> dict[str, float]:
    """The evaluator's scalar values from :func:`gp_dimension_curve` rows (class docstring).

    Raises: nothing. Source: -.
    """
    values: dict[str, float] = {}
    for r in rows:
        for key in ("log_ml", "nll", "crps", "calibration"):
            values[f"{key}/{r['d']}"] = r[key]
    ml = np.array([r["log_ml"] for r in rows])
    values["min_log_ml_step"] = float(np.min(np.diff(ml)))
    values["nll_excess"] = rows[-1]["nll"] - rows[1]["nll"]
    for key in ("nll", "crps", "calibration"):
        values[f"{key}_increases"] = float(np.sum(np.diff([r[key] for r in rows]) > 1e-6))
    return values
