"""Posterior of Bayesian logistic regression on scikit-learn's bundled breast-cancer data."""

from __future__ import annotations

import math
from typing import Any

import attrs
import torch

from quadriga import param
from quadriga.interfaces import Target
from quadriga.validators import positive

__all__ = ["BayesianLogistic"]


@attrs.define(kw_only=True)
class BayesianLogistic(Target):
    """Logistic-regression posterior with a N(0, prior_scale^2 I) prior.

    Data: ``sklearn.datasets.load_breast_cancer`` (569 rows, 30 features), features
    standardised (zero mean, unit variance), a column of ones prepended for the intercept,
    labels y in {0, 1}; so d = 31 and beta[0] is the intercept.

    log pi(beta) = sum_i [y_i eta_i - log(1 + e^{eta_i})] + log N(beta; 0, s^2 I), eta = X beta:
    the log joint density, i.e. the posterior up to the (unknown) log evidence.

    Shapes: ``log_prob: Tensor[n, 31] -> Tensor[n]``, ``score: Tensor[n, 31] -> Tensor[n, 31]``;
    ``data``: design ``Tensor[569, 31]``, labels ``Tensor[569]``. No exact sampler or moments.
    Units: ``log_prob`` in nats; coefficients in log-odds per standard deviation of a feature
    (``prior_scale`` likewise).

    Raises:
        ConfigError: ``prior_scale`` <= 0 (when built).
        ValueError: ``beta`` not of shape ``[n, 31]``.

    Source: the standard benchmark of e.g. Girolami & Calderhead 2011 (sec. 7) and
    Hoffman & Gelman 2014 (NUTS); data from the UCI Wisconsin diagnostic breast cancer set.
    """

    prior_scale: float = param(1.0, doc="prior standard deviation s of every coefficient", validator=positive)
    _X: Any = attrs.field(init=False, default=None)
    _y: Any = attrs.field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
        X = torch.as_tensor(X, dtype=torch.float64)
        X = (X - X.mean(0)) / X.std(0)
        self._X = torch.cat([torch.ones(X.shape[0], 1, dtype=torch.float64), X], 1)
        self._y = torch.as_tensor(y, dtype=torch.float64)

    @property
    def dim(self) -> int:
        """d = 31 (intercept + 30 standardised features)."""
        return int(self._X.shape[1])

    @property
    def data(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The design ``Tensor[569, 31]`` (with the intercept column) and labels ``Tensor[569]`` in {0, 1}."""
        return self._X, self._y

    def _eta(self, beta: torch.Tensor) -> torch.Tensor:
        if beta.ndim != 2 or beta.shape[1] != self.dim:
            raise ValueError(f"beta must have shape [n, {self.dim}], got {tuple(beta.shape)}")
        return beta @ self._X.to(beta.dtype).T  # [n, N]

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """Log joint density (nats): ``Tensor[n, d] -> Tensor[n]``."""
        eta = self._eta(x)
        y = self._y.to(x.dtype)
        loglik = (y * eta - torch.nn.functional.softplus(eta)).sum(-1)
        s2 = self.prior_scale**2
        logprior = -0.5 * (x * x).sum(-1) / s2 - 0.5 * self.dim * math.log(2 * math.pi * s2)
        return loglik + logprior

    def score(self, x: torch.Tensor) -> torch.Tensor:
        """Closed-form score X^T (y - sigmoid(X beta)) - beta / s^2: ``Tensor[n, d] -> Tensor[n, d]``."""
        eta = self._eta(x)
        resid = self._y.to(x.dtype) - torch.sigmoid(eta)
        return resid @ self._X.to(x.dtype) - x / self.prior_scale**2
