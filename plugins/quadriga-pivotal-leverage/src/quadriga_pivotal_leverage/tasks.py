"""Candidate pools for active regression: a design, spatial coordinates and a label oracle.

A pool is a :class:`quadriga.interfaces.Dataset` with the capability ``active_pool = True``:

- ``design()``: the candidate design ``A: ndarray[n, D]`` (feature columns ordered by degree,
  so the first ``d`` columns are the degree-limited model);
- ``coordinates()``: ``ndarray[n, m]``, the points the spatial tree is built on;
- ``query(rows)``: the labels ``b[rows]`` (the expensive oracle; queries are counted);
- ``split("pool")``: ``(A, b)`` with every label, for the evaluator's full-data optimum.

Tasks: ``legendre-regression`` (1-D, a fine grid on [-1, 1]), ``surrogate-2d`` (a 2-D grid with
total-degree Legendre features, a smooth surrogate target) and ``diabetes-poly``
(scikit-learn's bundled ``load_diabetes`` with a degree-2 polynomial expansion).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np
from numpy.polynomial.legendre import legvander, legvander2d

from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset
from quadriga.params import param
from quadriga.seeding import numpy_rng
from quadriga.validators import int_at_least, non_negative, one_of, positive_int

__all__ = ["FUNCTIONS_1D", "DiabetesPoly", "LegendreRegression", "RegressionPool", "Surrogate2D"]

FUNCTIONS_1D = {
    "runge": lambda x: 1.0 / (1.0 + 25.0 * x**2),
    "abs": np.abs,
    "exp-sin": lambda x: np.exp(x) * np.sin(6.0 * x),
}


@attrs.define(kw_only=True)
class RegressionPool(Dataset):
    """Base of the active-regression pools (see the module docstring for the protocol).

    Subclasses implement ``_build() -> (design[n, D], coordinates[n, m], clean_labels[n])`` and
    may set ``noise``; labels are ``clean + noise * (0.5 + |c| / max|c|) * N(0, 1)`` (a
    heteroscedastic perturbation, ``c`` the first coordinate), drawn once in ``prepare``.

    Shapes:
        ``design() -> ndarray[n, D]``, ``coordinates() -> ndarray[n, m]``,
        ``query(rows: ndarray[k]) -> ndarray[k]``, ``split("pool") -> (ndarray[n, D], ndarray[n])``.

    Units:
        labels in the target function's units; ``num_queries`` is a count.

    Raises:
        KeyError: ``split`` of a name other than ``"pool"``.

    Source: the agnostic active-regression setting of Shimizu et al. 2024, sec. 2.
    """

    active_pool: ClassVar[bool] = True
    noise: float = 0.0

    _design: Any = attrs.field(default=None, init=False, repr=False)
    _coords: Any = attrs.field(default=None, init=False, repr=False)
    _labels: Any = attrs.field(default=None, init=False, repr=False)
    _clean: Any = attrs.field(default=None, init=False, repr=False)
    _cache: dict = attrs.field(factory=dict, init=False, repr=False)
    num_queries: int = attrs.field(default=0, init=False, repr=False)

    def _build(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _ensure(self, rng: np.random.Generator | None = None) -> None:
        if self._design is None:
            design, coords, clean = self._build()
            self._design, self._coords = design, coords.reshape(coords.shape[0], -1)
            self._clean = self._labels = clean
        if rng is not None and self.noise > 0:
            c = self._coords[:, 0]
            scale = 0.5 + np.abs(c) / max(float(np.abs(c).max()), 1e-12)
            self._labels = self._clean + self.noise * scale * rng.standard_normal(c.size)

    def prepare(self, *, generator: Any) -> None:
        """Build the pool and draw the label noise (one draw from ``generator``)."""
        self._ensure(numpy_rng(generator) if self.noise > 0 else None)

    @property
    def num_points(self) -> int:
        """Number of candidate points ``n``."""
        self._ensure()
        return int(self._design.shape[0])

    @property
    def num_columns(self) -> int:
        """Number of feature columns ``D`` available (a model uses the first ``d <= D``)."""
        self._ensure()
        return int(self._design.shape[1])

    def design(self, num_features: int | None = None) -> np.ndarray:
        """The candidate design, its first ``num_features`` columns (all when None): ``ndarray[n, d]``."""
        self._ensure()
        return self._design if num_features is None else self._design[:, :num_features]

    def coordinates(self) -> np.ndarray:
        """The points the spatial tree splits: ``ndarray[n, m]``."""
        self._ensure()
        return self._coords

    def query(self, rows: np.ndarray) -> np.ndarray:
        """The labels of ``rows`` (the oracle): ``ndarray[k]``; adds ``k`` to ``num_queries``."""
        self._ensure()
        rows = np.asarray(rows, dtype=np.int64)
        self.num_queries += int(rows.size)
        return self._labels[rows]

    def cached(self, key: Any, compute: Any) -> Any:
        """Memoise a pure function of the pool (leverage scores, tree layouts) under ``key``."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def split(self, name: str) -> tuple[Any, Any]:
        """``split("pool")``: the full design and every label, ``(ndarray[n, D], ndarray[n])``."""
        if name != "pool":
            raise KeyError(f"an active-regression pool has one split, 'pool', not {name!r}")
        self._ensure()
        return self._design, self._labels


