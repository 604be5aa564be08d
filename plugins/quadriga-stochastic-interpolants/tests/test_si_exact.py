"""Closed-form checks: endpoints, the objectives' minimisers and the integrators on Gaussian endpoints."""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_stochastic_interpolants.gaussian_exact import GaussianFields
from quadriga_stochastic_interpolants.interpolants import Interpolant, objectives
from quadriga_stochastic_interpolants.sampler import transport

F64 = torch.float64
CASES = [("linear", 1.0), ("trig", 0.5), ("linear", 0.0)]


def _fields(path: str, a: float, drift_error=None) -> GaussianFields:
    return GaussianFields(
        interpolant=Interpolant(path=path, gamma_scale=a),
        m0=torch.tensor([-1.0, 2.0], dtype=F64),
        v0=torch.tensor([0.5, 2.0], dtype=F64),
        m1=torch.tensor([3.0, 0.0], dtype=F64),
        v1=torch.tensor([1.5, 0.3], dtype=F64),
        drift_error=drift_error,
    )


def _x0(f: GaussianFields, n: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return f.m0 + f.v0.sqrt() * torch.randn(n, 2, generator=g, dtype=F64)


@pytest.mark.parametrize("path,a", CASES)
def test_marginals_at_the_ends_are_the_two_densities(path, a):
    itp = Interpolant(path=path, gamma_scale=a)
    g = torch.Generator().manual_seed(0)
    x0, x1, z = (torch.randn(50, 3, generator=g, dtype=F64) for _ in range(3))
    for t, want in ((0.0, x0), (1.0, x1)):
        tt = torch.full((50, 1), t, dtype=F64)
        xp, xm = itp.sample_xt(tt, x0, x1, z)
        torch.testing.assert_close(xp, want, atol=1e-12, rtol=0)
        torch.testing.assert_close(xm, want, atol=1e-12, rtol=0)
    tt = torch.full((1, 1), 0.5, dtype=F64)
    assert float(itp.gamma(tt)) == pytest.approx(math.sqrt(a * 0.25))


@pytest.mark.parametrize("path,a", CASES)
def test_least_squares_minimiser_of_the_objectives_is_the_closed_form_field(path, a):
    # L_b and L_eta are least-squares regressions; at fixed t, b and eta are affine in x for Gaussian
    # endpoints, so the affine least-squares fit on many draws must recover the closed form.
    f = _fields(path, a)
    itp = f.interpolant
    g = torch.Generator().manual_seed(1)
    n = 200_000
    for t in (0.2, 0.5, 0.8):
        tt = torch.full((n, 1), t, dtype=F64)
        x0 = _x0(f, n, 2)
        x1 = f.m1 + f.v1.sqrt() * torch.randn(n, 2, generator=g, dtype=F64)
        z = torch.randn(n, 2, generator=g, dtype=F64)
        xt, _ = itp.sample_xt(tt, x0, x1, z)
        design = torch.cat([torch.ones(n, 1, dtype=F64), xt], dim=1)
        coef_b = torch.linalg.lstsq(design, itp.velocity_target(tt, x0, x1, z)).solution
        probe = torch.tensor([[0.0, 0.0], [1.0, -1.0], [2.0, 1.0]], dtype=F64)
        pd = torch.cat([torch.ones(3, 1, dtype=F64), probe], dim=1)
        torch.testing.assert_close(pd @ coef_b, f.velocity(t, probe), atol=0.03, rtol=0.01)
        if a > 0:
            coef_eta = torch.linalg.lstsq(design, z).solution
            torch.testing.assert_close(pd @ coef_eta, f.denoiser(t, probe), atol=0.01, rtol=0.01)


@pytest.mark.parametrize("path,a", CASES[:2])
def test_objective_excess_at_a_shifted_field_is_half_the_squared_shift(path, a):
    # L_b[b + c] - L_b[b] = E[(b - target) . c] + |c|^2 / 2, and E[(b - target) . c] = 0 at the minimiser.
    f = _fields(path, a)
    c = torch.tensor([0.3, -0.2], dtype=F64)
    n = 400_000
    x0 = _x0(f, n, 3)
    x1 = f.m1 + f.v1.sqrt() * torch.randn(n, 2, generator=torch.Generator().manual_seed(4), dtype=F64)
    vals = []
    for field in (f.velocity, lambda t, x: f.velocity(t, x) + c):
        gen = torch.Generator().manual_seed(5)
        vals.append(
            float(objectives(f.interpolant, field, f.denoiser, x0, x1, generator=gen, t_clip=0.05)["loss_b"])
        )
    assert vals[1] - vals[0] == pytest.approx(0.5 * float(c.square().sum()), abs=0.01)


@pytest.mark.parametrize("path,a", CASES)
@pytest.mark.parametrize("method", ["rk4", "dopri5"])
def test_probability_flow_with_the_exact_drift_is_the_closed_form_map(path, a, method):
    f = _fields(path, a)
    x0 = _x0(f, 500, 6)
    x1, counts = transport(
        f, x0, generator=torch.Generator(), ode_method=method, num_steps=200, rtol=1e-9, atol=1e-9
    )
    torch.testing.assert_close(x1, f.flow_map(1.0, x0), atol=1e-6, rtol=0)
    assert counts["score_evals"] == 0 and counts["velocity_evals"] > 0


@pytest.mark.parametrize("path,a", CASES[:2])
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_sde_with_the_exact_fields_gives_the_exact_marginal(path, a, epsilon):
    f = _fields(path, a)
    n = 10_000
    x1, _ = transport(
        f,
        _x0(f, n, 7),
        generator=torch.Generator().manual_seed(8),
        epsilon=epsilon,
        num_steps=200,
        sde_method="heun",
        t_clip=0.01,
    )
    mean_se = (f.v1 / n).sqrt()
    var_se = f.v1 * math.sqrt(2 / n)
    assert torch.all((x1.mean(0) - f.m1).abs() < 4 * mean_se + 0.01)
    assert torch.all((x1.var(0) - f.v1).abs() < 4 * var_se + 0.01)


def test_sde_with_a_wrong_drift_is_closer_to_rho1_than_the_ode():
    # A known drift error (a rotation) biases the ODE; eps > 0 damps it (the paper's Sec. 2.4 mechanism).
    rot = lambda t, x: 1.0 * torch.stack([-x[:, 1], x[:, 0]], dim=1)  # noqa: E731
    f = _fields("linear", 1.0, drift_error=rot)
    n = 20_000
    x0 = _x0(f, n, 9)
    err = {}
    for eps in (0.0, 1.0):
        x1, _ = transport(f, x0, generator=torch.Generator().manual_seed(10), epsilon=eps, num_steps=400)
        err[eps] = float((x1.mean(0) - f.m1).norm() + (x1.var(0) - f.v1).norm())
    assert err[1.0] < 0.5 * err[0.0]


def test_gaussian_base_one_sided_is_flow_matching_and_diffusion():
    itp = Interpolant(path="linear", gamma_scale=0.0, gaussian_source=True)
    assert itp.one_sided and itp.has_score
    g = torch.Generator().manual_seed(11)
    t = torch.rand(100, 1, generator=g, dtype=F64)
    x0, x1, z = (torch.randn(100, 2, generator=g, dtype=F64) for _ in range(3))
    xt, _ = itp.sample_xt(t, x0, x1, z)
    # conditional flow matching with sigma_min = 0 (Lipman et al. 2023, eq. 22-23)
    torch.testing.assert_close(xt, (1 - t) * x0 + t * x1)
    torch.testing.assert_close(itp.velocity_target(t, x0, x1, z), x1 - x0)
    # one-sided trig path = variance-preserving diffusion with abar(t) = sin^2(pi t / 2): the score from
    # the x0-denoiser, -E[x0 | x] / alpha, is the diffusion score of N(sqrt(abar) m, abar v + 1 - abar)
    vp = Interpolant(path="trig", gamma_scale=0.0, gaussian_source=True)
    f = GaussianFields(
        interpolant=vp,
        m0=torch.zeros(2, dtype=F64),
        v0=torch.ones(2, dtype=F64),
        m1=torch.tensor([1.0, -2.0], dtype=F64),
        v1=torch.tensor([0.5, 3.0], dtype=F64),
    )
    tt = torch.full((100, 1), 0.4, dtype=F64)
    abar = math.sin(0.5 * math.pi * 0.4) ** 2
    diffusion_score = -(xt - math.sqrt(abar) * f.m1) / (abar * f.v1 + 1 - abar)
    torch.testing.assert_close(vp.score_from_denoiser(tt, f.denoiser(0.4, xt)), diffusion_score)
    torch.testing.assert_close(f.score(0.4, xt), diffusion_score)
