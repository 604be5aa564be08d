"""The candidate models whose scores OptCS chooses among (scikit-learn regressors).

The names of quadriga-std's :data:`quadriga_std.estimators.conformal.REGRESSORS` are built by its
``make_regressor``; the others are cheaper or more varied variants of the same families, so that a
pool of ``K = 8`` candidates as in the OptCS simulations fits on a shared 2-core machine.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from hashlib import sha256
from typing import Any

import numpy as np
from quadriga_std.estimators.conformal import REGRESSORS, make_regressor

from quadriga.errors import ConfigError, suggest

__all__ = ["CANDIDATES", "candidate_predictions", "check_models"]

_EXTRA = {
    "lasso": ("linear_model", "Lasso", {"alpha": 0.1}),
    "random-forest-shallow": (
        "ensemble",
        "RandomForestRegressor",
        {"n_estimators": 50, "max_depth": 2, "n_jobs": 1},
    ),
    "random-forest-small": (
        "ensemble",
        "RandomForestRegressor",
        {"n_estimators": 50, "max_depth": 5, "n_jobs": 1},
    ),
    "gradient-boosting-small": (
        "ensemble",
        "GradientBoostingRegressor",
        {"n_estimators": 20, "max_depth": 3},
    ),
    "knn-5": ("neighbors", "KNeighborsRegressor", {"n_neighbors": 5}),
    "knn-50": ("neighbors", "KNeighborsRegressor", {"n_neighbors": 50}),
}

#: every candidate name: quadriga-std's regressors, then the variants above
CANDIDATES: tuple[str, ...] = (*REGRESSORS, *_EXTRA)


def check_models(inst: Any, attribute: Any, value: Any) -> None:
    """attrs validator: a non-empty list of distinct names from :data:`CANDIDATES`.

    Raises:
        ConfigError: naming the parameter, with close matches for an unknown name.
    """
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise ConfigError(
            f"'{attribute.name}' must be a non-empty list of candidate models, e.g. "
            f"['ridge', 'random-forest-small', 'gradient-boosting-small'] (got {value!r}).",
            key=attribute.name,
        )
    for name in value:
        if name not in CANDIDATES:
            raise ConfigError(
                f"unknown candidate model '{name}' in '{attribute.name}'; choose from "
                f"{', '.join(CANDIDATES)}.{suggest(str(name), CANDIDATES)}",
                key=attribute.name,
            )
    if len(set(value)) != len(value):
        raise ConfigError(f"'{attribute.name}' lists a model twice: {list(value)}.", key=attribute.name)


def _make(name: str, seed: int) -> Any:
    if name in REGRESSORS:
        return make_regressor(name, seed)
    import sklearn.ensemble
    import sklearn.linear_model
    import sklearn.neighbors

    module, cls, kwargs = _EXTRA[name]
    klass = getattr(getattr(sklearn, module), cls)
    if "random_state" in klass().get_params():
        kwargs = {**kwargs, "random_state": seed}
    return klass(**kwargs)


_CACHE: OrderedDict[str, tuple[np.ndarray, ...]] = OrderedDict()
#: predictions kept: 500 replicates x 3 arms share 500 entries of ``K x (n + m)`` floats (~10 kB each)
_CACHE_SIZE = 2048


def candidate_predictions(
    names: Sequence[str], X: np.ndarray, y: np.ndarray, seed: int, evaluate: Sequence[np.ndarray]
) -> tuple[np.ndarray, ...]:
    """Fit each candidate on ``(X, y)``, predict on each array of ``evaluate``; reused for equal inputs.

    Arms of one replicate share their seed (common random numbers) and their splits, so the OptCS,
    split and naive stages of a replicate (and every claim run on the same replicates) need the same
    ``K`` fits: the predictions are kept, keyed by a SHA-256 of the names, the seed and the bytes of
    ``X``, ``y`` and the arrays of ``evaluate`` (the last :data:`_CACHE_SIZE` inputs). Fitting is
    deterministic given the seed and the data, so reusing the predictions changes no number.

    Args:
        names: candidate names from :data:`CANDIDATES`.
        X: ``ndarray[n, p]`` training covariates; y: ``ndarray[n]`` training labels.
        seed: ``random_state`` of the randomised models.
        evaluate: arrays ``ndarray[n_i, p]`` to predict on (e.g. calibration and test covariates).

    Returns:
        one read-only ``ndarray[K, n_i]`` (float64) per array of ``evaluate``; row ``k`` is candidate
        ``names[k]``.
    """
    X = np.ascontiguousarray(X, np.float64)
    y = np.ascontiguousarray(y, np.float64)
    evaluate = [np.ascontiguousarray(E, np.float64) for E in evaluate]
    h = sha256(repr((tuple(names), int(seed), X.shape, [E.shape for E in evaluate])).encode())
    for a in (X, y, *evaluate):
        h.update(a.tobytes())
    key = h.hexdigest()
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    models = [_make(name, seed).fit(X, y) for name in names]
    out = tuple(np.stack([m.predict(E) for m in models]).astype(np.float64) for E in evaluate)
    for a in out:
        a.flags.writeable = False
    _CACHE[key] = out
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return out