@attrs.define(kw_only=True)
class LegendreRegression(RegressionPool):
    """Legendre-polynomial regression on a uniform grid of [-1, 1].

    Candidate points ``x_j = -1 + 2 j / (n - 1)``; features ``P_0(x), ..., P_{D-1}(x)``
    (``numpy.polynomial.legendre.legvander``), so a model with the first ``d`` columns is a
    polynomial of degree ``d - 1``; labels ``f(x) + noise``, with ``f`` Runge's
    ``1 / (1 + 25 x^2)`` by default (not a polynomial: the agnostic setting).

    Shapes:
        ``design: ndarray[num_points, num_features]``, ``coordinates: ndarray[num_points, 1]``.

    Units:
        ``x`` and labels are dimensionless.

    Raises:
        ConfigError: ``num_points < 2``, ``num_features < 1`` or more than ``num_points``,
            an unknown ``function``, a negative ``noise``.

    Source: Shimizu et al. 2024, sec. 5 (polynomial regression on [-1, 1], O(d) samples);
    the reference code's 1-D experiments (Legendre features, n = 10^4 points).
    """

    num_points: int = param(10_000, doc="number of grid points n (count)", validator=int_at_least(2))
    num_features: int = param(
        40,
        doc="Legendre columns D available (degree D - 1); samplers may use fewer",
        validator=positive_int,
    )
    function: str = param(
        "runge", doc=f"target f: one of {', '.join(FUNCTIONS_1D)}", validator=one_of(FUNCTIONS_1D)
    )
    noise: float = param(0.0, doc="heteroscedastic label noise scale (label units)", validator=non_negative)

    def __attrs_post_init__(self) -> None:
        if self.num_features > self.num_points:
            raise ConfigError(
                f"num_features ({self.num_features}) cannot exceed num_points ({self.num_points}).",
                key="num_features",
            )

    def _build(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x = np.linspace(-1.0, 1.0, self.num_points)
        return legvander(x, self.num_features - 1), x[:, None], FUNCTIONS_1D[self.function](x)


@attrs.define(kw_only=True)
class Surrogate2D(RegressionPool):
    """A 2-D surrogate-modelling task: total-degree Legendre features on a square grid.

    Points: the ``grid_size x grid_size`` grid of ``[-1, 1]^2``. Features ``P_i(x_1) P_j(x_2)``
    with ``i + j <= total_degree``, ordered by total degree (``(D+1)(D+2)/2`` columns). Target
    ``exp(-||x - (0.3, -0.2)||^2 / 0.05) + sin(3 x_1) cos(2 x_2)`` (a smooth stand-in for the
    paper's parametric-PDE quantities of interest, which need a PDE solver).

    Shapes:
        ``design: ndarray[grid_size^2, (D+1)(D+2)/2]``, ``coordinates: ndarray[grid_size^2, 2]``.

    Units:
        coordinates and labels are dimensionless.

    Raises:
        ConfigError: ``grid_size < 2``, ``total_degree < 1``, more features than points,
            a negative ``noise``.

    Source: Shimizu et al. 2024, sec. 5 (2-D surrogate problems, total-degree polynomial bases,
    "up to 50% fewer samples").
    """

    grid_size: int = param(100, doc="points per axis (count); n = grid_size^2", validator=int_at_least(2))
    total_degree: int = param(10, doc="maximal total degree D of the features", validator=positive_int)
    noise: float = param(0.0, doc="heteroscedastic label noise scale (label units)", validator=non_negative)

    def __attrs_post_init__(self) -> None:
        d = (self.total_degree + 1) * (self.total_degree + 2) // 2
        if d > self.grid_size**2:
            raise ConfigError(
                f"total_degree {self.total_degree} gives {d} features, more than the {self.grid_size**2} "
                "points; raise grid_size or lower total_degree.",
                key="total_degree",
            )

    def _build(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        g = np.linspace(-1.0, 1.0, self.grid_size)
        x1, x2 = (v.ravel() for v in np.meshgrid(g, g, indexing="ij"))
        deg = self.total_degree
        full = legvander2d(x1, x2, [deg, deg])  # column i * (deg + 1) + j is P_i(x1) P_j(x2)
        pairs = sorted(
            ((i, j) for i in range(deg + 1) for j in range(deg + 1 - i)), key=lambda t: (sum(t), t)
        )
        design = full[:, [i * (deg + 1) + j for i, j in pairs]]
        f = np.exp(-((x1 - 0.3) ** 2 + (x2 + 0.2) ** 2) / 0.05) + np.sin(3 * x1) * np.cos(2 * x2)
        return design, np.stack([x1, x2], axis=1), f


@attrs.define(kw_only=True)
class DiabetesPoly(RegressionPool):
    """scikit-learn's diabetes data (442 patients, 10 features) with a polynomial expansion.

    Coordinates: the 10 z-scored features. Design: ``PolynomialFeatures(degree)`` of them
    (1, the features, then their products, ordered by degree: 66 columns for degree 2).
    Labels: the disease-progression target, z-scored. A real-data check: the labels are
    not a polynomial of the features.

    Shapes:
        ``design: ndarray[442, C(10 + degree, degree)]``, ``coordinates: ndarray[442, 10]``.

    Units:
        features and labels in standard deviations.

    Raises:
        ConfigError: ``degree`` not in ``{1, 2, 3}``, a negative ``noise``.

    Source: Efron, Hastie, Johnstone & Tibshirani 2004 (the diabetes data, via
    ``sklearn.datasets.load_diabetes``); the design follows Shimizu et al. 2024, sec. 5.
    """

    degree: int = param(2, doc="degree of the polynomial expansion (1, 2 or 3)", validator=one_of((1, 2, 3)))
    noise: float = param(
        0.0, doc="heteroscedastic label noise scale (standard deviations)", validator=non_negative
    )

    def _build(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        from sklearn.datasets import load_diabetes
        from sklearn.preprocessing import PolynomialFeatures

        x, y = load_diabetes(return_X_y=True)
        x = (x - x.mean(axis=0)) / x.std(axis=0)
        y = (y - y.mean()) / y.std()
        return PolynomialFeatures(self.degree).fit_transform(x), x, y
