"""DPM-Solver-v3: EMS in closed form on a Gaussian, exactness of the first-order step, degeneration."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_ddpm.noise_schedule import NoiseSchedule
from quadriga_ddpm.ode_samplers import DPMSolverPP
from quadriga_ddpm.probability_flow import draw_x_T, gaussian_flow
from quadriga_ddpm.score_models import as_score_model
from quadriga_ddpm.solvers import dpm_solver_pp
from quadriga_dpm_solver_v3.ems import compute_ems, degenerate_ems
from quadriga_dpm_solver_v3.sampler import DPMSolverV3
from quadriga_dpm_solver_v3.solver import dpm_solver_v3
from quadriga_std.targets.gaussian import GaussianMixture

from quadriga.errors import ConfigError

MEAN, VAR = torch.tensor([1.0, -2.0], dtype=torch.float64), torch.tensor([0.25, 4.0], dtype=torch.float64)
SCHED = NoiseSchedule()


@pytest.fixture(scope="module")
def gauss():
    return as_score_model(GaussianMixture(means=[MEAN.tolist()], scale=VAR.sqrt().tolist()))


@pytest.fixture(scope="module")
def x_T():
    return draw_x_T(SCHED, 100, 2, torch.Generator().manual_seed(0))


def _ems(model, points):
    cal = draw_x_T(SCHED, 16, 2, torch.Generator().manual_seed(1))
    return compute_ems(model, SCHED, cal, SCHED.lambda_steps(points))[0]


def test_ems_of_a_gaussian_are_the_closed_form(gauss):
    """l = sigma^2 / (alpha^2 v0 + sigma^2) per coordinate; N does not vary over x, so s = 0."""
    ems = _ems(gauss, 60)
    a, s = SCHED.alpha_sigma_of_lambda(torch.as_tensor(ems.lam))
    exact_l = (s[:, None] ** 2 / (a[:, None] ** 2 * VAR + s[:, None] ** 2)).numpy()
    np.testing.assert_allclose(ems.l, exact_l, rtol=1e-7, atol=1e-9)
    assert np.all(ems.s == 0.0)
    # b = dN/dlambda of N = -sigma^2 mu / (alpha v): compare with a finite difference of N
    lam = ems.lam

    def n_of(lm: np.ndarray) -> np.ndarray:
        """N = (sigma eps - l x) / alpha = -sigma^2 mu / (alpha^2 v0 + sigma^2), the same for every x."""
        a, s = (v[:, None] for v in SCHED.alpha_sigma_of_lambda(torch.as_tensor(lm)))
        return (-(s**2) * MEAN / (a**2 * VAR + s**2)).numpy()

    h = 1e-5
    np.testing.assert_allclose(ems.b, (n_of(lam + h) - n_of(lam - h)) / (2 * h), rtol=1e-5, atol=1e-6)
    assert ems.departure()["ems_l_departure"] > 0.3 and ems.departure()["ems_s_departure"] == 0.0


def test_first_order_v3_is_exact_on_a_gaussian_up_to_the_grid_quadrature(gauss, x_T):
    """The error to the closed-form flow at 5 NFE is set by the EMS grid (O(dlambda^2)), not the steps."""
    lam = SCHED.lambda_steps(5)
    exact = gaussian_flow(MEAN, VAR, SCHED, x_T, float(lam[0]), float(lam[-1]))

    def rms(x):
        return float((x - exact).square().sum(-1).mean().sqrt())

    coarse = rms(dpm_solver_v3(gauss, SCHED, _ems(gauss, 60), x_T, lam, order=1, corrector=False))
    fine = rms(dpm_solver_v3(gauss, SCHED, _ems(gauss, 240), x_T, lam, order=1, corrector=False))
    baseline = rms(dpm_solver_pp(gauss, SCHED, x_T, lam, order=2))
    assert fine < 5e-4 and coarse < 1e-2
    assert 10 < coarse / fine < 22  # 4x finer grid: 16x smaller error
    assert baseline > 100 * fine


@pytest.mark.parametrize("order", [1, 2, 3])
def test_degenerate_statistics_give_dpm_solver_pp(gauss, x_T, order):
    """l = 1, s = b = 0 and no corrector: DPM-Solver++ with exact phi functions (1: DDIM, 2, 3: 3M)."""
    for m in (5, 8):
        lam = SCHED.lambda_steps(m)
        ems = degenerate_ems(SCHED.lambda_steps(37).numpy(), 2)
        v3 = dpm_solver_v3(gauss, SCHED, ems, x_T, lam, order=order, corrector=False)
        torch.testing.assert_close(
            v3, dpm_solver_pp(gauss, SCHED, x_T, lam, order=order, exact_phi=True), rtol=1e-10, atol=1e-10
        )


def test_solver_refuses_steps_outside_the_statistics(gauss, x_T):
    ems = degenerate_ems(SCHED.lambda_steps(10).numpy(), 2)
    with pytest.raises(ConfigError, match="statistics cover"):
        dpm_solver_v3(gauss, SCHED, ems, x_T, NoiseSchedule(t_min=1e-4).lambda_steps(5))
    with pytest.raises(ConfigError, match="order"):
        dpm_solver_v3(gauss, SCHED, ems, x_T, SCHED.lambda_steps(5), order=4)


def test_sampler_shares_x_T_reuses_its_statistics_and_beats_dpm_solver_pp():
    target = GaussianMixture(preset="4-mode-2d")
    small = {"num_samples": 200}
    v3 = DPMSolverV3(nfe=6, ems_samples=64, ems_points=60, **small)
    first = v3.sample(target, generator=torch.Generator().manual_seed(7))
    again = DPMSolverV3(nfe=8, ems_samples=64, ems_points=60, **small).sample(
        target, generator=torch.Generator().manual_seed(7)
    )
    pp = DPMSolverPP(nfe=6, order=2, **small).sample(target, generator=torch.Generator().manual_seed(7))
    assert first.info["x_T_digest"] == pp.info["x_T_digest"] == again.info["x_T_digest"]
    assert first.info["nfe"] == 6 and first.info["ems_score_evals"] > 60 * 7
    assert first.info["ems_l_departure"] > 0.1 and first.info["ems_s_departure"] > 0.1
    assert again.info["seconds"] < first.info["seconds"]  # statistics computed once, reused
    from quadriga_ddpm.ode_samplers import ReferenceODE

    ref = ReferenceODE(**small).sample(target, generator=torch.Generator().manual_seed(7))
    err = {k: float((s.x - ref.x).square().sum(-1).mean().sqrt()) for k, s in (("v3", first), ("pp", pp))}
    assert err["v3"] < 0.8 * err["pp"]
