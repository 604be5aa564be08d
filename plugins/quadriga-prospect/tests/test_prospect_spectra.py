"""Spectra and smoothed weights: closed forms, the Rockafellar-Uryasev formula, a QP reference projection."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from quadriga_prospect.spectra import (
    esrm_spectrum,
    extremile_spectrum,
    make_spectrum,
    penalized_risk,
    smooth_weights,
    spectral_risk,
    superquantile_spectrum,
)
from scipy.optimize import minimize, minimize_scalar

from quadriga.errors import ConfigError


def test_superquantile_of_a_sorted_vector_by_hand():
    # n = 10, q = 0.5: weight 1/5 on the five largest losses; losses 1..10 -> mean of 6..10 = 8
    sigma = superquantile_spectrum(10, 0.5)
    np.testing.assert_allclose(sigma, [0] * 5 + [0.2] * 5)
    assert spectral_risk(np.arange(10.0, 0.0, -1.0), sigma) == pytest.approx(8.0)
    # q = 0.25: n (1 - q) = 7.5 -> 1/15 on the 3rd smallest, 1/7.5 on the 7 largest; by hand 0.2 + 49 / 7.5
    sigma = superquantile_spectrum(10, 0.25)
    assert sigma[2] == pytest.approx(1 / 15) and np.allclose(sigma[3:], 1 / 7.5) and sigma[:2].sum() == 0
    assert spectral_risk(np.arange(1.0, 11.0), sigma) == pytest.approx(0.2 + 49 / 7.5)


@pytest.mark.parametrize("q", [0.1, 0.5, 0.77, 0.9])
def test_superquantile_equals_rockafellar_uryasev(q):
    losses = np.random.default_rng(1).exponential(size=37)
    ru = minimize_scalar(
        lambda a: a + np.maximum(losses - a, 0).sum() / (losses.size * (1 - q)),
        bounds=(0, losses.max()),
        method="bounded",
        options={"xatol": 1e-12},
    ).fun
    assert spectral_risk(losses, superquantile_spectrum(losses.size, q)) == pytest.approx(ru, rel=1e-8)


def test_extremile_is_the_expected_maximum_of_two_draws():
    losses = np.random.default_rng(2).normal(size=23)
    exact = np.maximum.outer(losses, losses).mean()  # all n^2 ordered pairs, drawn with replacement
    assert spectral_risk(losses, extremile_spectrum(23, 2.0)) == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize("name", ["superquantile", "extremile", "esrm", "uniform"])
def test_spectra_are_sorted_distributions(name):
    for n in (1, 2, 7, 100):
        sigma = make_spectrum(name, n, q=0.3, r=2.5, rho=2.0)
        assert sigma.shape == (n,) and sigma.sum() == pytest.approx(1.0) and np.all(np.diff(sigma) >= -1e-15)
    assert esrm_spectrum(4, 1e-8) == pytest.approx(np.full(4, 0.25), abs=1e-6)


def test_unknown_spectrum_is_a_config_error():
    with pytest.raises(ConfigError, match="spectrum"):
        make_spectrum("cvar", 4)


def _qp_projection(z: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Reference: argmin ||q - z||^2 over the permutahedron, by its subset inequalities (SLSQP)."""
    n = z.size
    top = np.cumsum(np.sort(sigma)[::-1])
    cons = [{"type": "eq", "fun": lambda q: q.sum() - 1.0}]
    for k in range(1, n):
        for S in itertools.combinations(range(n), k):
            idx = list(S)
            cons.append({"type": "ineq", "fun": lambda q, idx=idx, k=k: top[k - 1] - q[idx].sum()})
    res = minimize(
        lambda q: 0.5 * np.sum((q - z) ** 2),
        np.full(n, 1 / n),
        jac=lambda q: q - z,
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    return res.x


@pytest.mark.parametrize("nu", [0.3, 1.0, 6.0])
def test_smooth_weights_are_the_projection_onto_the_permutahedron(nu):
    rng = np.random.default_rng(3)
    losses = rng.normal(size=6)
    sigma = superquantile_spectrum(6, 0.4)
    q = smooth_weights(losses, sigma, nu)
    np.testing.assert_allclose(q, _qp_projection(1 / 6 + losses / nu, sigma), atol=1e-6)


def test_weights_stay_on_the_simplex_and_in_the_permutahedron():
    rng = np.random.default_rng(4)
    for spectrum in ("superquantile", "extremile", "esrm"):
        sigma = make_spectrum(spectrum, 50, q=0.6)
        top = np.cumsum(sigma[::-1])
        for scale in (1e-3, 1.0, 1e3):
            q = smooth_weights(scale * rng.standard_t(3, size=50), sigma, 50.0)
            assert q.min() >= -1e-15 and q.sum() == pytest.approx(1.0)
            assert np.all(np.cumsum(np.sort(q)[::-1]) <= top + 1e-12)  # majorized by sigma


def test_limits_of_the_penalty():
    rng = np.random.default_rng(5)
    losses = rng.normal(size=40)
    sigma = extremile_spectrum(40, 2.0)
    np.testing.assert_allclose(smooth_weights(losses, sigma, 0.0)[np.argsort(losses)], sigma)  # no smoothing
    np.testing.assert_allclose(smooth_weights(losses, np.full(40, 1 / 40), 3.0), 1 / 40)  # uniform spectrum
    # R - (nu/2) ||sigma - 1/n||^2 <= penalized risk <= R  (q = sorted sigma is feasible; the penalty is >= 0)
    risk, gap = spectral_risk(losses, sigma), 0.5 * np.sum((sigma - 1 / 40) ** 2)
    for nu in (1e-3, 1.0, 40.0):
        value, _ = penalized_risk(losses, sigma, nu)
        assert risk - nu * gap - 1e-12 <= value <= risk + 1e-12
    # Danskin: the gradient of the penalized risk in the losses is q
    eps, i = 1e-6, 7
    bumped = losses.copy()
    bumped[i] += eps
    fd = (penalized_risk(bumped, sigma, 40.0)[0] - penalized_risk(losses, sigma, 40.0)[0]) / eps
    assert fd == pytest.approx(penalized_risk(losses, sigma, 40.0)[1][i], abs=1e-5)
