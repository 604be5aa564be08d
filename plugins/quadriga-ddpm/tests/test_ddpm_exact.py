"""Exact checks: K = 1 output law, TV/KL formulas, schedules, analytic noised score."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from quadriga_ddpm.gaussian_exact import kl_isotropic, output_law, tv_isotropic
from quadriga_ddpm.sampler import DDIM, DDPM
from quadriga_ddpm.schedules import alpha_bars, cosine_betas, linear_betas, theory_betas
from quadriga_ddpm.targets import SphereMixture
from scipy import stats


def _target(d: int, k: int, sigma: float, seed: int = 0) -> SphereMixture:
    t = SphereMixture(dim=d, num_components=k, scale=sigma)
    t.prepare(generator=torch.Generator().manual_seed(seed))
    return t


@pytest.mark.parametrize(
    "sampler",
    [
        DDPM(num_steps=15, num_samples=20000, schedule="theory"),
        DDPM(num_steps=15, num_samples=20000, schedule="linear", variance="posterior"),
        DDIM(num_steps=15, num_samples=20000, schedule="cosine", eta=0.0),
        DDIM(num_steps=15, num_samples=20000, schedule="theory", eta=0.5),
    ],
)
def test_k1_recursion_matches_sampled_moments(sampler):
    d, sigma = 3, 2.0
    target = _target(d, 1, sigma)
    mu = target.component_means[0]
    x = sampler.sample(target, generator=torch.Generator().manual_seed(1)).x
    kw = (
        {"method": "ddpm", "variance": sampler.variance}
        if isinstance(sampler, DDPM)
        else {"method": "ddim", "eta": sampler.eta}
    )
    m, s2 = output_law(sampler.betas(), sigma**2, **kw)
    n = x.shape[0]
    # mean: every coordinate within 4.5 standard errors
    z_mean = (x.mean(0) - m * mu) / math.sqrt(s2 / n)
    assert z_mean.abs().max() < 4.5
    # covariance: diagonal within 4.5 s.e. of a variance, off-diagonal near zero
    cov = torch.cov(x.T)
    assert ((torch.diagonal(cov) - s2).abs() / (s2 * math.sqrt(2 / n))).max() < 4.5
    off = cov - torch.diag(torch.diagonal(cov))
    assert (off.abs() / (s2 / math.sqrt(n))).max() < 4.5
    # the recursion is not trivially the target: at T = 15 and sigma = 2 the variance is off
    assert abs(s2 - sigma**2) > 0.01


def test_sigma_one_keeps_variance_and_only_init_error_remains():
    betas = theory_betas(50)
    m, s2 = output_law(betas, 1.0)
    assert s2 == pytest.approx(1.0, abs=1e-12)
    assert 1 - m == pytest.approx(float(alpha_bars(betas)[-1]), rel=1e-9)


def test_tv_matches_one_dimensional_integral_and_monte_carlo():
    grid = np.linspace(-40, 40, 800001)
    for gap, s2, r2 in [(0.5, 1.0, 1.0), (0.3, 1.7, 1.0), (0.0, 0.6, 1.0)]:
        ref = 0.5 * np.trapezoid(
            np.abs(stats.norm.pdf(grid, 0, s2**0.5) - stats.norm.pdf(grid, gap, r2**0.5)), grid
        )
        assert tv_isotropic(gap, s2, r2, 1) == pytest.approx(ref, abs=1e-7)
    # same mean, d = 40: TV = |F_chi2(t / s2) - F_chi2(t / r2)| at the crossing radius t
    d, s2, r2 = 40, 1.1, 1.0
    t = d * math.log(s2 / r2) / (1 / r2 - 1 / s2)
    ref = abs(stats.chi2.cdf(t / s2, d) - stats.chi2.cdf(t / r2, d))
    assert tv_isotropic(0.0, s2, r2, d) == pytest.approx(ref, abs=1e-9)
    # shifted and scaled, d = 6: Monte Carlo E_P[(1 - q/p)_+]
    d, gap, s2, r2 = 6, 0.4, 1.3, 1.0
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(200000, d)) * s2**0.5
    b = np.zeros(d)
    b[0] = gap
    lp = stats.multivariate_normal(np.zeros(d), s2 * np.eye(d)).logpdf(xs)
    lq = stats.multivariate_normal(b, r2 * np.eye(d)).logpdf(xs)
    mc = np.maximum(0, 1 - np.exp(lq - lp))
    assert abs(tv_isotropic(gap, s2, r2, d) - mc.mean()) < 4 * mc.std() / math.sqrt(mc.size)


def test_kl_matches_torch_distributions():
    d, gap, s2, r2 = 5, 0.7, 1.4, 0.8
    p = torch.distributions.MultivariateNormal(
        torch.zeros(d, dtype=torch.float64), s2 * torch.eye(d, dtype=torch.float64)
    )
    loc = torch.zeros(d, dtype=torch.float64)
    loc[2] = gap
    q = torch.distributions.MultivariateNormal(loc, r2 * torch.eye(d, dtype=torch.float64))
    assert kl_isotropic(gap, s2, r2, d) == pytest.approx(
        float(torch.distributions.kl_divergence(p, q)), rel=1e-10
    )


def test_schedules():
    T = 100
    b = theory_betas(T, c0=2.0, c1=4.0)
    rate = 4 * math.log(T) / T
    assert float(b[0]) == pytest.approx(T**-2.0)
    assert float(b[1]) == pytest.approx(rate * T**-2.0 * (1 + rate))
    assert float(b[-1]) == pytest.approx(rate)  # plateau reached
    lin = linear_betas(1000)
    assert float(lin[0]) == pytest.approx(1e-4) and float(lin[-1]) == pytest.approx(0.02)
    cos = cosine_betas(T)
    s = 0.008
    f = lambda u: math.cos((u + s) / (1 + s) * math.pi / 2) ** 2  # noqa: E731
    assert float(alpha_bars(cos)[T // 2 - 1]) == pytest.approx(f(0.5) / f(0.0), rel=1e-9)


@pytest.mark.parametrize("alpha_bar", [1.0, 0.37, "per-row"])
def test_noised_score_is_gradient_of_noised_log_prob(alpha_bar):
    target = _target(5, 3, 0.7)
    x = (
        torch.randn(8, 5, generator=torch.Generator().manual_seed(2), dtype=torch.float64) * 3
    ).requires_grad_()
    ab = torch.linspace(0.05, 1.0, 8, dtype=torch.float64) if alpha_bar == "per-row" else alpha_bar
    (grad,) = torch.autograd.grad(target.noised_log_prob(x, ab).sum(), x)
    assert torch.allclose(target.noised_score(x.detach(), ab), grad, atol=1e-10)
    # and the fast isotropic path agrees with quadriga-std's general mixture
    assert torch.allclose(
        target.noised_score(x.detach(), ab), target._gmm.noised_score(x.detach(), ab), atol=1e-10
    )
    assert torch.allclose(
        target.noised_log_prob(x.detach(), ab), target._gmm.noised_log_prob(x.detach(), ab), atol=1e-10
    )
