"""Two-dimensional point clouds as datasets: two moons, a checkerboard, a swiss roll, a Gaussian mixture.

Each dataset draws i.i.d. points in ``prepare`` and offers three disjoint splits
(``split(name) -> (X: ndarray[n, 2] float64, None)``):

- ``"train"`` (``num_train`` points): what learners fit;
- ``"test"`` (``num_test`` points): held-out points, the reference of the distances;
- ``"reference"`` (``num_test`` points): a second independent held-out set, so that the distance
  between two independent samples of the same density (the floor of any distance) is measured
  with the same sizes.

:meth:`_PointCloud.draw` gives fresh exact draws for any other use. Every cloud is centred near
0 with a spread of about 2 (units: those of the plot; no physical units).
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

from quadriga.interfaces import Dataset
from quadriga.params import param
from quadriga.seeding import numpy_rng
from quadriga.validators import in_range, int_at_least, positive_int

__all__ = ["Checkerboard", "GaussianMixturePoints", "SwissRoll", "TwoMoons"]

SPLITS = ("train", "test", "reference")


@attrs.define(kw_only=True)
class _PointCloud(Dataset):
    """Shared splits; subclasses implement ``_draw(n, rng) -> ndarray[n, 2]``."""

    num_train: int = param(20000, doc="points in the train split (count)", validator=int_at_least(2))
    num_test: int = param(
        2000, doc="points in each of the test and reference splits (count)", validator=int_at_least(2)
    )

    _splits: dict = attrs.field(factory=dict, init=False, repr=False)

    @property
    def dim(self) -> int:
        """2."""
        return 2

    def _draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def draw(self, num_samples: int, *, generator: Any) -> np.ndarray:
        """Fresh exact draws ``ndarray[num_samples, 2]`` (float64) from a ``torch.Generator``."""
        return self._draw(int(num_samples), numpy_rng(generator))

    def prepare(self, *, generator: Any) -> None:
        """Draw the splits from ``generator`` (one numpy stream: train, then test, then reference)."""
        rng = numpy_rng(generator)
        sizes = {"train": self.num_train, "test": self.num_test, "reference": self.num_test}
        self._splits = {name: self._draw(int(n), rng) for name, n in sizes.items()}


@attrs.define(kw_only=True)
class TwoMoons(_PointCloud):
    """Two interleaving half circles (scikit-learn ``make_moons``), centred and scaled.

    ``x = scale * (m - (0.5, 0.25))`` with ``m`` from ``sklearn.datasets.make_moons(n, noise=noise)``
    (which puts n/2 points on each moon; the rows are then shuffled).

    Shapes: ``split(name) -> (ndarray[n, 2], None)``.
    Units: none (plot units); ``noise`` in the units of ``make_moons`` before scaling.

    Raises:
        ConfigError: non-positive sizes, ``noise < 0`` or ``scale <= 0``; KeyError for an unknown split.

    Source: scikit-learn ``sklearn.datasets.make_moons``.
    """

    noise: float = param(
        0.05, doc="Gaussian noise std of make_moons (before scaling)", validator=in_range(0, 10)
    )
    scale: float = param(2.0, doc="scale factor after centring", validator=in_range(0, 100, low_open=True))

    def _draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        from sklearn.datasets import make_moons

        m, _ = make_moons(n_samples=n, noise=self.noise, random_state=int(rng.integers(2**31 - 1)))
        m = m[rng.permutation(n)]
        return self.scale * (m - np.array([0.5, 0.25]))


@attrs.define(kw_only=True)
class Checkerboard(_PointCloud):
    """Uniform density on the dark cells of a ``cells x cells`` board on ``[-half_width, half_width]^2``.

    A cell (i, j) is dark when ``i + j`` is even; a point picks a dark cell uniformly, then a
    uniform position inside it. The density is ``2 / (2 half_width)^2`` on dark cells, 0 elsewhere.

    Shapes: ``split(name) -> (ndarray[n, 2], None)``.
    Units: none (plot units).

    Raises:
        ConfigError: ``cells < 2`` or ``half_width <= 0``; KeyError for an unknown split.

    Source: the 2-D checkerboard of Grathwohl et al. 2019 (FFJORD) and of the stochastic-interpolant
    authors' ``notebooks/checker-with-score.ipynb``.
    """

    cells: int = param(4, doc="cells per side (count)", validator=int_at_least(2))
    half_width: float = param(
        2.0, doc="board is [-half_width, half_width]^2", validator=in_range(0, 100, low_open=True)
    )

    def _draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        k = self.cells
        dark = np.array([(i, j) for i in range(k) for j in range(k) if (i + j) % 2 == 0], dtype=np.float64)
        cell = dark[rng.integers(0, len(dark), n)]
        width = 2 * self.half_width / k
        return -self.half_width + (cell + rng.random((n, 2))) * width


@attrs.define(kw_only=True)
class SwissRoll(_PointCloud):
    """The 2-D swiss roll: columns (0, 2) of scikit-learn ``make_swiss_roll``, scaled.

    ``x = scale * (r cos r, r sin r) + noise``, ``r ~ U[1.5 pi, 4.5 pi]`` (sklearn's parametrisation).

    Shapes: ``split(name) -> (ndarray[n, 2], None)``.
    Units: none (plot units); ``noise`` in sklearn's units before scaling.

    Raises:
        ConfigError: ``noise < 0`` or ``scale <= 0``; KeyError for an unknown split.

    Source: scikit-learn ``sklearn.datasets.make_swiss_roll``.
    """

    noise: float = param(
        0.5, doc="Gaussian noise std of make_swiss_roll (before scaling)", validator=in_range(0, 10)
    )
    scale: float = param(0.2, doc="scale factor", validator=in_range(0, 100, low_open=True))

    def _draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        from sklearn.datasets import make_swiss_roll

        x, _ = make_swiss_roll(n_samples=n, noise=self.noise, random_state=int(rng.integers(2**31 - 1)))
        return self.scale * x[:, [0, 2]]


@attrs.define(kw_only=True)
class GaussianMixturePoints(_PointCloud):
    """Equal-weight isotropic Gaussian mixture with ``num_components`` means on a circle.

    Means ``radius (cos 2 pi k / K, sin 2 pi k / K)``, component std ``std``.

    Shapes: ``split(name) -> (ndarray[n, 2], None)``.
    Units: none (plot units).

    Raises:
        ConfigError: ``num_components < 1``, ``radius < 0`` or ``std <= 0``; KeyError for an unknown split.

    Source: the 8-Gaussians toy target of the flow and diffusion literature (e.g. Grathwohl et al. 2019).
    """

    num_components: int = param(8, doc="number of components K (count)", validator=positive_int)
    radius: float = param(2.0, doc="radius of the circle of means", validator=in_range(0, 100))
    std: float = param(0.2, doc="component standard deviation", validator=in_range(0, 100, low_open=True))

    @property
    def means(self) -> np.ndarray:
        """``ndarray[K, 2]`` component means."""
        ang = 2 * math.pi * np.arange(self.num_components) / self.num_components
        return self.radius * np.stack([np.cos(ang), np.sin(ang)], axis=1)

    def _draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        k = rng.integers(0, self.num_components, n)
        return self.means[k] + self.std * rng.standard_normal((n, 2))
