"""Split conformal regression intervals, plain and weighted for covariate shift.

Both estimators read a ``Dataset`` with the splits ``"train"`` (fits the point predictor
``mu``), ``"calibration"`` (labeled source data for the scores ``S = |y - mu(x)|``) and, for the
evaluation width, ``evaluation_split`` (``"test"``, or ``"target_test"`` under shift). The
weighted estimator with a classifier ratio also reads the covariates of ``"target_calibration"``
(unlabeled target data). They return ``Estimate(value = mean interval width on
evaluation_split (units of y), predict = X -> (low, high))``; an evaluator scores ``predict`` on
any split (``interval-coverage``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Estimate
from quadriga.errors import ConfigError, suggest
from quadriga.interfaces import Dataset, Estimator
from quadriga.params import param
from quadriga.seeding import int_seed
from quadriga.validators import one_of

__all__ = [
    "REGRESSORS",
    "SplitConformal",
    "WeightedConformal",
    "check_alpha",
    "classifier_likelihood_ratio",
    "conformal_rank",
    "make_regressor",
    "weighted_conformal_quantile",
]

REGRESSORS = ("linear", "ridge", "random-forest", "gradient-boosting", "knn")


def _check_regressor(inst: Any, attribute: Any, value: str) -> None:
    if value not in REGRESSORS:
        raise ConfigError(
            f"unknown regressor '{value}'; choose one of {', '.join(REGRESSORS)}."
            f"{suggest(value, REGRESSORS)}",
            key=attribute.name,
        )


def check_alpha(inst: Any, attribute: Any, value: float) -> None:
    """attrs validator: the miscoverage level must lie in (0, 1)."""
    if not 0.0 < float(value) < 1.0:
        raise ConfigError(
            f"alpha must be in (0, 1) (got {value!r}); alpha = 0.1 asks for 90% coverage.", key="alpha"
        )


def make_regressor(name: str, seed: int) -> Any:
    """A fresh scikit-learn regressor from the allow-list :data:`REGRESSORS`.

    Args:
        name: ``linear``, ``ridge`` (alpha = 1), ``random-forest`` (200 trees, min leaf 5),
            ``gradient-boosting`` (default sklearn settings) or ``knn`` (k = 10).
        seed: ``random_state`` for the randomised ones.

    Raises:
        ConfigError: unknown name.
    """
    from sklearn import ensemble, linear_model, neighbors

    if name == "linear":
        return linear_model.LinearRegression()
    if name == "ridge":
        return linear_model.Ridge(alpha=1.0)
    if name == "random-forest":
        return ensemble.RandomForestRegressor(
            n_estimators=200, min_samples_leaf=5, random_state=seed, n_jobs=1
        )
    if name == "gradient-boosting":
        return ensemble.GradientBoostingRegressor(random_state=seed)
    if name == "knn":
        return neighbors.KNeighborsRegressor(n_neighbors=10)
    raise ConfigError(f"unknown regressor '{name}'.{suggest(name, REGRESSORS)}", key="regressor")


def conformal_rank(n: int, alpha: float) -> int:
    """Rank ``k = ceil((1 - alpha)(n + 1))`` of the split-conformal quantile among ``n`` scores.

    Raises:
        ConfigError: when ``k > n``, i.e. fewer than ``1/alpha - 1`` calibration points, for which
            the only valid interval is infinite.

    Source: Lei, G'Sell, Rinaldo, Tibshirani, Wasserman 2018, JASA, Algorithm 2 / Theorem 2.2.
    """
    k = math.ceil((1.0 - alpha) * (n + 1) - 1e-9)
    if k > n:
        need = math.ceil(1.0 / alpha - 1.0 - 1e-9)
        raise ConfigError(
            f"{n} calibration points are too few for alpha = {alpha}: split conformal "
            f"needs at least {need}; enlarge the calibration split or raise alpha.",
            key="alpha",
        )
    return k


def weighted_conformal_quantile(
    scores: np.ndarray, w_cal: np.ndarray, w_test: np.ndarray, alpha: float
) -> np.ndarray:
    """Weighted conformal thresholds, one per test point.

    ``q(x) = Quantile_{1-alpha}(sum_i p_i(x) delta_{S_i} + p_{n+1}(x) delta_{+inf})`` with
    ``p_i(x) = w(X_i) / (sum_j w(X_j) + w(x))`` and ``p_{n+1}(x) = w(x) / (...)``.

    Args:
        scores: ``ndarray[n]`` calibration scores.
        w_cal: ``ndarray[n]`` likelihood ratios at the calibration covariates (>= 0).
        w_test: ``ndarray[m]`` likelihood ratios at the test covariates (>= 0).
        alpha: miscoverage in (0, 1).

    Returns:
        ``ndarray[m]`` thresholds (units of the score); ``inf`` where the test point's own
        weight keeps the mass below ``1 - alpha``.

    Source: Tibshirani, Barber, Candès, Ramdas 2019, NeurIPS, Corollary 1 (eq. 8).
    """
    order = np.argsort(scores, kind="stable")
    s, w = np.asarray(scores, np.float64)[order], np.asarray(w_cal, np.float64)[order]
    cum = np.cumsum(w)
    need = (1.0 - alpha) * (cum[-1] + np.asarray(w_test, np.float64))
    k = np.searchsorted(cum, need * (1 - 1e-12), side="left")
    out = np.full(k.shape, np.inf)
    ok = k < s.size
    out[ok] = s[k[ok]]
    return out


def classifier_likelihood_ratio(
    X_source: np.ndarray, X_target: np.ndarray, seed: int, max_ratio: float | None = None
) -> Callable[[np.ndarray], np.ndarray]:
    """Estimate ``dQ/dP`` with a logistic-regression domain classifier.

    Fits ``p(x) = P(target | x)`` on source (label 0) and target (label 1) covariates and returns
    ``w(x) = p/(1-p) * n_s/n_t``, clipped to ``max_ratio`` when given.

    Args:
        X_source: ``ndarray[n_s, p]``; X_target: ``ndarray[n_t, p]``.
        seed: ``random_state`` of the solver.

    Returns:
        a callable ``ndarray[n, p] -> ndarray[n]``.

    Source: Tibshirani et al. 2019, sec. 2.2 (classifier-based density-ratio estimate).
    """
    from sklearn.linear_model import LogisticRegression

    Z = np.vstack([X_source, X_target])
    lab = np.r_[np.zeros(len(X_source)), np.ones(len(X_target))]
    clf = LogisticRegression(max_iter=2000, random_state=seed).fit(Z, lab)
    factor = len(X_source) / len(X_target)

    def ratio(X: np.ndarray) -> np.ndarray:
        logit = clf.decision_function(np.asarray(X, np.float64))
        w = np.exp(np.clip(logit, -50, 50)) * factor
        return np.minimum(w, max_ratio) if max_ratio is not None else w

    return ratio


def _check_data(data: Any, needs: tuple[str, ...]) -> None:
    if not hasattr(data, "split"):
        raise ConfigError(f"'data' must be a Dataset (got {type(data).__name__}).", key="data")
    for name in needs:
        try:
            data.split(name)
        except KeyError as exc:
            raise ConfigError(f"the dataset has no '{name}' split ({exc}).", key="data") from exc


@attrs.define(kw_only=True)
class SplitConformal(Estimator):
    """Split conformal regression intervals ``mu(x) +- q`` with absolute-residual scores.

    ``mu`` is fitted on ``"train"``; ``q`` is the ``k = ceil((1-alpha)(n+1))``-th smallest score
    ``|y - mu(x)|`` on the ``n`` points of ``"calibration"``. Under exchangeability coverage is
    in ``[1 - alpha, 1 - alpha + 1/(n+1))``.

    Returns ``Estimate(value = mean width on evaluation_split, info = {alpha, quantile,
    n_calibration, ...}, predict = X[m, p] -> (low[m], high[m]))`` (units of y).

    Shapes: reads ``split(name) -> (X: ndarray[n, p], y: ndarray[n])``; ``value`` is a float
    (the width 2q is the same for every point); ``predict: ndarray[m, p] -> (ndarray[m], ndarray[m])``.
    Units: ``value`` and ``info["quantile"]`` in units of y; ``alpha`` is a fraction;
    ``n_calibration``, ``n_evaluation`` are counts.

    Raises:
        ConfigError: alpha outside (0, 1) or unknown regressor (when built); a ``data`` input that is
            not a Dataset, missing splits, or fewer than 1/alpha - 1 calibration points (before fitting).

    Source: Lei, G'Sell, Rinaldo, Tibshirani & Wasserman 2018, "Distribution-free predictive
    inference for regression", JASA, sec. 2.2 (split conformal, Algorithm 2; coverage Theorem 2.2);
    Papadopoulos et al. 2002 (inductive conformal prediction).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"data": (Dataset,)}

    alpha: float = param(0.1, doc="miscoverage level in (0, 1)", validator=check_alpha)
    regressor: str = param(
        "ridge", doc=f"point predictor: one of {', '.join(REGRESSORS)}", validator=_check_regressor
    )
    evaluation_split: str = param("test", doc="split on which the reported mean width is computed")

    def estimate(self, data: Any, *, generator: Any) -> Estimate:
        """Fit, calibrate, and return the interval predictor (see the class docstring)."""
        _check_data(data, ("train", "calibration", self.evaluation_split))
        X_cal, y_cal = data.split("calibration")
        k = conformal_rank(len(y_cal), self.alpha)
        X_tr, y_tr = data.split("train")
        model = make_regressor(self.regressor, int_seed(generator)).fit(X_tr, y_tr)
        scores = np.sort(np.abs(y_cal - model.predict(X_cal)))
        q = float(scores[k - 1])

        def predict(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            mu = model.predict(np.asarray(X, np.float64))
            return mu - q, mu + q

        X_ev, _ = data.split(self.evaluation_split)
        return Estimate(
            value=2.0 * q,
            predict=predict,
            info={
                "alpha": self.alpha,
                "quantile": q,
                "n_calibration": len(y_cal),
                "evaluation_split": self.evaluation_split,
                "n_evaluation": len(X_ev),
            },
        )


@attrs.define(kw_only=True)
class WeightedConformal(Estimator):
    """Weighted split conformal intervals under covariate shift.

    Scores ``S_i = |y_i - mu(X_i)|`` on ``"calibration"``; at a test point ``x`` the threshold is
    the weighted ``1 - alpha`` quantile of the scores with weights ``w(X_i)`` plus a point mass
    ``w(x)`` at ``+inf`` (:func:`weighted_conformal_quantile`); the interval is ``mu(x) +- q(x)``.
    The likelihood ratio ``w = dQ/dP`` is

    - ``"given"``: the dataset's exact ``likelihood_ratio(X)`` (e.g. ``sklearn-dataset`` with shift);
    - ``"classifier"``: a logistic-regression classifier between the ``"train"`` covariates (source)
      and the ``"target_calibration"`` covariates (unlabeled target): ``w = p/(1-p) n_s/n_t``.

    Value: mean width (units of y) of the finite intervals on ``evaluation_split``;
    ``info["fraction_infinite"]`` counts the infinite ones (coverage evaluators treat them as covering).

    Shapes: reads ``split(name) -> (X: ndarray[n, p], y: ndarray[n])`` and, for ``"given"``,
    ``data.likelihood_ratio: ndarray[n, p] -> ndarray[n]``; ``value`` is a float;
    ``predict: ndarray[m, p] -> (ndarray[m], ndarray[m])`` (bounds may be -inf/+inf).
    Units: ``value`` in units of y; ``fraction_infinite`` and ``alpha`` are fractions;
    ``calibration_ess`` (Kish effective size of the calibration weights) and ``n_calibration`` are counts.

    Raises:
        ConfigError: alpha outside (0, 1), unknown regressor or ratio (when built); a ``data`` input
            that is not a Dataset, missing splits, a dataset without ``likelihood_ratio`` for
            ``"given"``, or too few calibration points (before fitting).

    Source: Tibshirani, Barber, Candès & Ramdas 2019, "Conformal prediction under covariate shift",
    NeurIPS, Corollary 1 (weighted quantile with a point mass at +inf) and sec. 2.2 (classifier ratio).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"data": (Dataset,)}

    alpha: float = param(0.1, doc="miscoverage level in (0, 1)", validator=check_alpha)
    regressor: str = param(
        "ridge", doc=f"point predictor: one of {', '.join(REGRESSORS)}", validator=_check_regressor
    )
    likelihood_ratio: str = param(
        "given",
        doc="'given' (dataset's exact ratio) or 'classifier'",
        validator=one_of(("given", "classifier")),
    )
    max_ratio: float | None = param(None, doc="clip estimated ratios at this value (classifier only)")
    evaluation_split: str = param("target_test", doc="split on which the reported mean width is computed")

    def estimate(self, data: Any, *, generator: Any) -> Estimate:
        """Fit, calibrate, and return the weighted interval predictor (see the class docstring)."""
        needs = ("train", "calibration", self.evaluation_split)
        if self.likelihood_ratio == "classifier":
            needs += ("target_calibration",)
        _check_data(data, needs)
        if self.likelihood_ratio == "given" and not callable(getattr(data, "likelihood_ratio", None)):
            raise ConfigError(
                f"{type(data).__name__} has no exact likelihood_ratio; use "
                'likelihood_ratio = "classifier" or a dataset with a known shift.',
                key="likelihood_ratio",
            )
        X_cal, y_cal = data.split("calibration")
        conformal_rank(len(y_cal), self.alpha)
        seed = int_seed(generator)
        X_tr, y_tr = data.split("train")
        model = make_regressor(self.regressor, seed).fit(X_tr, y_tr)
        scores = np.abs(y_cal - model.predict(X_cal))
        if self.likelihood_ratio == "given":
            ratio = data.likelihood_ratio
        else:
            ratio = classifier_likelihood_ratio(
                X_tr, data.split("target_calibration")[0], seed, self.max_ratio
            )
        w_cal = ratio(X_cal)

        def predict(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            X = np.asarray(X, np.float64)
            mu = model.predict(X)
            q = weighted_conformal_quantile(scores, w_cal, ratio(X), self.alpha)
            return mu - q, mu + q

        low, high = predict(data.split(self.evaluation_split)[0])
        width = high - low
        finite = np.isfinite(width)
        ess = float(w_cal.sum() ** 2 / np.square(w_cal).sum())
        return Estimate(
            value=float(width[finite].mean()) if finite.any() else float("nan"),
            predict=predict,
            info={
                "alpha": self.alpha,
                "n_calibration": len(y_cal),
                "ratio": self.likelihood_ratio,
                "fraction_infinite": float(1 - finite.mean()),
                "calibration_ess": ess,
                "evaluation_split": self.evaluation_split,
            },
        )
