"""Deterministic sampler: the restoration + degradation identity against the diffusion kit's DDIM
step, Tweedie's restoration and a point mass in closed form, the evaluator, pipeline and claim."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_ddpm.noise_schedule import NoiseSchedule
from quadriga_ddpm.probability_flow import gaussian_flow, score_at
from quadriga_ddpm.score_models import AnalyticScore
from quadriga_ddpm.solvers import dpm_solver_pp
from quadriga_diagnostics.claims import det_sampler_order
from quadriga_diagnostics.det_sampler import (
    DeterministicSampler,
    batch_slopes,
    identity_gap,
    restoration_degradation_step,
)
from quadriga_std.targets.gaussian import GaussianMixture

from quadriga.claims import evaluate_claim
from quadriga.errors import ConfigError
from quadriga.registry import Registry


def _single(mean, scale):
    return AnalyticScore(GaussianMixture(means=[mean], scale=scale))


def test_restoration_is_tweedies_posterior_mean_of_a_gaussian():
    # x_0 ~ N(m, v I): E[x_0 | x_t] = m + alpha v / (alpha^2 v + sigma^2) (x_t - alpha m)
    m, s = torch.tensor([1.0, -0.5], dtype=torch.float64), 0.7
    model = _single(m.tolist(), s)
    alpha, sigma = 0.6, 0.8
    x = torch.randn(5, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    _, r = restoration_degradation_step(
        lambda y, a, b: score_at(model, y, a, b), x, alpha, sigma, 0.9, 0.4359
    )
    expected = m + alpha * s**2 / (alpha**2 * s**2 + sigma**2) * (x - alpha * m)
    assert torch.allclose(r, expected, atol=1e-12)


def test_composition_is_the_kits_ddim_step_to_rounding():
    model = AnalyticScore(GaussianMixture(preset="4-mode-2d"))
    schedule = NoiseSchedule(kind="vp-linear")
    g = torch.Generator().manual_seed(3)
    x = torch.randn(32, 2, generator=g, dtype=torch.float64)
    assert identity_gap(model, schedule, x, 10, g) < 1e-12


def test_one_step_is_exact_for_a_point_mass():
    # a (nearly) point-mass target: Tweedie's restoration is the point itself, so one DDIM step from
    # lambda_T lands on the exact flow's end point (kit's closed-form Gaussian flow)
    m = [0.8, -1.2]
    model = _single(m, 1e-5)
    schedule = NoiseSchedule(kind="vp-linear")
    lam_T, lam_0 = schedule.lambda_range()
    x_T = torch.randn(6, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    one = dpm_solver_pp(model, schedule, x_T, torch.tensor([lam_T, lam_0], dtype=torch.float64), order=1)
    exact = gaussian_flow(torch.tensor(m), torch.full((2,), 1e-10), schedule, x_T, lam_T, lam_0)
    assert torch.allclose(one, exact, atol=1e-6)


def test_evaluator_measures_first_order_and_the_identity():
    v = (
        DeterministicSampler(steps=[8, 16, 32], num_batches=2, batch_size=16, identity_pairs=4)
        .evaluate(generator=torch.Generator().manual_seed(0))
        .values
    )
    assert v["identity_gap"] < 1e-12 and v["identity_holds"] == 1.0
    assert v["predicted_slope"] == -1.0 and -1.3 < v["slope"] < -0.7
    assert v["error/N=8"] > v["error/N=32"] > 0


def test_batch_slopes_on_exact_power_laws():
    steps = [8, 16, 32, 64]
    n = np.array(steps, dtype=float)[:, None]
    noise = np.random.default_rng(0).normal(0.0, 0.1, (4, 3))
    errors = np.array([0.5, 2.0, 7.0]) * n ** np.array([-1.0, -2.0, -0.5]) * np.exp(noise)
    got = batch_slopes(steps, errors)
    want = [np.polyfit(np.log(steps), np.log(errors[:, j]), 1)[0] for j in range(3)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(batch_slopes(steps, errors / np.exp(noise)), [-1.0, -2.0, -0.5], atol=1e-12)
    # least squares is linear in log error: the mean slope is the slope of the mean log error
    assert np.isclose(got.mean(), np.polyfit(np.log(steps), np.log(errors).mean(axis=1), 1)[0])


def test_evaluator_per_batch_table():
    m = DeterministicSampler(steps=[8, 16, 32], num_batches=3, batch_size=16, identity_pairs=2).evaluate(
        generator=torch.Generator().manual_seed(0)
    )
    rows = m.tables["per_batch"]
    assert [r["batch"] for r in rows] == [0, 1, 2] and {r["sampler"] for r in rows} == {"DDIM"}
    slopes = np.array([r["slope"] for r in rows])
    np.testing.assert_allclose([r["slope_error"] for r in rows], slopes + 1.0, atol=1e-15)
    assert np.all((-1.3 < slopes) & (slopes < -0.7))
    # slope of the mean log error against the slope of the log mean error: a Jensen gap only
    assert abs(slopes.mean() - m.values["slope"]) < 0.01
    order2 = DeterministicSampler(order=2, steps=[8, 16, 32], num_batches=2, batch_size=8, identity_pairs=1)
    rows2 = order2.evaluate(generator=torch.Generator().manual_seed(0)).tables["per_batch"]
    assert {r["sampler"] for r in rows2} == {"2M"}
    np.testing.assert_allclose([r["slope_error"] for r in rows2], [r["slope"] + 2.0 for r in rows2])


def test_evaluator_refuses_two_step_counts():
    with pytest.raises(ConfigError):
        DeterministicSampler(steps=[8, 16])


def test_pipeline_runs_both_orders(tmp_path):
    import quadriga.api

    res = quadriga.api.run(
        "diag-det-sampler",
        overrides=[
            "stage.sampler.steps=[8, 16, 32]",
            "stage.sampler.num_batches=2",
            "stage.sampler.batch_size=8",
        ],
        out=tmp_path / "run",
    )
    assert res.artifacts["sampler[order=2]"].values["predicted_slope"] == -2.0


def test_det_sampler_claim_smoke(tmp_path):
    obs = det_sampler_order.observations("smoke", tmp_path, Registry(use_env=False))
    assert obs.numbers["identity_gap"] < 1e-8
    assert len(obs.values["DDIM"]) == 2 and obs.numbers["min_error"] > 0.1
    rec = evaluate_claim(det_sampler_order, obs, "smoke")
    assert rec["status"] == "ran"
