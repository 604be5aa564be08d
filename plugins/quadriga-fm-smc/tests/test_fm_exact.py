"""Closed-form checks: the exact flow-matching velocity, its transport, and the posterior formula."""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_fm_smc.flows import ode_step
from quadriga_fm_smc.mixture_flow import GaussianMixtureLaw
from quadriga_fm_smc.tasks import LinearGaussianPosterior


def _law(d: int = 2) -> GaussianMixtureLaw:
    g = torch.Generator().manual_seed(3)
    k = 3
    means = 2.0 * torch.randn(k, d, generator=g, dtype=torch.float64)
    a = torch.randn(k, d, d, generator=g, dtype=torch.float64)
    covs = 0.2 * a @ a.transpose(-1, -2) + 0.1 * torch.eye(d, dtype=torch.float64)
    return GaussianMixtureLaw(torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64), means, covs)


@pytest.mark.parametrize("t", [0.0, 0.3, 0.7, 0.95])
def test_score_matches_autograd_and_the_velocity_identity(t):
    law = _law()
    x = torch.randn(7, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64).requires_grad_(
        True
    )
    (auto,) = torch.autograd.grad(law.log_prob_t(x, t).sum(), x)
    x = x.detach()
    assert torch.allclose(law.score_t(x, t), auto, atol=1e-10)
    # Tweedie: grad log p_t = (t v - x) / (1 - t)
    assert torch.allclose((t * law.velocity(x, t) - x) / (1 - t), auto, atol=1e-9)


def test_velocity_at_t0_is_mean_minus_x():
    law = _law()
    x = torch.randn(5, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert torch.allclose(law.velocity(x, 0.0), law.mean - x, atol=1e-12)


def test_continuity_equation_in_1d():
    """d/dt p_t + d/dx (p_t v) = 0 by central differences (h = 1e-4) on a grid, float64."""
    law = GaussianMixtureLaw([0.6, 0.4], [[-1.5], [2.0]], [[[0.3]], [[0.6]]])
    x = torch.linspace(-4, 4, 81, dtype=torch.float64).reshape(-1, 1)
    h = 1e-4

    def p(z, s):
        return law.log_prob_t(z, s).exp()

    def flux(z, s):
        return p(z, s) * law.velocity(z, s)[:, 0]

    for t in (0.2, 0.5, 0.8):
        dp_dt = (p(x, t + h) - p(x, t - h)) / (2 * h)
        dflux = (flux(x + h, t) - flux(x - h, t)) / (2 * h)
        assert (dp_dt + dflux).abs().max() < 1e-6 * max(1.0, float(dp_dt.abs().max()))


def test_heun_flow_transports_noise_to_the_mixture():
    """ODE samples at t = 1 match the mixture's mean, covariance and component masses (4 SE)."""
    law = _law()
    n, steps = 4000, 100
    x = torch.randn(n, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    for k in range(steps):
        t = k / steps
        x, _ = ode_step(law.velocity, x, t, 1 / steps, law.velocity(x, t), "heun")
    se = (law.covariance.diagonal() / n).sqrt()
    assert ((x.mean(0) - law.mean).abs() < 4 * se).all()
    cov = torch.cov(x.T)
    # SE of a sample variance ~ sqrt(2 / n) sigma^2 (Gaussian value; mixtures are heavier, so 6 SE)
    assert (
        (cov.diagonal() - law.covariance.diagonal()).abs() < 6 * math.sqrt(2 / n) * law.covariance.diagonal()
    ).all()
    mass = torch.bincount(law.component_log_probs(x).argmax(-1), minlength=3).double() / n
    exact = (
        torch.bincount(
            law.component_log_probs(law.sample(200000, generator=torch.Generator().manual_seed(9))).argmax(
                -1
            ),
            minlength=3,
        ).double()
        / 200000
    )
    assert ((mass - exact).abs() < 4 * (exact * (1 - exact) / n).sqrt() + 1e-3).all()


def test_posterior_against_numerical_integration_in_1d():
    prior = GaussianMixtureLaw([0.3, 0.7], [[-2.0], [1.0]], [[[0.5]], [[0.2]]])
    A, y, s = torch.tensor([[1.5]], dtype=torch.float64), torch.tensor([0.4], dtype=torch.float64), 0.7
    post, log_z = prior.posterior(A, y, s)
    x = torch.linspace(-10, 10, 200001, dtype=torch.float64).reshape(-1, 1)
    lik = torch.exp(-0.5 * ((y - 1.5 * x[:, 0]) / s) ** 2) / (s * math.sqrt(2 * math.pi))
    joint = prior.log_prob(x).exp() * lik
    dx = float(x[1, 0] - x[0, 0])
    z = float(torch.trapezoid(joint, dx=dx))
    assert abs(z - math.exp(log_z)) < 1e-9 * z + 1e-12
    dens = joint / z
    assert float((dens - post.log_prob(x).exp()).abs().max()) < 1e-8
    m = float(torch.trapezoid(dens * x[:, 0], dx=dx))
    assert abs(m - float(post.mean)) < 1e-8


def test_task_log_prob_is_prior_plus_likelihood_and_normalises_to_the_posterior():
    task = LinearGaussianPosterior(dim=3, num_components=2, obs_dim=2, observation="gaussian")
    task.prepare(generator=torch.Generator().manual_seed(4))
    x = task.sample(50, generator=torch.Generator().manual_seed(5))
    assert torch.allclose(task.log_prob(x) - task.log_evidence, task.posterior.log_prob(x), atol=1e-9)
    xg = x.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(task.log_prob(xg).sum(), xg)
    assert torch.allclose(task.score(x), g, atol=1e-8)
