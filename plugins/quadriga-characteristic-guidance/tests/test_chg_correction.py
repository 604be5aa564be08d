"""Closed forms of the characteristic correction and of the samplers built on it."""

from __future__ import annotations

import pytest
import torch
from quadriga_characteristic_guidance.correction import characteristic_correction
from quadriga_characteristic_guidance.sampler import CharacteristicDDIM, CharacteristicDDPM
from quadriga_ddpm.conditional import ConditionalGaussianMixture
from quadriga_ddpm.sampler import DDIM, DDPM


class _Gaussian:
    """Exact noised score of N(mu, diag(v)): (sqrt(ab) mu - x) / (ab v + 1 - ab)."""

    def __init__(self, mu, v):
        self.mu = torch.tensor(mu, dtype=torch.float64)
        self.v = torch.tensor(v, dtype=torch.float64)
        self.dim = len(mu)

    def __call__(self, x, t, ab):
        return (ab**0.5 * self.mu - x) / (ab * self.v + 1 - ab)


COND, UNCOND = _Gaussian([1.0, 0.5], [0.5, 2.0]), _Gaussian([-1.0, 0.0], [0.5, 2.0])


@pytest.mark.parametrize("ab", [0.01, 0.5, 0.99])
@pytest.mark.parametrize("memory", [0, 2])
def test_equal_covariance_gaussians_fixed_point_and_cfg_in_closed_form(ab, memory):
    # s_c(x + w D) - s_u(x + (1 + w) D) = C^-1 (sqrt(ab) (mu_c - mu_u) + D), so the fixed point of
    # D = sigma^2 (...) is D* = sigma^2 / sqrt(ab) Sigma^-1 (mu_c - mu_u), and the shifts cancel in the
    # output: characteristic guidance is exactly CFG for two Gaussians of one covariance
    x = torch.randn(6, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    out = characteristic_correction(
        COND, UNCOND, x, 0, ab, 3.0, tol=1e-11, max_iterations=5000 if memory == 0 else 50, memory=memory
    )
    expected = (1 - ab) / ab**0.5 * (COND.mu - UNCOND.mu) / COND.v
    assert bool(out.converged.all())
    torch.testing.assert_close(out.dx, expected.expand(6, 2), rtol=1e-8, atol=1e-9)
    cfg = 4 * COND(x, 0, ab) - 3 * UNCOND(x, 0, ab)
    torch.testing.assert_close(out.score, cfg, rtol=0, atol=1e-9)
    if memory == 2:  # Anderson solves a linear fixed point in a few iterations
        assert int(out.iterations.max()) <= 6


def test_zero_iterations_is_cfg_bit_for_bit():
    x = torch.randn(6, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    out = characteristic_correction(COND, UNCOND, x, 0, 0.4, 7.0, max_iterations=0)
    assert not bool(out.converged.any()) and torch.equal(out.dx, torch.zeros_like(x))
    assert torch.equal(out.score, 8.0 * COND(x, 0, 0.4) - 7.0 * UNCOND(x, 0, 0.4))


def test_correction_is_zero_where_the_two_scores_agree():
    # Dx = 0 solves the fixed point wherever s_c = s_u (an uninformative condition): no shift, CFG
    same = _Gaussian([0.3, -0.2], [1.5, 0.7])
    x = torch.randn(5, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    out = characteristic_correction(same, same, x, 0, 0.3, 7.0)
    assert bool(out.converged.all()) and int(out.iterations.max()) == 1
    assert torch.equal(out.dx, torch.zeros_like(x))
    torch.testing.assert_close(out.score, same(x, 0, 0.3), rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def target():
    return ConditionalGaussianMixture(preset="3-class-2d", grid_size=100)


KW = {"num_steps": 15, "num_samples": 200}


@pytest.mark.parametrize(("chg", "base"), [(CharacteristicDDIM, DDIM), (CharacteristicDDPM, DDPM)])
def test_weights_zero_and_minus_one_reduce_to_the_conditional_and_unconditional_samplers(chg, base, target):
    g = torch.Generator
    cond = base(**KW).sample(target, generator=g().manual_seed(0)).x
    uncond = base(**KW).sample(target.unconditional_target, generator=g().manual_seed(0)).x
    assert torch.equal(chg(guidance=0.0, **KW).sample(target, generator=g().manual_seed(0)).x, cond)
    assert torch.equal(chg(guidance=-1.0, **KW).sample(target, generator=g().manual_seed(0)).x, uncond)


def test_no_iterations_reproduces_the_cfg_baseline_bit_for_bit(target):
    g = torch.Generator
    cfg = DDIM(guidance=7.0, **KW).sample(target, generator=g().manual_seed(3)).x
    chg = CharacteristicDDIM(guidance=7.0, max_iterations=0, **KW).sample(
        target, generator=g().manual_seed(3)
    )
    assert torch.equal(chg.x, cfg)
    assert chg.info["chg_converged_fraction"] == 0.0


def test_convergence_is_recorded_and_the_correction_moves_samples(target):
    s = CharacteristicDDIM(guidance=3.0, **KW).sample(target, generator=torch.Generator().manual_seed(4))
    info = s.info
    assert info["chg_steps"] == KW["num_steps"] and info["guidance"] == 3.0
    assert 0.95 <= info["chg_converged_fraction"] <= 1.0
    assert 0 < info["chg_min_step_converged_fraction"] <= info["chg_converged_fraction"]
    assert info["chg_correction_rms"] > 0.01 and info["chg_mean_iterations"] >= 1
    assert info["score_evals"] > 2 * KW["num_samples"] * KW["num_steps"]  # the iterations cost evaluations
    cfg = DDIM(guidance=3.0, **KW).sample(target, generator=torch.Generator().manual_seed(4)).x
    assert not torch.equal(s.x, cfg)


def test_identity_projection_without_regularisation_matches_anderson_and_picard():
    x = torch.randn(4, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    t = ConditionalGaussianMixture(preset="3-class-2d", grid_size=100)
    from quadriga_ddpm.guidance import score_pair

    c, u = score_pair(t)
    a = characteristic_correction(c, u, x, 0, 0.6, 1.0, tol=1e-10, memory=2, max_iterations=200)
    p = characteristic_correction(c, u, x, 0, 0.6, 1.0, tol=1e-10, memory=0, max_iterations=5000)
    assert bool(a.converged.all()) and bool(p.converged.all())
    torch.testing.assert_close(a.dx, p.dx, rtol=1e-6, atol=1e-8)
    assert int(a.iterations.max()) < int(p.iterations.max())


def test_bad_options_are_errors():
    from quadriga.errors import ConfigError

    with pytest.raises(ValueError, match="projection"):
        characteristic_correction(
            COND, UNCOND, torch.zeros(1, 2, dtype=torch.float64), 0, 0.5, 1.0, projection="x"
        )
    with pytest.raises(ConfigError):
        CharacteristicDDIM(projection="pca")
    with pytest.raises(ConfigError):
        CharacteristicDDIM(guidance=-2.0)
