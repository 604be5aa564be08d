"""SR-MALA's cached loop equals a direct transcription of Algorithm 1, draw for draw.

The reference below evaluates every quantity afresh at each iteration (no cache, no prefetch, no
reuse of the proposal's values): MALA on the surrogate pi_theta(x) ~ pi(x) exp(-alpha theta^T s(x))
with the shifted drift s(x - alpha theta), then theta_n = theta_{n-1} + gamma_n (s(X_n) - theta_{n-1}).
It consumes the generator in the same order as quadriga-std's MALA kernel (one normal draw for the
proposal, one uniform for the accept step), so the chains must agree to rounding (1e-12).
"""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_srmc.sampler import SRMC
from quadriga_srmc.schedules import alpha_at, theta_gain
from quadriga_std.samplers.mcmc import MALA
from quadriga_std.targets.gaussian import Gaussian


def reference_sr_mala(target, *, h, alpha, c, steps, burn_in, rho, theta_step, schedule, seed):
    """Algorithm 1 of Hu et al. 2026 with a MALA base kernel and the shifted drift, written plainly."""
    gen = torch.Generator().manual_seed(seed)
    x = target.sample(c, generator=gen).to(torch.float64)
    theta = torch.zeros_like(x)
    kept = []
    for n in range(1, burn_in + steps + 1):
        a = alpha_at(n, alpha=alpha, schedule=schedule, warmup=1000, scale=100.0)

        def log_sur(z, a=a, theta=theta):
            return target.log_prob(z) - a * (theta * target.score(z)).sum(-1)

        def drift(z, a=a, theta=theta):
            return target.score(z - a * theta) if a != 0.0 else target.score(z)

        gx = drift(x)
        y = x + h * gx + math.sqrt(2 * h) * torch.randn(x.shape, generator=gen, dtype=x.dtype)
        gy = drift(y)
        fwd = ((y - x - h * gx) ** 2).sum(-1)
        bwd = ((x - y - h * gy) ** 2).sum(-1)
        log_ratio = log_sur(y) - log_sur(x) + (fwd - bwd) / (4 * h)
        u = torch.rand(log_ratio.shape, generator=gen, dtype=log_ratio.dtype)
        accepted = (torch.log(u) < log_ratio) & torch.isfinite(log_ratio)
        x = torch.where(accepted[:, None], y, x)
        if alpha != 0.0:
            theta = theta + theta_gain(n, theta_step=theta_step, rho=rho) * (target.score(x) - theta)
        if n > burn_in:
            kept.append(x)
    return torch.stack(kept, 1), theta


@pytest.mark.parametrize(
    ("d", "alpha", "schedule", "seed"),
    [(3, 1.0, "fixed", 0), (20, 0.5, "warmup", 1), (5, 2.0, "adaptive", 2), (4, 0.0, "fixed", 3)],
)
def test_sr_mala_shifted_equals_the_plain_algorithm(d, alpha, schedule, seed):
    target = Gaussian(dim=d, equicorrelation=0.5)
    c, steps, burn_in, h = 6, 60, 15, 0.1
    sr = SRMC(
        base_kernel=MALA(step_size=h, init="target"),
        alpha=alpha,
        alpha_schedule=schedule,
        alpha_warmup=1000,
        drift="shifted",
        num_chains=c,
        num_steps=steps,
        burn_in=burn_in,
    )
    out = sr.run(target, generator=torch.Generator().manual_seed(seed))
    kept, theta = reference_sr_mala(
        target,
        h=h,
        alpha=alpha,
        c=c,
        steps=steps,
        burn_in=burn_in,
        rho=sr.rho,
        theta_step=sr.theta_step,
        schedule=schedule,
        seed=seed,
    )
    torch.testing.assert_close(out.kept, kept, rtol=0, atol=1e-12)
    torch.testing.assert_close(out.theta, theta, rtol=0, atol=1e-12)
    assert 0 < out.accepted < out.proposals  # the comparison covers accepted and rejected moves


def test_running_mean_store_equals_the_mean_of_the_draws():
    target = Gaussian(dim=4, equicorrelation=0.3)
    kw = dict(
        base_kernel=MALA(step_size=0.1, init="target"), alpha=1.0, num_chains=3, num_steps=50, burn_in=5
    )
    draws = SRMC(**kw).run(target, generator=torch.Generator().manual_seed(4)).kept
    mean = SRMC(store="running-mean", **kw).run(target, generator=torch.Generator().manual_seed(4)).kept
    torch.testing.assert_close(mean[:, 0], draws.mean(1), rtol=0, atol=1e-12)
