"""Fixtures shared by quadriga-std's tests."""

from __future__ import annotations

import math

import pytest


class EigenbasisGaussian:
    """A std ``Gaussian`` evaluated through its d x d eigenvector matrix V and eigenvalues lambda.

    ``y = (x - mean) V``; ``log p(x) = -((y * y) / lambda).sum / 2 - log det / 2 - d log(2 pi) / 2``
    and ``s(x) = (y / -lambda) V^T``, in ``x``'s dtype: the evaluation std's Gaussian made before it
    used the precision for dense covariances. Its values are what a diagonal covariance's O(d)
    reordering must equal bit for bit (each product entry is one coordinate times +-1 plus zeros),
    and the chains pinned in test_std_samplers_pinned.py were drawn on it.

    Shapes: ``log_prob: Tensor[n, d] -> Tensor[n]``, ``score: Tensor[n, d] -> Tensor[n, d]``.
    """

    def __init__(self, g):
        self.g, self.dim = g, g.dim

    def _parts(self, x):
        evals, evecs = self.g._evals.to(x.dtype), self.g._evecs.to(x.dtype)
        y = (x - self.g.mean.to(x.dtype)) @ evecs
        return y, evals, evecs, (0.5 * evals.log().sum(), 0.5 * self.dim * math.log(2.0 * math.pi))

    def log_prob(self, x):
        y, evals, _, (half_logdet, half_const) = self._parts(x)
        return -0.5 * ((y * y) / evals).sum(-1) - half_logdet - half_const

    def score(self, x):
        y, evals, evecs, _ = self._parts(x)
        return (y / -evals) @ evecs.T


@pytest.fixture
def eigenbasis():
    """:class:`EigenbasisGaussian`: call it on a std ``Gaussian``."""
    return EigenbasisGaussian
