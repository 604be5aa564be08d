"""Kernels: the bandwidth convention against scikit-learn, the power kernels against their definition."""

from __future__ import annotations

import numpy as np
import pytest
from quadriga_kernel_thinning.kernels import make_kernel, power_kernel
from quadriga_kernel_thinning.planning import split_kernel
from scipy.signal import fftconvolve
from sklearn.gaussian_process.kernels import RBF, Matern, RationalQuadratic

from quadriga.errors import ConfigError

RNG = np.random.default_rng(0)
X = RNG.standard_normal((40, 3))
Y = RNG.standard_normal((30, 3))


@pytest.mark.parametrize(
    "name, nu, reference",
    [
        ("gaussian", None, RBF(length_scale=1.7)),
        ("laplace", None, Matern(length_scale=1.7, nu=0.5)),
        ("matern", 1.5, Matern(length_scale=1.7, nu=1.5)),
        ("matern", 2.5, Matern(length_scale=1.7, nu=2.5)),
        ("matern", 0.8, Matern(length_scale=1.7, nu=0.8)),
    ],
)
def test_kernel_matrix_matches_scikit_learn(name, nu, reference):
    k = make_kernel(name, 1.7, nu)
    np.testing.assert_allclose(k.matrix(X, Y), reference(X, Y), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(np.diag(k.matrix(X)), 1.0)


def test_imq_matches_rational_quadratic_form():
    # (1 + r^2 / sigma^2)^(-nu) is scikit-learn's RationalQuadratic with alpha = nu, l^2 = sigma^2 / (2 nu)
    nu, sigma = 0.7, 1.3
    ref = RationalQuadratic(alpha=nu, length_scale=sigma / np.sqrt(2 * nu))
    np.testing.assert_allclose(make_kernel("imq", sigma, nu).matrix(X, Y), ref(X, Y), rtol=1e-9)


def test_rows_is_goodpoints_signature():
    k = make_kernel("gaussian", 0.9)
    np.testing.assert_allclose(k.rows(X[3:4], X), k.matrix(X)[3], rtol=1e-12)
    np.testing.assert_allclose(k.rows(X, X), np.ones(len(X)))


def _self_convolution(kernel, grid):
    """(k_a * k_a)(t) on a 1-D grid, by the trapezoid rule over z."""
    step = grid[1] - grid[0]
    vals = kernel.of_sqdist(grid**2)
    return fftconvolve(vals, vals, mode="same") * step


@pytest.mark.parametrize("name, nu", [("gaussian", None), ("matern", 1.5), ("matern", 2.5)])
def test_square_root_kernel_convolves_to_the_kernel(name, nu):
    # the defining property of k_rt (d = 1): integral k_rt(x, z) k_rt(z, y) dz is proportional to k(x, y)
    k = make_kernel(name, 1.0, nu)
    k_rt = power_kernel(k, 0.5, dim=1)
    grid = np.linspace(-40, 40, 16001)
    conv = _self_convolution(k_rt, grid)
    target = k.of_sqdist(grid**2)
    sel = (np.abs(grid) <= 10) & (target > 1e-6)  # away from the truncated tails and FFT round-off
    ratio = conv[sel] / target[sel]
    assert np.ptp(ratio) / ratio.mean() < 2e-3


def test_laplace_has_no_root_kernel_in_two_dimensions():
    with pytest.raises(ValueError, match="alpha must exceed"):
        power_kernel(make_kernel("laplace", 1.0), 0.5, dim=2)
    with pytest.raises(ConfigError, match="variant"):
        split_kernel("root", "laplace", 1.0, None, None, dim=2)
    split, swap, alpha = split_kernel("kt+", "laplace", 1.0, None, None, dim=2)
    assert (
        alpha == pytest.approx(0.5 * (2 / 3 + 1))
        and len(split.terms) == 2
        and swap.terms == (make_kernel("laplace", 1.0).terms)
    )
