"""A high-dimensional Gaussian mean-shift regression problem with a known likelihood ratio."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset
from quadriga.params import param
from quadriga.seeding import numpy_rng
from quadriga.validators import int_at_least, non_negative

__all__ = ["SyntheticShift"]

_POSITIVE = int_at_least(1)


@attrs.define(kw_only=True)
class SyntheticShift(Dataset):
    """Source ``X ~ N(0, I_d)``, target ``X ~ N(delta u, I_d)``, ``Y = w.X + (1 + |u.X|) eps``.

    ``u`` is a random unit direction and ``w ~ N(0, I_d / d)``, both drawn in ``prepare``;
    ``eps ~ N(0, 1)``. The noise grows along ``u``, so moving the covariates along ``u`` makes
    split conformal intervals too short. Exact likelihood ratio
    ``r(x) = dQ/dP(x) = exp(delta u.x - delta^2 / 2)``.

    Splits (``split(name) -> (X: ndarray[n, dim], y: ndarray[n])``): ``"train"``, ``"calibration"``
    and ``"test"`` from the source; ``"target_calibration"`` (methods use its covariates only) and
    ``"target_test"`` from the target. ``delta = 0`` gives target = source.

    Raises:
        ConfigError: non-positive sizes or dimension; KeyError for an unknown split.

    Source: test design for Joshi et al. 2025 (arXiv 2502.13030) on a synthetic shift; mean-shift
    likelihood ratio of two Gaussians with equal covariance.
    """

    dim: int = param(50, doc="covariate dimension d", validator=_POSITIVE)
    delta: float = param(1.0, doc="shift length along u (units of x)", validator=non_negative)
    n_train: int = param(1000, doc="source points to fit the point predictor", validator=_POSITIVE)
    n_calibration: int = param(1000, doc="labeled source calibration points", validator=_POSITIVE)
    n_test: int = param(1000, doc="source test points", validator=_POSITIVE)
    n_target_calibration: int = param(
        1000, doc="unlabeled target points given to methods", validator=_POSITIVE
    )
    n_target_test: int = param(2000, doc="target test points (evaluation)", validator=_POSITIVE)

    _u: Any = attrs.field(default=None, init=False, repr=False)
    _splits: dict = attrs.field(factory=dict, init=False, repr=False)

    def prepare(self, *, generator: Any) -> None:
        """Draw ``u``, ``w`` and every split from ``generator`` (a ``torch.Generator``)."""
        rng = numpy_rng(generator)
        d = int(self.dim)
        u = rng.standard_normal(d)
        self._u = u / np.linalg.norm(u)
        w = rng.standard_normal(d) / np.sqrt(d)

        def draw(n: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
            X = rng.standard_normal((n, d)) + shift * self._u
            return X, X @ w + (1.0 + np.abs(X @ self._u)) * rng.standard_normal(n)

        self._splits = {
            "train": draw(self.n_train, 0.0),
            "calibration": draw(self.n_calibration, 0.0),
            "test": draw(self.n_test, 0.0),
            "target_calibration": draw(self.n_target_calibration, self.delta),
            "target_test": draw(self.n_target_test, self.delta),
        }

    def likelihood_ratio(self, X: np.ndarray) -> np.ndarray:
        """Exact ``r(x) = exp(delta u.x - delta^2/2)``: ``ndarray[n, dim] -> ndarray[n]``.

        Raises:
            ConfigError: before ``prepare``.
        """
        if self._u is None:
            raise ConfigError("call prepare(generator=...) before likelihood_ratio.")
        return np.exp(self.delta * (np.asarray(X) @ self._u) - 0.5 * self.delta**2)
