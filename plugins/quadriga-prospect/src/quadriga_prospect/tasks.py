"""The task ``spectral-risk-data``: a data set together with the spectral-risk objective on it.

The objective belongs to the task so that every optimizer of a pipeline, and the evaluator that
computes the optimum, minimize the same function: ``--set task.diabetes.spectrum=extremile``
changes it for all of them.

Data (all offline):

- ``"diabetes"``: ``sklearn.datasets.load_diabetes`` (442 x 10), squared loss on the standardized
  target. The paper's regression sets (yacht, energy, concrete, ...) are UCI downloads, which are
  not available offline; diabetes is the stand-in (it is not the paper's "diabetes" fairness set).
- ``"breast_cancer"``: ``load_breast_cancer`` (569 x 30), logistic loss.
- ``"wine"``: ``load_wine`` (178 x 13, 3 classes), multinomial logistic loss.
- ``"shift-regression"``: a synthetic subpopulation shift. ``x ~ N(0, I_d)``; a minority group
  (probability ``minority`` in ``"train"``, ``test_minority`` in ``"test"``) has coefficients
  ``beta + shift * u`` (``u`` a random unit vector) and noise ``2 * noise``; the majority has
  ``beta`` and ``noise``. Squared loss. Test-time risk is higher under shift for the mean-loss fit
  than for a tail-focused (spectral) fit.

Features are standardized with the ``"train"`` split's mean and standard deviation and a column of
ones is appended (``intercept``); regression targets are standardized with the train mean and
standard deviation (``ddof = 1``), as the official code does.

Source: Mehta, Roulet, Pillutla, Harchaoui, ICLR 2024, sec. 5 (regression and classification
benchmarks, ``l2_reg = shift_cost = 1``); official code ``src/utils/data.py``.
"""

from __future__ import annotations

import functools
from typing import Any

import attrs
import numpy as np

from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset
from quadriga.params import param
from quadriga.seeding import numpy_rng
from quadriga.validators import (
    in_range,
    int_at_least,
    non_negative,
    one_of,
    positive,
    positive_int,
    probability,
)
from quadriga_prospect.objective import SpectralRiskObjective
from quadriga_prospect.spectra import SPECTRA, make_spectrum

__all__ = ["DATASETS", "SpectralRiskData"]

DATASETS = {
    "diabetes": ("load_diabetes", "squared"),
    "breast_cancer": ("load_breast_cancer", "logistic"),
    "wine": ("load_wine", "multinomial"),
    "shift-regression": (None, "squared"),
}


