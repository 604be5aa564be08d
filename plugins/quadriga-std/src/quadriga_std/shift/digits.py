"""``shifted-digits``: scikit-learn's load_digits under covariate, label and stream shifts."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset
from quadriga.params import param
from quadriga.seeding import child_numpy_rng, numpy_rng
from quadriga.validators import in_range, int_at_least, one_of
from quadriga_std.shift.scenarios import class_sorted_order, corrupt, dirichlet_order

__all__ = ["SCENARIOS", "ShiftedDigits"]

#: scenario names: the clean i.i.d. stream, three covariate shifts (i.i.d. order), two non-i.i.d.
#: streams of clean images, and held-out classes (open-set / OOD)
SCENARIOS = ("iid", "noise", "blur", "rotation", "class-sorted", "dirichlet", "held-out")


def _check_scenarios(inst: Any, attribute: Any, value: Any) -> None:
    check = one_of(SCENARIOS)
    if isinstance(value, str) or not list(value):
        raise ConfigError("'scenarios' must be a non-empty list of scenario names.", key="scenarios")
    for name in value:
        check(inst, attribute, name)
    if len(set(value)) != len(value):
        raise ConfigError(f"'scenarios' lists a name twice: {list(value)}.", key="scenarios")


def _check_classes(inst: Any, attribute: Any, value: Any) -> None:
    if any(not isinstance(c, int) or isinstance(c, bool) or not 0 <= c <= 9 for c in value):
        raise ConfigError(f"'held_out_classes' must be digits 0..9 (got {list(value)}).", key=attribute.name)
    if len(set(value)) > 8:
        raise ConfigError(
            "'held_out_classes' must leave at least two classes to train on.", key=attribute.name
        )


@attrs.define(kw_only=True)
class ShiftedDigits(Dataset):
    """load_digits (1797 8x8 images, pixels scaled to [0, 1]) with shift scenarios as splits.

    ``prepare`` cuts a random permutation into ``"train"``, ``"calibration"`` and a test pool.
    Rows of the ``held_out_classes`` are removed from train and calibration. Splits
    (``split(name) -> (X: ndarray[n, 64] float64 in [0, 1], y: ndarray[n] int)``):

    - ``"train"``, ``"calibration"``: clean, in-distribution classes only;
    - ``"test"``: the clean in-distribution test pool, random order;
    - one split per name in ``scenarios``, in *stream order* (a test-time method sees it in
      consecutive batches of ``batch_size`` rows, :meth:`batches`):

      - ``"iid"``: the clean pool, shuffled;
      - ``"noise"``, ``"blur"``, ``"rotation"``: the pool shuffled, each image corrupted
        (Gaussian noise of ``noise_std``, 3x3 box blur, rotation by ``rotation`` degrees);
      - ``"class-sorted"``: the pool sorted by class (batches of one or two classes);
      - ``"dirichlet"``: rows resampled so that each batch's class proportions are
        ``Dirichlet(dirichlet_concentration)`` (class-imbalanced batches);
      - ``"held-out"``: the whole test pool including held-out classes, shuffled;
        :meth:`ood` flags the held-out rows (needs ``held_out_classes``).

      The two non-i.i.d. streams hold clean images unless ``stream_corruption`` names a
      corruption (non-i.i.d. batches under covariate shift, as in the paper's hardest setting).

    Every scenario draws its randomness from its own child generator, so adding a scenario
    leaves the others' rows unchanged.

    Units: pixels in [0, 1]; ``noise_std`` in pixel units; ``rotation`` in degrees; fractions of the
    1797 rows for ``train`` and ``calibration``; ``batch_size`` in rows.

    Raises:
        ConfigError: unknown scenario names (close matches suggested), fractions summing to more
            than 1, ``"held-out"`` without ``held_out_classes``, classes outside 0..9.

    Source: scikit-learn ``load_digits`` (UCI optical digits); scenario design after Boudiaf et
    al. 2022, "Parameter-free online test-time adaptation", CVPR, sec. 4 (see
    :mod:`quadriga_std.shift.scenarios`).
    """

    scenarios: tuple[str, ...] = param(
        ("iid", "noise", "blur", "rotation", "class-sorted", "dirichlet"),
        doc=f"scenario splits to build, from {', '.join(SCENARIOS)}",
        converter=tuple,
        validator=_check_scenarios,
        toml_type="list[str]",
    )
    train: float = param(
        0.5, doc="fraction of rows for training", validator=in_range(0, 1, low_open=True, high_open=True)
    )
    calibration: float = param(
        0.1, doc="fraction of rows for calibration", validator=in_range(0, 1, high_open=True)
    )
    batch_size: int = param(64, doc="rows per test-time batch", validator=int_at_least(1))
    noise_std: float = param(0.3, doc="Gaussian noise std (pixel units on [0, 1])", validator=in_range(0))
    rotation: float = param(15.0, doc="rotation angle in degrees", validator=in_range(-180, 180))
    dirichlet_concentration: float = param(
        0.1,
        doc="Dirichlet concentration of each batch's class proportions",
        validator=in_range(0, low_open=True),
    )
    stream_corruption: str = param(
        "none",
        doc="corruption of the non-i.i.d. streams' images: none, noise, blur or rotation",
        validator=one_of(("none", "noise", "blur", "rotation")),
    )
    held_out_classes: tuple[int, ...] = param(
        (),
        doc="digits removed from train/calibration (OOD in 'held-out')",
        converter=tuple,
        validator=_check_classes,
        toml_type="list[int]",
    )

    _splits: dict = attrs.field(factory=dict, init=False, repr=False)
    _ood: dict = attrs.field(factory=dict, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.train + self.calibration >= 1.0:
            raise ConfigError(
                f"train + calibration = {self.train + self.calibration:.3g} leaves no test pool.", key="train"
            )
        if "held-out" in self.scenarios and not self.held_out_classes:
            raise ConfigError(
                "the 'held-out' scenario needs held_out_classes (e.g. [8, 9]).", key="held_out_classes"
            )

    @property
    def num_classes(self) -> int:
        """Number of classes a classifier is trained on (10 minus the held-out ones)."""
        return 10 - len(set(self.held_out_classes))

    @property
    def classes(self) -> np.ndarray:
        """The in-distribution digit labels, ascending: ``ndarray[num_classes]``."""
        return np.array([c for c in range(10) if c not in set(self.held_out_classes)])

    def prepare(self, *, generator: Any) -> None:
        """Load the digits and draw every split from ``generator`` (see the class docstring)."""
        from sklearn.datasets import load_digits

        bunch = load_digits()
        X, y = np.asarray(bunch.data, np.float64) / 16.0, np.asarray(bunch.target, np.int64)
        rng = numpy_rng(generator)
        perm = rng.permutation(len(y))
        n_tr, n_cal = round(self.train * len(y)), round(self.calibration * len(y))
        held = np.isin(y, list(self.held_out_classes))
        tr, cal, pool = perm[:n_tr], perm[n_tr : n_tr + n_cal], perm[n_tr + n_cal :]
        tr, cal = tr[~held[tr]], cal[~held[cal]]
        ind = pool[~held[pool]]
        splits = {"train": (X[tr], y[tr]), "calibration": (X[cal], y[cal]), "test": (X[ind], y[ind])}
        ood = {}
        for name in self.scenarios:
            r = child_numpy_rng(generator, f"scenario/{name}")
            if name == "held-out":
                rows = _shuffled(r, pool)
                splits[name] = (X[rows], y[rows])
                ood[name] = held[rows]
                continue
            if name == "class-sorted":
                rows = ind[class_sorted_order(y[ind], r)]
            elif name == "dirichlet":
                rows = ind[dirichlet_order(y[ind], self.batch_size, self.dirichlet_concentration, r)]
            else:
                rows = _shuffled(r, ind)
            Xs = X[rows]
            kind = name if name in ("noise", "blur", "rotation") else None
            if name in ("class-sorted", "dirichlet") and self.stream_corruption != "none":
                kind = self.stream_corruption
            if kind is not None:
                Xs = corrupt(Xs, kind, rng=r, noise_std=self.noise_std, rotation=self.rotation)
            splits[name] = (Xs, y[rows])
            ood[name] = np.zeros(len(rows), bool)
        self._splits, self._ood = splits, ood

    def batches(self, name: str) -> list[slice]:
        """The consecutive batches of a scenario's stream: ``[slice(0, b), slice(b, 2b), ...]``.

        Raises:
            KeyError: an unknown split (as :meth:`split`).
        """
        n = len(self.split(name)[1])
        return [slice(s, min(s + self.batch_size, n)) for s in range(0, n, self.batch_size)]

    def ood(self, name: str) -> np.ndarray:
        """``ndarray[n] bool``: which rows of scenario ``name`` belong to held-out classes.

        Raises:
            KeyError: ``name`` is not a scenario of this dataset.
        """
        if name not in self._ood:
            raise KeyError(f"'{name}' is not a scenario of this dataset; have {', '.join(self._ood)}.")
        return self._ood[name].copy()


def _shuffled(rng: np.random.Generator, rows: np.ndarray) -> np.ndarray:
    """``rows`` in a random order drawn from ``rng``."""
    return rows[rng.permutation(len(rows))]
