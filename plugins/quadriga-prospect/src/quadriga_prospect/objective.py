"""The regularized, chi^2-penalized spectral risk of a linear model, with per-example oracles.

    F(w) = max_{q in P(sigma)} sum_i q_i l_i(w) - (nu/2) ||q - 1/n||^2 + (mu/2) ||w||^2,

with ``nu = n * shift_cost`` and ``mu = l2_reg / n`` (the scaling of the official code, so that
``shift_cost = l2_reg = 1`` are its defaults). Losses ``l_i(w)`` of a linear model
``x_i . w`` (or ``x_i W`` for several classes):

- ``"squared"``: ``0.5 (y_i - x_i . w)^2`` (regression);
- ``"logistic"``: ``log(1 + exp(z_i)) - y_i z_i`` with ``z_i = x_i . w``, ``y_i in {0, 1}``;
- ``"multinomial"``: ``logsumexp(x_i W) - (x_i W)_{y_i}``, ``W`` of shape ``[d, K]`` stored row-major
  as ``w = W.ravel()``, ``y_i in {0..K-1}``.

Everything is float64 numpy (one example per step: numpy's per-call cost is what matters).

Source: Mehta, Roulet, Pillutla, Harchaoui, ICLR 2024, the objective of sec. 2 (spectral risk with
the chi^2 / "shift cost" penalty and l2 regularization); official code ``src/optim/objectives.py``.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np
from scipy.special import expit, logsumexp, softmax

from quadriga.errors import ConfigError
from quadriga_prospect.spectra import penalized_risk, smooth_weights

__all__ = ["LOSSES", "SpectralRiskObjective"]

LOSSES = ("squared", "logistic", "multinomial")


@attrs.define(kw_only=True, eq=False)
class SpectralRiskObjective:
    """``F(w)`` on one data set, with the oracles every optimizer of this plugin uses.

    Attributes:
        X: ``ndarray[n, d]`` float64 features.
        y: ``ndarray[n]``: float targets (``"squared"``) or int labels.
        sigma: ``ndarray[n]`` spectrum (non-decreasing, sums to 1).
        loss: one of ``LOSSES``.
        shift_cost: the chi^2 penalty per unit of ``n``: ``nu = n * shift_cost`` (units of the loss).
        l2_reg: ``mu = l2_reg / n``.
        n_class: number of classes ``K`` for ``"multinomial"`` (else 1).
        spectrum: optional callable ``m -> ndarray[m]``, the same spectrum for a minibatch of
            ``m`` losses (needed by the minibatch baselines).

    Raises:
        ConfigError: an unknown loss or mismatched shapes.
    """

    X: np.ndarray
    y: np.ndarray
    sigma: np.ndarray
    loss: str = "squared"
    shift_cost: float = 1.0
    l2_reg: float = 1.0
    n_class: int = 1
    spectrum: Any = None

    def __attrs_post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise ConfigError(f"unknown loss '{self.loss}'; choose one of {', '.join(LOSSES)}.", key="loss")
        if self.X.ndim != 2 or self.y.shape[0] != self.X.shape[0] or self.sigma.shape[0] != self.X.shape[0]:
            raise ConfigError(
                f"X {self.X.shape}, y {self.y.shape} and sigma {self.sigma.shape} must share n rows.", key="X"
            )
        if self.loss == "multinomial" and self.n_class < 2:
            raise ConfigError("the multinomial loss needs n_class >= 2.", key="n_class")

    @property
    def n(self) -> int:
        """Number of examples."""
        return int(self.X.shape[0])

    @property
    def dim(self) -> int:
        """Number of parameters ``D = d`` (or ``d K`` for ``"multinomial"``)."""
        return int(self.X.shape[1]) * (self.n_class if self.loss == "multinomial" else 1)

    @property
    def nu(self) -> float:
        """chi^2 penalty coefficient ``n * shift_cost``."""
        return self.n * self.shift_cost

    @property
    def mu(self) -> float:
        """l2 coefficient ``l2_reg / n``."""
        return self.l2_reg / self.n

    def losses(self, w: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        """Per-example losses ``l_i(w)``: ``ndarray[m]`` for the rows ``idx`` (all when ``None``)."""
        X, y = (self.X, self.y) if idx is None else (self.X[idx], self.y[idx])
        if self.loss == "squared":
            return 0.5 * (y - X @ w) ** 2
        if self.loss == "logistic":
            z = X @ w
            return np.logaddexp(0.0, z) - y * z
        Z = X @ w.reshape(-1, self.n_class)
        return logsumexp(Z, axis=1) - Z[np.arange(len(y)), y]

    def grads(self, w: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        """Per-example gradients ``grad l_i(w)``: ``ndarray[m, D]``."""
        X, y = (self.X, self.y) if idx is None else (self.X[idx], self.y[idx])
        if self.loss == "squared":
            return (X @ w - y)[:, None] * X
        if self.loss == "logistic":
            return (expit(X @ w) - y)[:, None] * X
        P = softmax(X @ w.reshape(-1, self.n_class), axis=1)
        P[np.arange(len(y)), y] -= 1.0
        return (X[:, :, None] * P[:, None, :]).reshape(len(y), -1)

    def loss_and_grad(self, w: np.ndarray, i: int) -> tuple[float, np.ndarray]:
        """``(l_i(w), grad l_i(w))`` of one example: a float and ``ndarray[D]``."""
        x, y = self.X[i], self.y[i]
        if self.loss == "squared":
            r = float(x @ w) - float(y)
            return 0.5 * r * r, r * x
        if self.loss == "logistic":
            z = float(x @ w)
            value = max(z, 0.0) + math.log1p(math.exp(-abs(z))) - float(y) * z
            p = 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))
            return value, (p - float(y)) * x
        z = x @ w.reshape(-1, self.n_class)
        z = z - z.max()
        e = np.exp(z)
        total = float(e.sum())
        p = e / total
        p[y] -= 1.0
        return math.log(total) - float(z[y]), np.outer(x, p).ravel()

    def batch_sigma(self, m: int) -> np.ndarray:
        """The spectrum for ``m`` losses (``ndarray[m]``).

        Raises:
            ConfigError: when the objective was built without ``spectrum``.
        """
        if self.spectrum is None:
            raise ConfigError(
                "this objective has no spectrum for minibatches; pass spectrum=.", key="spectrum"
            )
        return self.spectrum(m)

    def weights(self, losses: np.ndarray, sigma: np.ndarray | None = None) -> np.ndarray:
        """``q(l)`` for a loss vector (with the objective's spectrum and ``nu`` unless ``sigma`` is given)."""
        return smooth_weights(losses, self.sigma if sigma is None else sigma, self.nu)

    def value(self, w: np.ndarray) -> float:
        """``F(w)``: penalized spectral risk plus ``(mu/2) ||w||^2`` (units of the loss)."""
        risk, _ = penalized_risk(self.losses(w), self.sigma, self.nu)
        return risk + 0.5 * self.mu * float(w @ w)

    def value_and_grad(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        """``(F(w), grad F(w))`` with ``grad F = sum_i q_i grad l_i + mu w`` (Danskin).

        Returns:
            A float and ``ndarray[D]``.
        """
        risk, q = penalized_risk(self.losses(w), self.sigma, self.nu)
        return risk + 0.5 * self.mu * float(w @ w), q @ self.grads(w) + self.mu * w