@attrs.define(kw_only=True)
class SpectralRiskData(Dataset):
    """A data set and the regularized, chi^2-penalized spectral risk of a linear model on it.

    Splits (``split(name) -> (X: ndarray[n, p + intercept] float64, y: ndarray[n])``): ``"train"``
    and ``"test"``; ``y`` is float (standardized) for regression and int labels for classification.
    :meth:`objective` returns the :class:`~quadriga_prospect.objective.SpectralRiskObjective`
    ``F(w) = max_{q in P(sigma)} q . l(w) - (n shift_cost / 2) ||q - 1/n||^2 + (l2_reg / 2n) ||w||^2``
    on a split (units: those of the loss, i.e. squared standard deviations of ``y`` or nats).

    Raises:
        ConfigError: unknown ``dataset`` or ``spectrum`` (close matches suggested), levels out of
            range, ``split`` or ``objective`` before ``prepare``.

    Source: Mehta et al., ICLR 2024, sec. 2 (objective) and sec. 5 (data, defaults).
    """

    dataset: str = param("diabetes", doc=f"one of {', '.join(DATASETS)}", validator=one_of(DATASETS))
    spectrum: str = param("superquantile", doc=f"one of {', '.join(SPECTRA)}", validator=one_of(SPECTRA))
    q: float = param(
        0.5,
        doc="superquantile level in [0, 1) (fraction of losses below the tail)",
        validator=in_range(0.0, 1.0, high_open=True),
    )
    r: float = param(2.0, doc="extremile order r >= 1", validator=in_range(1.0))
    rho: float = param(1.0, doc="ESRM risk aversion rho > 0", validator=positive)
    shift_cost: float = param(
        1.0, doc="chi^2 penalty nu / n (units of the loss); 0 = no smoothing", validator=non_negative
    )
    l2_reg: float = param(1.0, doc="l2 regularization mu * n (mu = l2_reg / n)", validator=positive)
    train: float = param(
        0.8,
        doc="fraction of rows in the train split",
        validator=in_range(0.0, 1.0, low_open=True, high_open=True),
    )
    intercept: bool = param(True, doc="append a column of ones to X")
    num_samples: int = param(
        500, doc="shift-regression: rows in train and in test", validator=int_at_least(8)
    )
    dim: int = param(10, doc="shift-regression: number of features", validator=positive_int)
    minority: float = param(0.1, doc="shift-regression: minority fraction in train", validator=probability)
    test_minority: float = param(
        0.5, doc="shift-regression: minority fraction in test", validator=probability
    )
    shift: float = param(
        2.0, doc="shift-regression: norm of the minority's coefficient change", validator=non_negative
    )
    noise: float = param(
        0.5,
        doc="shift-regression: noise standard deviation of the majority (units of y)",
        validator=non_negative,
    )

    _splits: dict = attrs.field(factory=dict, init=False, repr=False)
    _n_class: int = attrs.field(default=1, init=False, repr=False)

    @property
    def loss(self) -> str:
        """The loss of the data set: ``"squared"``, ``"logistic"`` or ``"multinomial"``."""
        return DATASETS[self.dataset][1]

    @property
    def n_class(self) -> int:
        """Number of classes ``K`` (1 unless the loss is multinomial)."""
        return self._n_class

    def _synthetic(self, rng: np.random.Generator) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        beta = rng.normal(size=self.dim) / np.sqrt(self.dim)
        u = rng.normal(size=self.dim)
        beta_minor = beta + self.shift * u / np.linalg.norm(u)
        out = {}
        for split, frac in (("train", self.minority), ("test", self.test_minority)):
            X = rng.normal(size=(self.num_samples, self.dim))
            minor = rng.random(self.num_samples) < frac
            coef = np.where(minor[:, None], beta_minor[None, :], beta[None, :])
            scale = np.where(minor, 2.0 * self.noise, self.noise)
            out[split] = (X, np.sum(X * coef, axis=1) + scale * rng.normal(size=self.num_samples))
        return out

    def prepare(self, *, generator: Any) -> None:
        """Load or draw the data, split it with ``generator`` and standardize with the train statistics."""
        rng = numpy_rng(generator)
        loader, loss = DATASETS[self.dataset]
        if loader is None:
            raw = self._synthetic(rng)
        else:
            import sklearn.datasets as skd

            X, y = getattr(skd, loader)(return_X_y=True)
            perm = rng.permutation(len(y))
            cut = round(self.train * len(y))
            if cut < 2 or cut > len(y) - 1:
                raise ConfigError(f"train = {self.train} leaves too few rows in a split.", key="train")
            raw = {"train": (X[perm[:cut]], y[perm[:cut]]), "test": (X[perm[cut:]], y[perm[cut:]])}
        X_tr, y_tr = raw["train"]
        mean, sd = X_tr.mean(axis=0), X_tr.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        y_center, y_scale = (
            (float(np.mean(y_tr)), float(np.std(y_tr, ddof=1))) if loss == "squared" else (0.0, 1.0)
        )
        self._splits = {}
        for split, (X, y) in raw.items():
            Z = (np.asarray(X, dtype=np.float64) - mean) / sd
            if self.intercept:
                Z = np.hstack([Z, np.ones((Z.shape[0], 1))])
            if loss == "squared":
                target = (np.asarray(y, dtype=np.float64) - y_center) / y_scale
            elif loss == "logistic":
                target = np.asarray(y, dtype=np.float64)
            else:
                target = np.asarray(y, dtype=np.int64)
            self._splits[split] = (Z, target)
        self._n_class = int(np.max(raw["train"][1]) + 1) if loss == "multinomial" else 1

    def sigma(self, n: int) -> np.ndarray:
        """The task's spectrum for ``n`` losses: ``ndarray[n]``, non-decreasing, summing to 1."""
        return make_spectrum(self.spectrum, n, q=self.q, r=self.r, rho=self.rho)

    def objective(self, split: str = "train") -> SpectralRiskObjective:
        """The objective ``F`` on ``split`` (see the class docstring).

        Raises:
            KeyError, ConfigError: as :meth:`split`.
        """
        X, y = self.split(split)
        spec = functools.partial(make_spectrum, self.spectrum, q=self.q, r=self.r, rho=self.rho)
        return SpectralRiskObjective(
            X=X,
            y=y,
            sigma=spec(X.shape[0]),
            loss=self.loss,
            shift_cost=self.shift_cost,
            l2_reg=self.l2_reg,
            n_class=self.n_class,
            spectrum=spec,
        )

    def describe(self) -> dict[str, Any]:
        """The objective's settings as plain values (recorded with each fit)."""
        return {
            "dataset": self.dataset,
            "spectrum": self.spectrum,
            "q": self.q,
            "r": self.r,
            "rho": self.rho,
            "shift_cost": self.shift_cost,
            "l2_reg": self.l2_reg,
            "loss": self.loss,
        }
