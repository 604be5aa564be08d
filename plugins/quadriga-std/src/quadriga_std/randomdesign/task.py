"""``random-design``: Gaussian-design linear regression with a planted signal and exact risks;
``ArrayRegression``: given arrays as a dataset (for checkers that refit a learner on mapped data)."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset
from quadriga.params import param
from quadriga.seeding import numpy_rng
from quadriga.validators import int_at_least, non_negative, one_of, positive_int
from quadriga_std.randomdesign.design import (
    SIGNALS,
    SPECTRA,
    conditional_ridge_risk,
    covariance,
    excess_risk,
    planted_signal,
    ridge_deterministic_equivalent,
    sample_design,
)

__all__ = ["ArrayRegression", "RandomDesign"]


@attrs.define(kw_only=True)
class RandomDesign(Dataset):
    """Rows ``x ~ N(0, Sigma)``, targets ``y = x^T B + noise * e``; splits ``"train"`` and ``"test"``.

    ``Sigma`` from :func:`~quadriga_std.randomdesign.design.covariance` (isotropic, equicorrelated
    with ``rho``, power-law ``k^-exponent``), ``B`` from
    :func:`~quadriga_std.randomdesign.design.planted_signal` (columns of norm ``signal_norm``).
    Both are drawn in :meth:`prepare` and kept as ``covariance`` ``(d, d)`` and ``coef`` ``(d, k)``.

    Splits: ``(X: ndarray[n, d], y: ndarray[n])`` (``ndarray[n, k]`` when ``num_outputs > 1``).
    Exact risks: :meth:`excess_risk` of any coefficients, :meth:`ridge_risk` (given the train
    design, averaged over noise, closed form) and :meth:`predicted_ridge_risk` (deterministic
    equivalent).

    Shapes:
        ``X`` ``(n, d)``; ``y`` ``(n,)`` or ``(n, k)``; ``covariance`` ``(d, d)``; ``coef`` ``(d, k)``.

    Units:
        features have unit scale along the covariance's eigenvalues; targets have signal norm
        ``signal_norm`` and noise standard deviation ``noise``; risks in squared target units.

    Raises:
        ConfigError: unknown spectrum or signal, ``rho`` outside the positive-definite range,
            non-positive sizes, a risk asked for before :meth:`prepare`.

    Source: the Gaussian random-design model of Hastie, Montanari, Rosset & Tibshirani 2022
    (Ann. Statist.), sec. 2; power-law spectra and signals as in the source/capacity setting
    (Caponnetto & De Vito 2007).
    """

    spectrum: str = param(
        "isotropic", doc=f"covariance spectrum: one of {', '.join(SPECTRA)}", validator=one_of(SPECTRA)
    )
    dim: int = param(20, doc="number of features d", validator=positive_int)
    n_train: int = param(100, doc="training rows n", validator=positive_int)
    n_test: int = param(1000, doc="test rows", validator=positive_int)
    noise: float = param(0.5, doc="label noise standard deviation (target units)", validator=non_negative)
    rho: float = param(0.5, doc="equicorrelation rho (spectrum = equicorrelated), -1/(d-1) < rho < 1")
    exponent: float = param(
        1.0, doc="power-law eigenvalue decay a: s_k = k^-a (spectrum = power-law)", validator=non_negative
    )
    signal: str = param(
        "random", doc=f"planted signal: one of {', '.join(SIGNALS)}", validator=one_of(SIGNALS)
    )
    signal_norm: float = param(1.0, doc="norm of each column of B", validator=non_negative)
    signal_exponent: float = param(
        1.0, doc="power-law signal decay: |B_i| ~ i^(-signal_exponent / 2)", validator=non_negative
    )
    num_outputs: int = param(1, doc="number of target columns k", validator=int_at_least(1))

    covariance: Any = attrs.field(default=None, init=False, repr=False)
    coef: Any = attrs.field(default=None, init=False, repr=False)
    _splits: dict = attrs.field(factory=dict, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        """Check the covariance settings when the component is built (ConfigError)."""
        covariance(self.spectrum, self.dim, rho=self.rho, exponent=self.exponent)

    def prepare(self, *, generator: Any) -> None:
        """Draw ``B``, then the train and test splits, from ``generator``."""
        rng = numpy_rng(generator)
        self.covariance = covariance(self.spectrum, self.dim, rho=self.rho, exponent=self.exponent)
        self.coef = planted_signal(
            self.dim,
            rng,
            signal=self.signal,
            norm=self.signal_norm,
            exponent=self.signal_exponent,
            num_outputs=self.num_outputs,
        )
        splits = {}
        for name, n in (("train", self.n_train), ("test", self.n_test)):
            X = sample_design(n, self.covariance, rng)
            y = X @ self.coef + self.noise * rng.standard_normal((n, self.num_outputs))
            splits[name] = (X, y[:, 0] if self.num_outputs == 1 else y)
        self._splits = splits

    def _prepared(self) -> None:
        if self.coef is None:
            raise ConfigError("the dataset has no draw yet: call prepare(generator=...) first.")

    def excess_risk(self, coef: Any) -> float:
        """``tr((W - B)^T Sigma (W - B))`` of coefficients ``W`` ``(d,)`` or ``(d, k)``."""
        self._prepared()
        return excess_risk(coef, self.coef, self.covariance)

    def ridge_risk(self, penalty: float) -> dict[str, float]:
        """Exact ridge excess risk given the train design, averaged over the noise
        (:func:`~quadriga_std.randomdesign.design.conditional_ridge_risk`)."""
        self._prepared()
        return conditional_ridge_risk(
            self._splits["train"][0], self.coef, self.covariance, self.noise, penalty
        )

    def predicted_ridge_risk(self, penalty: float) -> dict[str, float]:
        """Deterministic-equivalent ridge excess risk summed over outputs
        (:func:`~quadriga_std.randomdesign.design.ridge_deterministic_equivalent`)."""
        self._prepared()
        s, u = np.linalg.eigh(self.covariance)
        out: dict[str, float] = {}
        for j in range(self.coef.shape[1]):
            r = ridge_deterministic_equivalent(s, u.T @ self.coef[:, j], self.noise, penalty, self.n_train)
            for key, value in r.items():
                out[key] = value if key in ("kappa", "df2") else out.get(key, 0.0) + value
        return out


@attrs.define(kw_only=True)
class ArrayRegression(Dataset):
    """Given arrays as a dataset with splits ``"train"`` and ``"test"`` (``prepare`` does nothing).

    Shapes: ``X_train`` ``(n, d)``, ``y_train`` ``(n,)`` or ``(n, k)``, the test pair likewise.
    Raises: ConfigError when the row counts of a pair differ. Not registered (arrays cannot come
    from a pipeline file); used by checkers that refit a learner on transformed data.
    """

    X_train: Any = attrs.field()
    y_train: Any = attrs.field()
    X_test: Any = attrs.field(default=None)
    y_test: Any = attrs.field(default=None)
    _splits: dict = attrs.field(factory=dict, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        """Store the splits; refuse pairs of unequal length."""
        self._splits = {"train": (np.asarray(self.X_train), np.asarray(self.y_train))}
        if self.X_test is not None:
            self._splits["test"] = (
                np.asarray(self.X_test),
                None if self.y_test is None else np.asarray(self.y_test),
            )
        for name, (X, y) in self._splits.items():
            if y is not None and len(X) != len(y):
                raise ConfigError(f"split '{name}': X has {len(X)} rows but y has {len(y)}.", key=f"y_{name}")

    def prepare(self, *, generator: Any) -> None:
        """Nothing to draw."""
