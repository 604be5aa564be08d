"""The ``conditional-conformal`` baseline: MAPIE's conditional conformal regressor with a linear feature map.

Gibbs, Cherian and Candès fit an augmented quantile regression over a finite-dimensional
function class ``F = {theta . phi(x)}`` with the test point's score left free; the resulting sets
have coverage ``>= 1 - alpha`` under every covariate shift whose likelihood ratio lies in ``F``
(and, non-randomized, at most ``1 - alpha + dim(phi)/(n + 1)`` above it). With
``phi(x) = [1, x]`` this is LR-QR's threshold class with ``lambda = 0`` and the test point
included in the fit. MAPIE solves one linear program per test point, so it is slow: about
0.1 s per point for ``n = 1000`` calibration points and ``dim(phi) = 51``.

Source: Gibbs, Cherian, Candès 2023, "Conformal prediction with conditional guarantees",
arXiv 2305.12616, sec. 3 (Theorem 2, eq. 3.2); implementation ``mapie`` >= 1.5,
``mapie.conditional_conformal_prediction.ConditionalSplitConformalRegressor``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np
from quadriga_std.estimators.conformal import REGRESSORS, check_alpha, make_regressor

from quadriga.artifacts import Estimate
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Estimator
from quadriga.params import param
from quadriga.seeding import numpy_rng
from quadriga.validators import one_of, positive_int

__all__ = ["ConditionalConformal", "linear_feature_map", "load_mapie"]


def load_mapie() -> Any:
    """Return MAPIE's ``ConditionalSplitConformalRegressor`` class.

    Raises:
        ConfigError: ``mapie`` (with its ``conditional`` extra, which brings ``cvxpy``) is not
            installed; the message gives the install command.
    """
    try:
        import cvxpy  # noqa: F401  (MAPIE imports it lazily; fail here, before any fitting)
        from mapie.conditional_conformal_prediction import ConditionalSplitConformalRegressor
    except ImportError as exc:
        raise ConfigError(
            f"conditional-conformal needs MAPIE >= 1.5 with cvxpy ({exc}); install it with "
            "`pip install 'quadriga-lr-qr[mapie]'` (i.e. 'mapie[conditional]').",
            key="use",
        ) from exc
    return ConditionalSplitConformalRegressor


def linear_feature_map(X: np.ndarray) -> np.ndarray:
    """``phi(x) = [1, x]``: ``ndarray[n, p] -> ndarray[n, p + 1]`` (the shift class, also LR-QR's)."""
    X = np.asarray(X, np.float64)
    return np.concatenate([np.ones((X.shape[0], 1)), X], axis=1)


@attrs.define(kw_only=True)
class ConditionalConformal(Estimator):
    """Conditional conformal intervals ``mu(x) +- q(x)`` valid over shifts in ``span{1, x}`` (MAPIE).

    Inputs (``data``: a Dataset): ``"train"`` fits ``mu`` (scikit-learn ``regressor``);
    ``"calibration"`` gives the labeled source scores ``|y - mu(x)|``. The target's unlabeled
    covariates are not used: the method is valid for every shift in the linear class at once.

    Returns ``Estimate(value = mean width over the first num_evaluation_points points of
    evaluation_split (units of y), predict = X[m, p] -> (low[m], high[m]))``; each call of
    ``predict`` solves one linear program per row (about 0.1 s each at n = 1000, p = 50).

    Shapes:
        Splits are ``X: ndarray[n, p]``, ``y: ndarray[n]``; ``predict`` maps ``ndarray[m, p]`` to two
        ``ndarray[m]``.

    Units:
        Scores and widths are in the units of ``y``; ``alpha`` is a probability.

    Raises:
        ConfigError: alpha outside (0, 1); ``mapie``/``cvxpy`` missing (with the install
            command); missing splits; fewer calibration points than features + 1 -- all before fitting.

    Source: Gibbs, Cherian, Candès 2023, arXiv 2305.12616, sec. 3; MAPIE 1.6
    ``ConditionalSplitConformalRegressor`` (exact, non-randomized cutoff).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"data": (Dataset,)}

    alpha: float = param(0.1, doc="miscoverage level in (0, 1)", validator=check_alpha)
    regressor: str = param(
        "ridge",
        doc=f"point predictor: one of {', '.join(REGRESSORS)}",
        validator=one_of(REGRESSORS),
    )
    evaluation_split: str = param("target_test", doc="split on which the reported mean width is computed")
    num_evaluation_points: int = param(
        50,
        doc="rows of evaluation_split used for the reported width (one linear program each)",
        validator=positive_int,
    )

    def estimate(self, data: Any, *, generator: Any) -> Estimate:
        """Fit ``mu``, conformalize with MAPIE and return the interval predictor (see the class docstring)."""
        cls = load_mapie()
        try:
            X_tr, y_tr = data.split("train")
            X1, y1 = data.split("calibration")
            X_ev, _ = data.split(self.evaluation_split)
        except (KeyError, AttributeError) as exc:
            raise ConfigError(
                f"conditional-conformal needs a Dataset with 'train', 'calibration' and "
                f"'{self.evaluation_split}' splits ({exc}).",
                key="data",
            ) from exc
        X1 = np.asarray(X1, np.float64)
        if len(y1) <= X1.shape[1] + 1:
            raise ConfigError(
                f"{len(y1)} calibration points cannot fit a quantile regression on "
                f"{X1.shape[1] + 1} features; enlarge the calibration split.",
                key="data",
            )
        rng = numpy_rng(generator)
        model = make_regressor(self.regressor, int(rng.integers(2**31 - 1))).fit(X_tr, y_tr)
        cc = cls(
            feature_map=linear_feature_map,
            estimator=model,
            confidence_level=1.0 - self.alpha,
            prefit=True,
            randomize=False,
            exact=True,
        )
        cc.conformalize(X1, np.asarray(y1, np.float64))

        def predict(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            _, iv = cc.predict_interval(np.asarray(X, np.float64))
            return iv[:, 0, 0], iv[:, 1, 0]

        low, high = predict(np.asarray(X_ev)[: self.num_evaluation_points])
        return Estimate(
            value=float(np.mean(high - low)),
            predict=predict,
            info={
                "alpha": self.alpha,
                "n_calibration": len(y1),
                "features": X1.shape[1] + 1,
                "evaluation_split": self.evaluation_split,
                "n_evaluation": int(min(len(X_ev), self.num_evaluation_points)),
            },
        )
