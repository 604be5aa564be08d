"""Split-conformal prediction regions for a multivariate response: box and ellipsoid baselines.

A region is a :class:`ScoreRegion`: ``C(x) = {y : score(x, y) <= threshold}``, with a bounding
box of ``C(x)`` (for Monte-Carlo volume) and, where known, its exact volume. The threshold is the
split-conformal quantile of the calibration scores
(:func:`~quadriga_std.estimators.conformal.conformal_rank`), so under exchangeability
``P(Y in C(X)) >= 1 - alpha`` for any score. The estimators read a ``Dataset`` whose splits give
``(X: ndarray[n, p], Y: ndarray[n, q])`` with ``q >= 1`` (``"train"`` fits the mean regressor,
``"calibration"`` the threshold).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Estimate
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Estimator
from quadriga.params import param
from quadriga.seeding import int_seed
from quadriga_std.estimators.conformal import REGRESSORS, check_alpha, conformal_rank, make_regressor

__all__ = [
    "BoxConformal",
    "EllipsoidConformal",
    "ScoreRegion",
    "ball_volume",
    "conformal_threshold",
    "multioutput_regressor",
]


def ball_volume(dim: int, radius: float | np.ndarray = 1.0) -> Any:
    """Volume of the Euclidean ball of ``radius`` in ``R^dim``: ``pi^(d/2) / Gamma(d/2 + 1) r^d``."""
    return math.pi ** (dim / 2) / math.gamma(dim / 2 + 1) * np.asarray(radius, np.float64) ** dim


def conformal_threshold(scores: np.ndarray, alpha: float) -> float:
    """The ``ceil((1 - alpha)(n + 1))``-th smallest of ``n`` calibration scores (split conformal).

    Raises:
        ConfigError: fewer than ``1/alpha - 1`` scores (:func:`conformal_rank`).
    """
    k = conformal_rank(len(scores), alpha)
    return float(np.sort(np.asarray(scores, np.float64))[k - 1])


@attrs.frozen
class ScoreRegion:
    """The prediction region ``C(x) = {y : score(x, y) <= threshold}``.

    Attributes:
        score: ``(X[m, p], Y[m, q]) -> ndarray[m]`` nonconformity scores.
        threshold: the calibrated threshold (units of the score).
        box: ``(X[m, p], threshold) -> (low[m, q], high[m, q])``: a box containing ``C(x)``
            (for Monte-Carlo volume; a region may be truncated to it, and says so in its docs).
        volume: ``(X[m, p], threshold) -> ndarray[m]`` exact volumes (units of y^q), or ``None``.
        dim: ``q``, the dimension of y.
    """

    score: Callable[[np.ndarray, np.ndarray], np.ndarray]
    threshold: float
    box: Callable[[np.ndarray, float], tuple[np.ndarray, np.ndarray]]
    dim: int
    volume: Callable[[np.ndarray, float], np.ndarray] | None = None

    def contains(self, X: np.ndarray, Y: np.ndarray, threshold: float | None = None) -> np.ndarray:
        """``ndarray[m] bool``: whether ``Y[i]`` lies in ``C(X[i])`` (at ``threshold`` if given)."""
        t = self.threshold if threshold is None else threshold
        return np.asarray(self.score(np.asarray(X, np.float64), np.asarray(Y, np.float64))) <= t

    def __call__(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """:meth:`contains` at the calibrated threshold."""
        return self.contains(X, Y)


def multioutput_regressor(name: str, seed: int) -> Any:
    """A scikit-learn regressor of :data:`REGRESSORS` that fits ``Y[n, q]`` (gradient boosting wrapped).

    Raises:
        ConfigError: unknown name.
    """
    from sklearn.multioutput import MultiOutputRegressor

    model = make_regressor(name, seed)
    return MultiOutputRegressor(model) if name == "gradient-boosting" else model


def _as_2d(Y: np.ndarray) -> np.ndarray:
    Y = np.asarray(Y, np.float64)
    return Y[:, None] if Y.ndim == 1 else Y


def _splits(data: Any, evaluation_split: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    if not hasattr(data, "split"):
        raise ConfigError(f"'data' must be a Dataset (got {type(data).__name__}).", key="data")
    out = {}
    for name in ("train", "calibration", evaluation_split):
        try:
            X, Y = data.split(name)
        except KeyError as exc:
            raise ConfigError(f"the dataset has no '{name}' split ({exc}).", key="data") from exc
        out[name] = (np.asarray(X, np.float64), _as_2d(Y))
    return out


def _check_regressor(inst: Any, attribute: Any, value: str) -> None:
    if value not in REGRESSORS:
        make_regressor(value, 0)  # raises the ConfigError with suggestions


@attrs.define(kw_only=True)
class _MeanRegion(Estimator):
    """The parameters of a split-conformal region around a fitted mean, and the fit itself.

    Subclasses define ``estimate``: a score from the residuals of :meth:`_fit_mean`'s ``mu``.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"data": (Dataset,)}

    alpha: float = param(0.1, doc="miscoverage level in (0, 1)", validator=check_alpha)
    regressor: str = param(
        "ridge", doc=f"mean regressor: one of {', '.join(REGRESSORS)}", validator=_check_regressor
    )
    evaluation_split: str = param("test", doc="split on which the reported mean volume is computed")

    def _fit_mean(
        self, data: Any, generator: Any
    ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], Callable[[np.ndarray], np.ndarray]]:
        """The splits ``{name: (X[n, p], Y[n, q])}`` and ``mu: X[m, p] -> ndarray[m, q]`` fitted on "train".

        Raises:
            ConfigError: ``data`` not a Dataset, a missing split, or too few calibration points
                (checked before fitting).
        """
        sp = _splits(data, self.evaluation_split)
        conformal_rank(len(sp["calibration"][1]), self.alpha)
        X_tr, Y_tr = sp["train"]
        model = multioutput_regressor(self.regressor, int_seed(generator)).fit(X_tr, Y_tr)

        def mean(X: np.ndarray) -> np.ndarray:
            return _as_2d(model.predict(X))

        return sp, mean


