"""scikit-learn's bundled datasets with reproducible splits and an exact covariate shift.

Splits without shift (``shift = false``): a random permutation drawn in ``prepare`` cuts the
data into disjoint ``"train"``, ``"calibration"`` and ``"test"`` parts with the given fractions.

With ``shift = true``: ``"train"`` is still a disjoint random part; the rest is the
*held-out pool* ``{x_1..x_N}``, whose empirical law is the source law ``P``. Then

- ``"calibration"`` and ``"test"``: i.i.d. uniform draws (with replacement) from the pool (law ``P``);
- ``"target_calibration"`` and ``"target_test"``: i.i.d. draws from the pool with probabilities
  proportional to ``exp(lambda * x_j)`` (law ``Q``, the exponential tilt of ``P`` on feature ``j``),
  of the same sizes as ``"calibration"`` and ``"test"``. Methods may use only the covariates of
  ``"target_calibration"`` (unlabeled target data); ``"target_test"`` is for evaluation.

So the likelihood ratio is known exactly: ``dQ/dP(x) = exp(lambda x_j) / mean_pool(exp(lambda x_j))``
(:meth:`SklearnDataset.likelihood_ratio`), and ``lambda = 0`` gives ``Q = P``.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from quadriga.errors import ConfigError, suggest
from quadriga.interfaces import Dataset
from quadriga.params import param
from quadriga.seeding import numpy_rng

__all__ = ["DATASETS", "SklearnDataset", "tilt_log_ratio", "tilted_resample"]

DATASETS = {
    "digits": "load_digits",
    "diabetes": "load_diabetes",
    "breast_cancer": "load_breast_cancer",
    "wine": "load_wine",
    "iris": "load_iris",
}


def _check_name(inst: Any, attribute: Any, value: str) -> None:
    if value not in DATASETS:
        raise ConfigError(
            f"unknown dataset '{value}'; choose one of {', '.join(DATASETS)}.{suggest(value, DATASETS)}",
            key="name",
        )


def _check_fraction(inst: Any, attribute: Any, value: float) -> None:
    if not 0.0 < value < 1.0:
        raise ConfigError(
            f"'{attribute.name}' must be a fraction in (0, 1) (got {value!r}).", key=attribute.name
        )


def tilt_log_ratio(feature: np.ndarray, strength: float, pool_feature: np.ndarray) -> np.ndarray:
    """Log likelihood ratio of the exponential tilt: ``log dQ/dP`` at given feature values.

    Args:
        feature: ``ndarray[n]`` values of the tilted feature where the ratio is wanted.
        strength: ``lambda`` (inverse units of the feature).
        pool_feature: ``ndarray[N]`` values over the pool that defines ``P`` (its empirical law).

    Returns:
        ``ndarray[n]``: ``lambda x - log mean_pool exp(lambda x_pool)`` (nats).

    Source: exponential tilting (Esscher transform); Tibshirani et al. 2019, sec. 2.
    """
    z = strength * np.asarray(pool_feature, dtype=np.float64)
    log_norm = np.logaddexp.reduce(z) - np.log(z.size)
    return strength * np.asarray(feature, dtype=np.float64) - log_norm


def tilted_resample(
    pool_feature: np.ndarray, strength: float, size: int, rng: np.random.Generator
) -> np.ndarray:
    """Indices of ``size`` i.i.d. draws from the pool with probabilities ``propto exp(lambda x_j)``.

    Args:
        pool_feature: ``ndarray[N]`` feature values of the pool.
        strength: ``lambda``; 0 gives uniform draws.
        size: number of draws.
        rng: ``numpy.random.Generator``.

    Returns:
        ``ndarray[size]`` of int indices into the pool. For a pool from ``N(m, s^2)`` the drawn
        values have mean ``m + lambda s^2`` (the Gaussian tilt) as ``N`` grows.
    """
    logp = tilt_log_ratio(pool_feature, strength, pool_feature)
    prob = np.exp(logp - np.logaddexp.reduce(logp))
    return rng.choice(prob.size, size=int(size), replace=True, p=prob / prob.sum())


@attrs.define(kw_only=True)
class SklearnDataset(Dataset):
    """A scikit-learn bundled dataset with named splits, optionally covariate-shifted.

    Splits (``split(name) -> (X: ndarray[n, p] float64, y: ndarray[n])``): ``"train"``,
    ``"calibration"``, ``"test"``, and with ``shift = true`` also ``"target_calibration"`` and
    ``"target_test"`` (see the module docstring for how each is drawn). With ``standardize``
    every feature is z-scored with the whole dataset's mean and standard deviation (units: standard
    deviations); ``y`` is left in its own units (a class index for classification sets).

    Raises:
        ConfigError: unknown ``name`` (close matches suggested), fractions that sum to 1 or more,
            an unknown ``shift_feature``, or ``split`` of a target split without ``shift``.

    Source: scikit-learn ``sklearn.datasets``; shift design after Tibshirani, Barber, Candès,
    Ramdas 2019, "Conformal prediction under covariate shift", sec. 2.2 (exponential tilting).
    """

    name: str = param("diabetes", doc=f"one of {', '.join(DATASETS)}", validator=_check_name)
    standardize: bool = param(True, doc="z-score every feature (whole-dataset mean and std)")
    train: float = param(0.5, doc="fraction of rows in the train split", validator=_check_fraction)
    calibration: float = param(
        0.25, doc="calibration size as a fraction of all rows", validator=_check_fraction
    )
    test: float = param(0.25, doc="test size as a fraction of all rows", validator=_check_fraction)
    shift: bool = param(False, doc="add target splits drawn by exponential tilting of the held-out pool")
    shift_feature: Any = param(
        2, toml_type="int | str", doc="tilted feature: column index or feature name (diabetes: 2 = 'bmi')"
    )
    shift_strength: float = param(1.0, doc="tilt lambda (per feature unit; per std when standardized)")

    _X: Any = attrs.field(default=None, init=False, repr=False)
    _y: Any = attrs.field(default=None, init=False, repr=False)
    _feature_names: Any = attrs.field(default=None, init=False, repr=False)
    _splits: dict = attrs.field(factory=dict, init=False, repr=False)
    _pool_feature: Any = attrs.field(default=None, init=False, repr=False)
    _column: int = attrs.field(default=-1, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        total = self.train + self.calibration + self.test
        if not self.shift and total > 1.0 + 1e-12:
            raise ConfigError(
                f"train + calibration + test = {total:.3g} exceeds 1; lower the fractions.", key="train"
            )
        if self.shift and self.train >= 1.0:
            raise ConfigError("with shift, 'train' must leave a held-out pool (train < 1).", key="train")

    def _load(self) -> None:
        import sklearn.datasets as skd

        bunch = getattr(skd, DATASETS[self.name])()
        X = np.asarray(bunch.data, dtype=np.float64)
        if self.standardize:
            sd = X.std(axis=0)
            X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        self._X, self._y = X, np.asarray(bunch.target)
        self._feature_names = [str(f) for f in getattr(bunch, "feature_names", range(X.shape[1]))]
        self._column = self._resolve_feature()

    def _resolve_feature(self) -> int:
        f, p = self.shift_feature, self._X.shape[1]
        if isinstance(f, str) and not f.lstrip("-").isdigit():
            if f not in self._feature_names:
                raise ConfigError(
                    f"unknown shift_feature '{f}' for {self.name}; features are "
                    f"{', '.join(self._feature_names[:12])}{' ...' if p > 12 else ''}."
                    f"{suggest(f, self._feature_names)}",
                    key="shift_feature",
                )
            return self._feature_names.index(f)
        j = int(f)
        if not -p <= j < p:
            raise ConfigError(
                f"shift_feature {j} is out of range for {self.name}'s {p} features.", key="shift_feature"
            )
        return j % p

    @property
    def feature_names(self) -> list[str]:
        """Names of the ``p`` columns of ``X``."""
        if self._X is None:
            self._load()
        return list(self._feature_names)

    def prepare(self, *, generator: Any) -> None:
        """Load the data and draw every split from ``generator`` (a ``torch.Generator``)."""
        self._load()
        rng = numpy_rng(generator)
        n = self._X.shape[0]
        perm = rng.permutation(n)
        n_tr = round(self.train * n)
        n_cal = max(round(self.calibration * n), 1)
        n_te = max(round(self.test * n), 1)
        idx = {"train": perm[:n_tr]}
        if not self.shift:
            idx["calibration"] = perm[n_tr : n_tr + n_cal]
            idx["test"] = perm[n_tr + n_cal : n_tr + n_cal + n_te]
        else:
            pool = perm[n_tr:]
            if pool.size < 2:
                raise ConfigError("the held-out pool is empty; lower 'train'.", key="train")
            self._pool_feature = self._X[pool, self._column]
            idx["calibration"] = pool[rng.integers(0, pool.size, n_cal)]
            idx["test"] = pool[rng.integers(0, pool.size, n_te)]
            for split, size in (("target_calibration", n_cal), ("target_test", n_te)):
                idx[split] = pool[tilted_resample(self._pool_feature, self.shift_strength, size, rng)]
        self._splits = idx

    def _select(self, entry: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(X[n, p], y[n])`` of one split's row indices (copies); :meth:`Dataset.split` checks the name."""
        return self._X[entry].copy(), self._y[entry].copy()

    def _split_hint(self, name: str) -> str:
        return "" if self.shift else " (target splits need shift = true)"

    def likelihood_ratio(self, X: np.ndarray) -> np.ndarray:
        """Exact ``dQ/dP(x) = exp(lambda x_j) / mean_pool exp(lambda x_j)`` at rows of ``X``.

        Args:
            X: ``ndarray[n, p]`` in the dataset's (standardized) units.

        Returns:
            ``ndarray[n]`` of positive ratios (dimensionless); all ones when ``shift_strength = 0``.

        Raises:
            ConfigError: without ``shift`` or before ``prepare``.
        """
        if not self.shift or self._pool_feature is None:
            raise ConfigError("likelihood_ratio needs shift = true and a prepared dataset.", key="shift")
        X = np.asarray(X, dtype=np.float64)
        return np.exp(tilt_log_ratio(X[:, self._column], self.shift_strength, self._pool_feature))
