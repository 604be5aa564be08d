"""The Jin-Candès simulation settings: uniform covariates, a known regression signal, Gaussian noise."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset
from quadriga.params import param
from quadriga.seeding import numpy_rng
from quadriga.validators import int_at_least, positive, positive_int

__all__ = ["SETTINGS", "SyntheticSelection", "signal"]

SETTINGS = (1, 2, 3, 4)


def signal(X: np.ndarray, setting: int) -> np.ndarray:
    """The regression function ``mu(x) = E[Y | X = x]``: ``ndarray[n, p] (p >= 4) -> ndarray[n]``.

    - settings 1, 3: ``mu(x) = 0.5 1{x1 x2 > 0} + x4 + 1{x1 x2 <= 0}``;
    - settings 2, 4: ``mu(x) = 2 (x1 x2 + x3^2 + exp(x4 - 1) - 1)``.

    Source: Bai & Jin 2024 official ``simulation/MSel/utils.py`` (``gen_data_Jin2023``, the "new"
    settings), after Jin & Candès 2023, sec. 6.
    """
    X = np.asarray(X, np.float64)
    if setting in (1, 3):
        inter = X[:, 0] * X[:, 1] > 0
        return 0.5 * inter + X[:, 3] + (~inter)
    return 2.0 * (X[:, 0] * X[:, 1] + X[:, 2] ** 2 + np.exp(X[:, 3] - 1.0) - 1.0)


def _noise_scale(mu: np.ndarray, setting: int, sigma: float) -> np.ndarray:
    if setting == 1:
        return np.full_like(mu, 2.0 * sigma)
    if setting == 2:
        return np.full_like(mu, 1.5 * sigma)
    if setting == 3:
        return (5.5 - np.abs(mu)) / 2.0 * sigma
    return (5.5 - np.abs(mu)) / 3.0 * sigma


def _check_setting(inst: Any, attribute: Any, value: Any) -> None:
    if isinstance(value, bool) or value not in SETTINGS:
        raise ConfigError(
            f"'setting' must be one of {', '.join(map(str, SETTINGS))} (got {value!r}).",
            key="setting",
        )


@attrs.define(kw_only=True)
class SyntheticSelection(Dataset):
    """``X ~ U[-1, 1]^dim``, ``Y = mu(X) + s(X) eps``, ``eps ~ N(0, 1)``: selection with a known signal.

    ``mu`` is :func:`signal`; the noise scale ``s`` is ``2 sigma`` (setting 1), ``1.5 sigma`` (2),
    ``(5.5 - |mu|) sigma / 2`` (3, heteroscedastic) or ``(5.5 - |mu|) sigma / 3`` (4). The OptCS
    simulations test ``H_j: Y_j <= 0`` (set ``threshold = 0`` on the estimators).

    Splits (``split(name) -> (X: ndarray[n, dim], y: ndarray[n])``): ``"train"``, ``"calibration"`` and
    ``"test"``, i.i.d. draws made in ``prepare``. :meth:`mean` gives ``mu`` and :meth:`prob_above` the
    exact ``P(Y > c | X)``.

    Units: ``x`` dimensionless in ``[-1, 1]``; ``y`` in the units of ``mu``.

    Raises:
        ConfigError: an unknown setting, ``dim < 4``, non-positive sizes or ``sigma``; KeyError for an
            unknown split.

    Source: Bai & Jin 2024, arXiv 2411.17983, sec. 5 (settings of Jin & Candès 2023, official
    ``simulation/MSel/utils.py``).
    """

    setting: int = param(
        2, doc="simulation setting 1-4 (1, 2: homoscedastic; 3, 4: heteroscedastic)", validator=_check_setting
    )
    dim: int = param(
        20, doc="covariate dimension (>= 4; only x1..x4 carry signal)", validator=int_at_least(4)
    )
    sigma: float = param(1.0, doc="noise multiplier (units of y)", validator=positive)
    n_train: int = param(500, doc="units to fit the candidate models", validator=positive_int)
    n_calibration: int = param(250, doc="labelled calibration units", validator=positive_int)
    n_test: int = param(100, doc="unlabelled test units m", validator=positive_int)

    _splits: dict = attrs.field(factory=dict, init=False, repr=False)

    def prepare(self, *, generator: Any) -> None:
        """Draw the three splits from ``generator`` (a ``torch.Generator``)."""
        rng = numpy_rng(generator)

        def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
            X = rng.uniform(-1.0, 1.0, size=(n, self.dim))
            mu = signal(X, self.setting)
            return X, mu + _noise_scale(mu, self.setting, self.sigma) * rng.standard_normal(n)

        self._splits = {
            "train": draw(self.n_train),
            "calibration": draw(self.n_calibration),
            "test": draw(self.n_test),
        }

    def mean(self, X: np.ndarray) -> np.ndarray:
        """``mu(x)``: ``ndarray[n, dim] -> ndarray[n]`` (units of y)."""
        return signal(X, self.setting)

    def prob_above(self, X: np.ndarray, threshold: float) -> np.ndarray:
        """Exact ``P(Y > c | X = x) = 1 - Phi((c - mu(x)) / s(x))``: ``ndarray[n, dim] -> ndarray[n]``."""
        from scipy.stats import norm

        mu = signal(X, self.setting)
        return norm.sf((threshold - mu) / _noise_scale(mu, self.setting, self.sigma))
