"""The PFGM++ kernel and prior: radius law against scipy's beta-prime, the D = inf limit, bad input."""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_pfgmpp.kernel import BETA_CLIP, check_aug_dim, perturb, prior_draw, r_of_sigma, radius_ratio_law
from scipy import stats

from quadriga.errors import ConfigError

N = 8


@pytest.mark.parametrize("aug_dim", [1.0, 8.0, 64.0])
def test_perturb_radius_follows_beta_prime(aug_dim):
    # R^2 / r^2 = B / (1 - B) ~ beta-prime(N / 2, D / 2) (paper eq. 4 / official training/loss.py)
    gen = torch.Generator().manual_seed(1)
    y = torch.zeros(4000, N, dtype=torch.float64)
    sigma = 0.7
    x = perturb(y, sigma, aug_dim, gen, clip=False)
    ratio = (x.norm(dim=1) / r_of_sigma(sigma, aug_dim)) ** 2
    assert stats.kstest(ratio.numpy(), radius_ratio_law(N, aug_dim).cdf).pvalue > 0.01
    u = x / x.norm(dim=1, keepdim=True)  # direction uniform on the sphere: mean 0, second moment I / N
    assert u.mean(0).abs().max() < 4 / math.sqrt(4000)
    assert (u.T @ u / 4000 - torch.eye(N, dtype=torch.float64) / N).abs().max() < 0.02


@pytest.mark.parametrize("aug_dim", [1.0, 8.0, 64.0])
def test_prior_scale_mixture_equals_the_beta_prime_prior_in_law(aug_dim):
    gen = torch.Generator().manual_seed(2)
    sigma_max = 80.0
    x = prior_draw(4000, N, sigma_max, aug_dim, gen)
    ratio = (x.norm(dim=1) / r_of_sigma(sigma_max, aug_dim)) ** 2
    assert stats.kstest(ratio.numpy(), radius_ratio_law(N, aug_dim).cdf).pvalue > 0.01


def test_clipping_of_b_as_the_official_code():
    gen = torch.Generator().manual_seed(3)
    y = torch.zeros(5000, N, dtype=torch.float64)
    x = perturb(y, 1.0, 1.0, gen, clip=True)
    b_over = (x.norm(dim=1) ** 2) / 1.0  # r = 1 at D = 1: R^2 = B / (1 - B)
    b = b_over / (1 + b_over)
    assert float(b.min()) >= BETA_CLIP - 1e-12 and float(b.max()) <= 1 - BETA_CLIP + 1e-12


def test_infinite_d_is_the_gaussian_kernel_and_edm_prior():
    g1, g2 = torch.Generator().manual_seed(4), torch.Generator().manual_seed(4)
    y = torch.randn(10, N, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    x = perturb(y, 0.3, math.inf, g1)
    assert torch.equal(x, y + 0.3 * torch.randn(10, N, generator=g2, dtype=torch.float64))
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    assert torch.equal(
        prior_draw(7, N, 80.0, math.inf, g1), 80.0 * torch.randn(7, N, generator=g2, dtype=torch.float64)
    )


def test_finite_d_prior_couples_to_the_edm_prior():
    # same z, radius factor sqrt(D / W) -> 1 at rate D^(-1/2)
    x_inf = prior_draw(500, N, 1.0, math.inf, torch.Generator().manual_seed(6))
    gaps = [
        float((prior_draw(500, N, 1.0, d, torch.Generator().manual_seed(6)) - x_inf).norm(dim=1).mean())
        for d in (1e4, 1e6)
    ]
    assert gaps[1] < 0.01 and 7 < gaps[0] / gaps[1] < 14  # ratio sqrt(100) = 10


@pytest.mark.parametrize("bad", [0.5, 0.0, -3.0, float("nan")])
def test_bad_aug_dim_names_the_key(bad):
    with pytest.raises(ConfigError, match="aug_dim"):
        check_aug_dim(bad)
    with pytest.raises(ConfigError, match="infinite"):
        r_of_sigma(1.0, math.inf)
