"""The exact PFGM++ field: quadrature error, the closed-form finite-data field, the D = inf Tweedie limit,
and the posterior-mean property (orthogonality, least squares) under the kernel's own law."""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_ddpm.edm_heun import score_denoiser
from quadriga_ddpm.score_models import AnalyticScore
from quadriga_pfgmpp.field import MixtureField, empirical_denoiser
from quadriga_pfgmpp.kernel import perturb
from quadriga_std.targets.gaussian import GaussianMixture

from quadriga.errors import ConfigError


@pytest.fixture(scope="module")
def mixture():
    g = GaussianMixture(preset="random", dim=8, num_components=4, scale=0.5)
    g.prepare(generator=torch.Generator().manual_seed(0))
    return g


@pytest.mark.parametrize("aug_dim", [1.0, 8.0, 512.0])
def test_quadrature_error_below_1e8_on_the_kernels_law(mixture, aug_dim):
    gen = torch.Generator().manual_seed(1)
    y = mixture.sample(300, generator=gen).to(torch.float64)
    coarse, fine = MixtureField.from_target(mixture, nodes=512), MixtureField.from_target(mixture, nodes=4096)
    for sigma in (0.002, 0.5, 30.0):
        x = perturb(y, sigma, aug_dim, gen, clip=False)
        assert float((coarse.denoise(x, sigma, aug_dim) - fine.denoise(x, sigma, aug_dim)).abs().max()) < 1e-8


def test_quadrature_matches_the_closed_form_field_of_a_finite_data_set():
    # a mixture of near-point masses is the empirical law; its field is (||x - y_i||^2 + r^2)^(-(N + D) / 2)
    gen = torch.Generator().manual_seed(2)
    points = torch.randn(20, 3, generator=gen, dtype=torch.float64)
    field = MixtureField(torch.ones(20), points, torch.full((20,), 1e-14), nodes=4096)
    x = 2 * torch.randn(100, 3, generator=gen, dtype=torch.float64)
    for aug_dim in (1.0, 8.0, 100.0, math.inf):
        for sigma in (0.3, 5.0):
            exact = empirical_denoiser(points, x, sigma, aug_dim)
            assert float((field.denoise(x, sigma, aug_dim) - exact).abs().max()) < 1e-8


def test_infinite_d_is_tweedie_on_the_noised_score(mixture):
    # independent code: std's noised_score through the ddpm kit's D(x, sigma) = x + sigma^2 score
    field = MixtureField.from_target(mixture)
    tweedie = score_denoiser(AnalyticScore(mixture))
    x = 4 * torch.randn(400, 8, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    for sigma in (0.01, 0.5, 3.0, 80.0):
        assert float((field.denoise(x, sigma, math.inf) - tweedie(x, sigma)).abs().max()) < 1e-9


def test_large_d_field_converges_to_the_diffusion_field(mixture):
    field = MixtureField.from_target(mixture)
    gen = torch.Generator().manual_seed(4)
    x = mixture.sample(400, generator=gen).to(torch.float64) + 0.5 * torch.randn(
        400, 8, generator=gen, dtype=torch.float64
    )
    gap = {
        d: float((field.denoise(x, 0.5, d) - field.denoise(x, 0.5, math.inf)).norm(dim=1).mean())
        for d in (1e3, 1e5)
    }
    # the kernel is N(0, sigma^2 I) up to O(1 / D): the gap falls 100-fold from D = 1e3 to 1e5
    assert gap[1e5] < 1e-3 and 50 < gap[1e3] / gap[1e5] < 200


@pytest.mark.parametrize("aug_dim", [1.0, 8.0])
def test_field_is_the_posterior_mean_under_the_kernel(mixture, aug_dim):
    # E[y - D(x)] = 0, and the exact field beats the diffusion (D = inf) denoiser in mean squared error
    # (paired over draws, 4 standard errors)
    gen = torch.Generator().manual_seed(5)
    n, sigma = 10000, 2.0
    y = mixture.sample(n, generator=gen).to(torch.float64)
    x = perturb(y, sigma, aug_dim, gen, clip=False)
    field = MixtureField.from_target(mixture)
    resid = y - field.denoise(x, sigma, aug_dim)
    se = resid.std(0) / math.sqrt(n)
    assert bool((resid.mean(0).abs() < 4.5 * se).all())
    if aug_dim < 3:  # the D = 1 kernel has no finite second moment: the squared errors are not comparable
        return
    wrong = y - field.denoise(x, sigma, math.inf)
    gain = (wrong**2).sum(1) - (resid**2).sum(1)  # paired per draw
    assert float(gain.mean()) > 4 * float(gain.std()) / math.sqrt(n)


def test_non_mixture_and_anisotropic_targets_are_refused():
    with pytest.raises(ConfigError, match="not a Gaussian mixture"):
        MixtureField.from_target(object())
    g = GaussianMixture(means=[[0.0, 0.0], [3.0, 0.0]], covariances=[[[1.0, 0.0], [0.0, 2.0]]] * 2)
    with pytest.raises(ConfigError, match="isotropic"):
        MixtureField.from_target(g)
