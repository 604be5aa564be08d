"""The guidance hook, the conditional mixture's guided law and the guided-density distance: closed forms."""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_ddpm.conditional import ConditionalGaussianMixture
from quadriga_ddpm.guidance import ClassifierFreeGuidance, guided_score_model
from quadriga_ddpm.guided_distance import GuidedDensityDistance, histogram_tv
from quadriga_ddpm.ode_samplers import DPMSolverPP
from quadriga_ddpm.sampler import DDIM, DDPM

from quadriga.errors import ConfigError


@pytest.fixture(scope="module")
def target():
    return ConditionalGaussianMixture(preset="3-class-2d", grid_size=200)


def _x(sampler, target, seed=0):
    return sampler.sample(target, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("cls", [DDIM, DDPM])
def test_weight_zero_and_minus_one_are_the_conditional_and_unconditional_samplers_exactly(cls, target):
    kw = {"num_steps": 20, "num_samples": 300}
    cond = _x(cls(**kw), target).x
    uncond = _x(cls(**kw), target.unconditional_target).x
    assert torch.equal(_x(cls(guidance=0.0, **kw), target).x, cond)
    assert torch.equal(_x(cls(guidance=-1.0, **kw), target).x, uncond)
    s = _x(cls(guidance=3.0, **kw), target)
    assert s.info["guidance"] == 3.0 and s.info["score_evals"] == 2 * 300 * 20
    assert not torch.equal(s.x, cond)


def test_ode_solver_takes_the_same_hook(target):
    a = _x(DPMSolverPP(nfe=6, num_samples=200, guidance=0.0), target).x
    b = _x(DPMSolverPP(nfe=6, num_samples=200), target).x
    assert torch.equal(a, b)


def test_guided_score_is_the_linear_combination(target):
    model = guided_score_model(target, 2.0)
    assert isinstance(model, ClassifierFreeGuidance)
    x = torch.randn(7, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    sc = target.conditional_target.noised_score(x, 0.3)
    su = target.unconditional_target.noised_score(x, 0.3)
    torch.testing.assert_close(model(x, 1, 0.3), 3 * sc - 2 * su, rtol=0, atol=1e-12)


def test_guidance_without_a_conditional_pair_is_a_config_error():
    from quadriga_std.targets.gaussian import GaussianMixture

    with pytest.raises(ConfigError, match="conditional"):
        DDIM(guidance=1.0, num_steps=5, num_samples=10).sample(
            GaussianMixture(preset="4-mode-2d"), generator=torch.Generator().manual_seed(0)
        )
    with pytest.raises(ConfigError):
        DDIM(guidance=-1.5)


def test_guided_law_normaliser(target):
    # w = 0 and w = -1 are normalised mixtures: log Z = 0 up to the midpoint rule
    assert abs(target.guided_grid(0.0).log_norm) < 1e-9
    assert abs(target.guided_grid(-1.0).log_norm) < 1e-9
    # 0 < log Z_w <= w log(1 / p(c)) (p(x | c) / p(x) = p(c | x) / p(c) <= 1 / p(c)), Jensen: Z_w >= 1
    for w in (1.0, 3.0, 7.0):
        z = target.guided_grid(w).log_norm
        assert 0 < z <= w * math.log(1 / target.class_probability) + 1e-9
    # the grid has converged: 200 and 400 points per axis agree
    fine = ConditionalGaussianMixture(preset="3-class-2d", grid_size=400)
    assert abs(fine.guided_grid(7.0).log_norm - target.guided_grid(7.0).log_norm) < 1e-6


def test_uninformative_label_makes_every_guided_law_the_mixture():
    t = ConditionalGaussianMixture(means=[[-1.0, 0.0], [1.0, 0.5]], labels=[0, 0], scale=0.7, grid_size=150)
    x = torch.randn(20, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    for w in (3.0, 7.0):
        torch.testing.assert_close(t.guided_log_prob(x, w), t.log_prob(x), rtol=0, atol=1e-9)


def test_bad_labels_are_config_errors():
    with pytest.raises(ConfigError, match="labels"):
        ConditionalGaussianMixture(means=[[0.0], [1.0]], labels=[0], scale=1.0)
    with pytest.raises(ConfigError, match="label 3"):
        ConditionalGaussianMixture(preset="3-class-2d", label=3)


def test_distance_is_near_its_floor_for_exact_draws_and_large_for_the_wrong_law(target):
    g = torch.Generator().manual_seed(3)
    grid = target.guided_grid(7.0)
    exact = grid.sample(2000, generator=g)
    assert histogram_tv(exact, grid, 20) < 0.08  # the finite-sample floor (~0.035 at n = 2000)
    wrong = target.sample(2000, generator=g)  # p(x | c), not p_7
    assert histogram_tv(wrong, grid, 20) > 0.3
    from quadriga import Samples

    ev = GuidedDensityDistance(num_bins=20, num_reference_samples=1000, guidance=7.0)
    m = ev.evaluate({"exact": Samples(x=exact), "wrong": Samples(x=wrong)}, target, generator=g)
    assert m.values["exact/energy_distance"] < 0.01 < m.values["wrong/energy_distance"]
    assert m.values["exact/off_support"] < 0.01
    with pytest.raises(ConfigError, match="guidance"):
        GuidedDensityDistance().evaluate(Samples(x=exact), target, generator=g)
