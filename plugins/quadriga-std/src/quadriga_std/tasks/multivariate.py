"""``mv-synthetic``: synthetic regression data with a 2-D response of known conditional shape."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from quadriga.interfaces import Dataset
from quadriga.params import param
from quadriga.seeding import numpy_rng
from quadriga.validators import in_range, int_at_least, one_of

__all__ = ["SHAPES", "MultivariateResponse", "draw_response"]

SHAPES = ("banana", "bimodal", "ring", "gaussian")
#: the Gaussian shape's noise covariance (y = (x, -x / 2) + e, e ~ N(0, GAUSSIAN_COV))
GAUSSIAN_COV = np.array([[1.0, 0.6], [0.6, 0.5]])


def draw_response(shape: str, x: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    """``Y[n, 2]`` given ``x[n]`` (x in [0.5, 2]) for one conditional shape.

    - ``banana``: ``z ~ N(0, I)``, ``y1 = z1``, ``y2 = x (z1^2 - 1) / 2 + noise z2`` (a parabola whose
      curvature grows with x);
    - ``bimodal``: ``y = s (x, 0) + noise * 2 z`` with a fair sign ``s`` (two blobs at distance 2x);
    - ``ring``: radius ``x + noise z1``, angle uniform on [0, 2 pi);
    - ``gaussian``: ``y = (x, -x/2) + e``, ``e ~ N(0, GAUSSIAN_COV)`` (the unimodal control; its
      exact 1 - alpha region is the chi-square ellipsoid).

    Raises:
        ValueError: an unknown shape.
    """
    n = len(x)
    z = rng.standard_normal((n, 2))
    if shape == "banana":
        return np.c_[z[:, 0], x * (z[:, 0] ** 2 - 1) / 2 + noise * z[:, 1]]
    if shape == "bimodal":
        s = rng.choice([-1.0, 1.0], size=n)
        return np.c_[s * x, np.zeros(n)] + 2 * noise * z
    if shape == "ring":
        theta = rng.uniform(0, 2 * np.pi, n)
        r = x + noise * z[:, 0]
        return np.c_[r * np.cos(theta), r * np.sin(theta)]
    if shape == "gaussian":
        return np.c_[x, -x / 2] + z @ np.linalg.cholesky(GAUSSIAN_COV).T
    raise ValueError(f"unknown shape '{shape}'; choose one of {', '.join(SHAPES)}")


@attrs.define(kw_only=True)
class MultivariateResponse(Dataset):
    """``x ~ Uniform(0.5, 2)`` (one feature), ``Y | x`` a 2-D banana, two blobs, a ring or a Gaussian.

    Splits ``"train"``, ``"calibration"``, ``"test"``: ``(X: ndarray[n, 1], Y: ndarray[n, 2])``,
    independent draws of the sizes given (units: arbitrary, Y of order 1).

    Raises:
        ConfigError: unknown shape (close matches suggested), non-positive sizes or noise.

    Source: the synthetic non-convex responses of Feldman, Bates & Romano 2023, JMLR, sec. 6
    (banana and ring-like conditionals; the exact formulas here are ours, see :func:`draw_response`).
    """

    shape: str = param(
        "banana", doc=f"conditional shape: one of {', '.join(SHAPES)}", validator=one_of(SHAPES)
    )
    noise: float = param(0.2, doc="noise scale (units of y)", validator=in_range(0, low_open=True))
    n_train: int = param(2000, doc="training rows", validator=int_at_least(2))
    n_calibration: int = param(1000, doc="calibration rows", validator=int_at_least(1))
    n_test: int = param(1000, doc="test rows", validator=int_at_least(1))

    _splits: dict = attrs.field(factory=dict, init=False, repr=False)

    def prepare(self, *, generator: Any) -> None:
        """Draw the three splits from ``generator``."""
        rng = numpy_rng(generator)
        splits = {}
        for name, n in (("train", self.n_train), ("calibration", self.n_calibration), ("test", self.n_test)):
            x = rng.uniform(0.5, 2.0, n)
            splits[name] = (x[:, None], draw_response(self.shape, x, self.noise, rng))
        self._splits = splits
