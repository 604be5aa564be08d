"""The diffusion ODE kit: schedules and their inverses, closed-form Gaussian flow, solver orders."""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_ddpm.noise_schedule import SCHEDULE_KINDS, NoiseSchedule
from quadriga_ddpm.ode_samplers import DPMSolverPP, ReferenceODE
from quadriga_ddpm.probability_flow import (
    data_prediction,
    draw_x_T,
    gaussian_flow,
    noise_prediction,
    reference_solve,
    score_at,
)
from quadriga_ddpm.score_models import as_score_model
from quadriga_ddpm.solver_error import SolverError
from quadriga_ddpm.solvers import dpm_solver_pp
from quadriga_std.targets.gaussian import GaussianMixture

from quadriga.artifacts import Samples
from quadriga.errors import ConfigError

MEAN, VAR = torch.tensor([1.0, -2.0], dtype=torch.float64), torch.tensor([0.25, 4.0], dtype=torch.float64)


@pytest.fixture(scope="module")
def gauss():
    """One diagonal Gaussian N(MEAN, diag(VAR)) with its exact noised score."""
    return as_score_model(GaussianMixture(means=[MEAN.tolist()], scale=VAR.sqrt().tolist()))


@pytest.mark.parametrize("kind", SCHEDULE_KINDS)
def test_schedule_inverse_and_lambda_maps_are_exact(kind):
    s = NoiseSchedule(kind=kind)
    t = torch.linspace(float(s.t_min), float(s.t_max), 9, dtype=torch.float64)
    lam = s.lam(t)
    assert bool((lam[1:] < lam[:-1]).all())  # lambda decreases in t
    torch.testing.assert_close(s.t_of_lambda(lam), t, rtol=1e-12, atol=1e-12)
    a, sg = s.alpha_sigma_of_lambda(lam)
    torch.testing.assert_close(a, s.alpha(t), rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(sg, s.sigma(t), rtol=1e-12, atol=1e-14)
    if s.variance_preserving:
        torch.testing.assert_close(a**2 + sg**2, torch.ones_like(a))
        # d log alpha / d lambda = sigma^2 (finite difference of the closed form)
        h = 1e-6
        fd = (
            torch.log(s.alpha_sigma_of_lambda(lam + h)[0]) - torch.log(s.alpha_sigma_of_lambda(lam - h)[0])
        ) / (2 * h)
        torch.testing.assert_close(fd, s.dlog_alpha_dlambda(lam), rtol=1e-6, atol=1e-9)


def test_vp_linear_matches_the_sde_marginal_of_song_et_al():
    s, t = NoiseSchedule(), 0.3
    log_mean = -0.25 * t**2 * (20 - 0.1) - 0.5 * t * 0.1  # Song et al. 2021, eq. 33
    assert float(s.alpha(t)) == pytest.approx(math.exp(log_mean), rel=1e-14)
    with pytest.raises(ConfigError, match="unknown schedule"):
        NoiseSchedule(kind="vp-quadratic")


def test_score_noise_and_data_predictions_of_a_gaussian_in_every_parameterization(gauss):
    x = torch.tensor([[0.3, 1.7], [-2.0, 0.5]], dtype=torch.float64)
    for alpha, sigma in ((0.6, 0.8), (1.0, 3.0)):  # VP and VE/EDM points
        v = alpha**2 * VAR + sigma**2
        exact = -(x - alpha * MEAN) / v
        torch.testing.assert_close(score_at(gauss, x, alpha, sigma), exact, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(noise_prediction(gauss, x, alpha, sigma), -sigma * exact)
        # Tweedie: E[x0 | x] = mean + alpha VAR / v (x - alpha mean)
        post = MEAN + alpha * VAR / v * (x - alpha * MEAN)
        torch.testing.assert_close(data_prediction(gauss, x, alpha, sigma), post, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["vp-linear", "edm"])
def test_reference_solve_matches_the_closed_form_gaussian_flow(gauss, kind):
    s = NoiseSchedule(kind=kind)
    x_T = draw_x_T(s, 50, 2, torch.Generator().manual_seed(0))
    lam = s.lambda_steps(4)
    xs, nfe = reference_solve(gauss, s, x_T, lam)
    assert nfe > 20
    for k in range(5):
        exact = gaussian_flow(MEAN, VAR, s, x_T, float(lam[0]), float(lam[k]))
        torch.testing.assert_close(xs[k], exact, rtol=1e-7, atol=1e-7 * float(x_T.abs().max()))


def test_dpm_solver_pp_converges_at_its_order(gauss):
    s = NoiseSchedule()
    x_T = draw_x_T(s, 100, 2, torch.Generator().manual_seed(1))

    def err(order: int, m: int) -> float:
        lam = s.lambda_steps(m)
        exact = gaussian_flow(MEAN, VAR, s, x_T, float(lam[0]), float(lam[-1]))
        return float((dpm_solver_pp(gauss, s, x_T, lam, order=order) - exact).square().sum(-1).mean().sqrt())

    errors = {p: (err(p, 40), err(p, 80)) for p in (1, 2, 3)}
    rates = {p: math.log2(e40 / e80) for p, (e40, e80) in errors.items()}
    assert 0.8 < rates[1] < 1.2
    assert 1.8 < rates[2] < 2.2
    # 3M: the exact integral of the quadratic interpolant is third order (here faster still); the
    # official code's half curvature term (D2 without its factor 2) would measure 2 here
    assert rates[3] > 2.7 and errors[3][1] < 0.05 * errors[2][1]


def test_first_order_step_is_ddim(gauss):
    """One order-1 step equals DDIM (Song et al. 2021, eq. 12, eta = 0) in alpha_bar form."""
    s = NoiseSchedule()
    x = draw_x_T(s, 20, 2, torch.Generator().manual_seed(2))
    lam = torch.tensor([-1.0, 0.5], dtype=torch.float64)
    (a0, a1), (s0, _) = (v.tolist() for v in s.alpha_sigma_of_lambda(lam))
    x0 = data_prediction(gauss, x, a0, s0)
    eps = noise_prediction(gauss, x, a0, s0)
    ddim = a1 * x0 + math.sqrt(1 - a1**2) * eps
    torch.testing.assert_close(dpm_solver_pp(gauss, s, x, lam, order=1), ddim, rtol=1e-12, atol=1e-12)


def test_solvers_share_x_T_and_solver_error_pairs_them():
    target = GaussianMixture(preset="4-mode-2d")
    gen = torch.Generator().manual_seed(3)
    ref = ReferenceODE(num_samples=64).sample(target, generator=gen)
    fast = DPMSolverPP(num_samples=64, nfe=5, order=2).sample(
        target, generator=torch.Generator().manual_seed(3)
    )
    fine = DPMSolverPP(num_samples=64, nfe=60, order=3).sample(
        target, generator=torch.Generator().manual_seed(3)
    )
    assert fast.info["x_T_digest"] == ref.info["x_T_digest"] == fine.info["x_T_digest"]
    other = ReferenceODE(num_samples=64).sample(target, generator=torch.Generator().manual_seed(4))
    m = SolverError().evaluate({"fast": fast, "fine": fine}, {"r0": other, "r1": ref}, generator=gen).values
    assert m["fast/nfe"] == 5 and m["fine/nfe"] == 60
    assert m["fine/rms_error"] < 1e-2 < 0.05 < m["fast/rms_error"] <= m["fast/max_error"]
    assert m["fast/rms_error"] == pytest.approx(float((fast.x - ref.x).square().sum(-1).mean().sqrt()))
    with pytest.raises(ConfigError, match="matches 0 references"):
        SolverError().evaluate({"fast": fast}, other, generator=gen)
    with pytest.raises(ConfigError, match="no x_T_digest"):
        SolverError().evaluate(Samples(x=fast.x), ref, generator=gen)


def test_score_error_is_the_closed_form_for_shifted_gaussians():
    """Subject N(mu + delta, s^2 I), reference N(mu, s^2 I): the score gap alpha delta / v at every x."""
    from quadriga_ddpm.score_error import ScoreError

    ref = GaussianMixture(means=[[0.5, -1.0]], scale=0.7)
    delta = torch.tensor([0.3, 0.4], dtype=torch.float64)
    sub = GaussianMixture(means=[(torch.tensor([0.5, -1.0]) + delta).tolist()], scale=0.7)
    m = ScoreError(num_samples=200, sigmas=[0.1, 0.6]).evaluate(
        {"sub": sub, "same": ref}, ref, generator=torch.Generator().manual_seed(0)
    )
    for sigma in (0.1, 0.6):
        alpha2 = 1 - sigma**2
        v = alpha2 * 0.49 + sigma**2
        assert m.values[f"sub/score_mse@sigma={sigma:g}"] == pytest.approx(alpha2 * 0.25 / v**2, rel=1e-10)
        assert m.values[f"same/score_mse@sigma={sigma:g}"] == 0.0
    with pytest.raises(ConfigError, match="sigmas"):
        ScoreError(sigmas=[0.0, 0.5])