@attrs.define(kw_only=True)
class BoxConformal(_MeanRegion):
    """Conformalized box: ``mu(x) +- q s`` with the score ``max_j |y_j - mu_j(x)| / s_j``.

    ``mu`` (multi-output regressor) is fitted on ``"train"``; ``s_j`` is the standard deviation of
    coordinate ``j``'s training residuals; ``q`` is the split-conformal quantile of the scores on
    ``"calibration"``. One score over all coordinates gives coverage ``>= 1 - alpha`` without
    Bonferroni's conservatism (a Bonferroni box has coverage ``>= 1 - alpha`` too, but above it).

    Returns ``Estimate(value = mean volume on evaluation_split (units of y^q), predict =
    ScoreRegion, info = {alpha, threshold, n_calibration, scales})``; the exact volume is
    ``prod_j 2 q s_j``, the same at every x.

    Shapes: ``split(name) -> (X[n, p], Y[n, q])``; ``predict`` is a ``ScoreRegion`` whose
    ``score(X[m, p], Y[m, q]) -> ndarray[m]`` and ``box(X[m, p], t) -> (low[m, q], high[m, q])``.

    Raises:
        ConfigError: alpha outside (0, 1), unknown regressor, missing splits, too few calibration points.

    Source: Feldman, Bates & Romano 2023, "Calibrated multiple-output quantile regression with
    representation learning", JMLR, sec. 6 (conformalized box baseline); split conformal: Lei et
    al. 2018, JASA, Algorithm 2.
    """

    def estimate(self, data: Any, *, generator: Any) -> Estimate:
        """Fit, calibrate and return the box region (see the class docstring)."""
        sp, mean = self._fit_mean(data, generator)
        (X_cal, Y_cal), (X_tr, Y_tr) = sp["calibration"], sp["train"]
        scales = np.maximum((Y_tr - mean(X_tr)).std(axis=0), 1e-12)

        def score(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
            return np.max(np.abs(_as_2d(Y) - mean(X)) / scales, axis=1)

        def box(X: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
            mu = mean(X)
            return mu - t * scales, mu + t * scales

        def volume(X: np.ndarray, t: float) -> np.ndarray:
            return np.full(len(X), float(np.prod(2 * t * scales)))

        q = conformal_threshold(score(X_cal, Y_cal), self.alpha)
        region = ScoreRegion(score=score, threshold=q, box=box, volume=volume, dim=Y_tr.shape[1])
        X_ev = sp[self.evaluation_split][0]
        return Estimate(
            value=float(volume(X_ev, q).mean()),
            predict=region,
            info={
                "alpha": self.alpha,
                "threshold": q,
                "n_calibration": len(Y_cal),
                "scales": scales.tolist(),
            },
        )


@attrs.define(kw_only=True)
class EllipsoidConformal(_MeanRegion):
    """Conformalized ellipsoid: ``{y : (y - mu(x))' S^-1 (y - mu(x)) <= q}`` (Mahalanobis score).

    ``mu`` is fitted on ``"train"``, ``S`` is the covariance of its training residuals, ``q`` the
    split-conformal quantile of the squared Mahalanobis scores on ``"calibration"``. Exact volume
    ``V_q(1) q^(q_dim/2) sqrt(det S)`` with ``V_d(1) = pi^(d/2) / Gamma(d/2 + 1)`` (same at every x).

    Returns ``Estimate(value = volume (units of y^q), predict = ScoreRegion, info = {alpha,
    threshold, n_calibration})``.

    Shapes: ``split(name) -> (X[n, p], Y[n, q])``; ``predict`` is a ``ScoreRegion`` whose
    ``score(X[m, p], Y[m, q]) -> ndarray[m]`` and ``box(X[m, p], t) -> (low[m, q], high[m, q])``.
    Units: ``threshold`` is a squared Mahalanobis distance (dimensionless); volume in units of y^q.

    Raises:
        ConfigError: as :class:`BoxConformal`.

    Source: Johnstone & Cox 2021 ("Conformal uncertainty sets for robust optimization", COPA) and
    Feldman, Bates & Romano 2023, JMLR, sec. 6 (ellipsoid baseline); Lei et al. 2018 (split conformal).
    """

    def estimate(self, data: Any, *, generator: Any) -> Estimate:
        """Fit, calibrate and return the ellipsoid region (see the class docstring)."""
        sp, mean = self._fit_mean(data, generator)
        (X_cal, Y_cal), (X_tr, Y_tr) = sp["calibration"], sp["train"]
        d = Y_tr.shape[1]
        cov = np.atleast_2d(np.cov(Y_tr - mean(X_tr), rowvar=False)) + 1e-12 * np.eye(d)
        prec = np.linalg.inv(cov)
        sd = np.sqrt(np.diag(cov))
        det = float(np.linalg.det(cov))

        def score(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
            r = _as_2d(Y) - mean(X)
            return np.einsum("ni,ij,nj->n", r, prec, r)

        def box(X: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
            mu = mean(X)
            half = np.sqrt(max(t, 0.0)) * sd
            return mu - half, mu + half

        def volume(X: np.ndarray, t: float) -> np.ndarray:
            return np.full(len(X), float(ball_volume(d, math.sqrt(max(t, 0.0))) * math.sqrt(det)))

        q = conformal_threshold(score(X_cal, Y_cal), self.alpha)
        region = ScoreRegion(score=score, threshold=q, box=box, volume=volume, dim=d)
        X_ev = sp[self.evaluation_split][0]
        return Estimate(
            value=float(volume(X_ev, q).mean()),
            predict=region,
            info={"alpha": self.alpha, "threshold": q, "n_calibration": len(Y_cal)},
        )
