"""Closed forms and statistical bounds for the TSM, DSM and mixture regression targets."""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_ddpm.score_learner import ScoreNetwork
from quadriga_std.targets.gaussian import GaussianMixture
from quadriga_target_score_matching.evaluate import RegressionTargetNoise
from quadriga_target_score_matching.target_noise import (
    crossover_sigma,
    gaussian_target_noise,
    target_noise_mc,
)
from quadriga_target_score_matching.tsm import (
    TargetScoreMatching,
    dsm_target,
    mixture_target,
    mixture_weight,
    tsm_target,
)

from quadriga.errors import ConfigError

BIMODAL = {"means": [[-2.0], [2.0]], "scale": 0.5}


@pytest.mark.parametrize("sigma", [0.05, 0.3, 0.6, 0.9])
@pytest.mark.parametrize("scale", [0.5, 1.5])
def test_monte_carlo_noise_matches_the_gaussian_closed_form(sigma, scale):
    """One Gaussian N(mu, s^2 I_2): the sample mean lies within 5 standard errors of the closed form."""
    gauss = GaussianMixture(means=[[0.3, -0.7]], scale=scale)
    mc = target_noise_mc(gauss, sigma, 20000, generator=torch.Generator().manual_seed(3))
    exact = gaussian_target_noise(sigma, scale, dim=2)
    for arm in ("dsm", "tsm", "mixture"):
        mean, se = mc[arm]
        assert abs(mean - exact[arm]) <= 5 * se + 1e-9 * exact[arm], (arm, mean, se, exact[arm])


def test_mixture_target_is_exact_for_a_standard_gaussian():
    """pi = N(0, I): alpha grad log pi(x_0) - sigma z = -x_t, the noised score itself (zero noise)."""
    g = torch.Generator().manual_seed(0)
    x0, z = (
        torch.randn(100, 3, generator=g, dtype=torch.float64),
        torch.randn(100, 3, generator=g, dtype=torch.float64),
    )
    for sigma in (0.01, 0.5, 0.95):
        alpha = math.sqrt(1 - sigma**2)
        t = mixture_target(-x0, z, alpha, sigma)
        torch.testing.assert_close(t, -(alpha * x0 + sigma * z), rtol=0, atol=1e-12)
        assert gaussian_target_noise(sigma, 1.0, dim=3)["mixture"] == pytest.approx(0.0, abs=1e-9)


def test_gaussian_crossover_is_at_sigma_equal_alpha_s():
    """DSM and TSM noise are equal where sigma = alpha s, sigma* = s / sqrt(1 + s^2): 0.447 for s = 0.5."""
    s = 0.5
    star = s / math.sqrt(1 + s * s)
    n = gaussian_target_noise(star, s)
    assert n["dsm"] == pytest.approx(n["tsm"], rel=1e-12)
    grid = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    curves = [gaussian_target_noise(v, s) for v in grid]
    cross = crossover_sigma(grid, [c["dsm"] for c in curves], [c["tsm"] for c in curves])
    assert abs(cross - star) < 0.01
    assert math.isnan(crossover_sigma(grid[:3], [1, 1, 1], [0.1, 0.1, 0.1]))


def test_bimodal_noise_reproduces_the_measured_table():
    """The research notes' d = 1 numbers (2e5 samples): DSM 96.3 / TSM 0.159 at 0.1, crossover near 0.4."""
    gmm = GaussianMixture(**BIMODAL)
    m = (
        RegressionTargetNoise(num_samples=60000, sigmas=[0.01, 0.1, 0.3, 0.4, 0.5, 0.6, 0.9])
        .evaluate(gmm, generator=torch.Generator().manual_seed(0))
        .values
    )
    assert m["dsm/target_noise@sigma=0.1"] == pytest.approx(96.3, rel=0.03)
    assert m["tsm/target_noise@sigma=0.1"] == pytest.approx(0.159, rel=0.05)
    assert m["tsm/target_noise@sigma=0.9"] == pytest.approx(20.4, rel=0.05)
    assert 1 / m["tsm_over_dsm@sigma=0.01"] > 1e6 and 1 / m["tsm_over_dsm@sigma=0.1"] > 500
    assert 0.35 < m["crossover_sigma"] < 0.5
    for s in (0.01, 0.1, 0.3, 0.4, 0.5, 0.6, 0.9):
        pair = sorted((m[f"dsm/target_noise@sigma={s:g}"], m[f"tsm/target_noise@sigma={s:g}"]))
        mix = m[f"mixture/target_noise@sigma={s:g}"]
        # the alpha2 mixture: below both targets up to sigma = 0.5 (measured 0.09 vs 0.16 and 96 at 0.1),
        # within 1.7x of DSM above (0.90 vs 0.57 at 0.9) and far below the worse target there
        assert mix <= pair[0] if s <= 0.5 else (mix <= 1.7 * pair[0] and mix <= pair[1] / 3)


@pytest.mark.parametrize("sigma", [0.05, 0.4, 0.9])
def test_every_target_is_unbiased_for_the_noised_score(sigma):
    """E[(T - s_t(X_t)) g(X_t)] = 0 for g(x) = 1, x, tanh(x): the sample mean within 5 standard errors."""
    gmm = GaussianMixture(**BIMODAL)
    g = torch.Generator().manual_seed(1)
    x0 = gmm.sample(40000, generator=g)
    z = torch.randn(x0.shape, generator=g, dtype=x0.dtype)
    alpha = math.sqrt(1 - sigma**2)
    xt = alpha * x0 + sigma * z
    truth, score0 = gmm.noised_score(xt, alpha**2), gmm.score(x0)
    for t in (
        dsm_target(z, sigma),
        tsm_target(score0, alpha),
        mixture_target(score0, z, alpha, sigma, "step"),
    ):
        for test_fn in (torch.ones_like(xt), xt, torch.tanh(xt)):
            prod = ((t - truth) * test_fn).sum(-1)
            assert abs(float(prod.mean())) <= 5 * float(prod.std()) / math.sqrt(prod.shape[0])


def test_mixture_weights():
    assert mixture_weight(0.6, 0.8) == pytest.approx(0.36)
    assert mixture_weight(0.99, 0.1, "step", 0.4) == 1.0 and mixture_weight(0.6, 0.8, "step", 0.4) == 0.0
    with pytest.raises(ValueError, match="unknown mixture weight"):
        mixture_weight(0.5, 0.5, "optimal")


def test_learners_share_draws_and_differ_only_in_the_target():
    """Same seed: DSM and TSM learners see the same x_0, z and sigma; TSM regresses on grad log pi / alpha."""
    gmm = GaussianMixture(**BIMODAL)
    seen = {}

    def spy(name, learner):
        def target(x0, z, score0, alpha, sigma):
            seen.setdefault(name, []).append((x0.clone(), z.clone(), sigma.clone(), score0))
            return type(learner).regression_target(learner, x0, z, score0, alpha, sigma)

        object.__setattr__(learner, "regression_target", target)
        return learner

    small = {"num_steps": 3, "num_train": 64, "batch_size": 8, "hidden_sizes": [8]}
    dsm = ScoreNetwork(**small)
    tsm = TargetScoreMatching(target="tsm", **small)
    for name, learner in (("dsm", dsm), ("tsm", tsm)):
        try:
            spy(name, learner)
        except AttributeError:  # slotted attrs class: spy through a subclass instead
            pytest.skip("slotted learner")
        fitted = learner.fit(gmm, generator=torch.Generator().manual_seed(7))
        assert fitted.info["parameterization"] == "eps" and fitted.info["dim"] == 1
    assert tsm.target_name == "tsm" and TargetScoreMatching().target_name == "mixture-alpha2"
    for (xa, za, sa, s0a), (xb, zb, sb, s0b) in zip(seen["dsm"], seen["tsm"], strict=True):
        assert torch.equal(xa, xb) and torch.equal(za, zb) and torch.equal(sa, sb)
        assert s0a is None
        torch.testing.assert_close(s0b, gmm.score(xb.double()).float())


def test_tsm_needs_a_target_with_a_score():
    class NoScore:
        dim = 1

        def sample(self, n, *, generator):
            return torch.randn(n, 1, generator=generator)

    with pytest.raises(ConfigError, match="needs the clean score"):
        TargetScoreMatching(num_steps=1).fit(NoScore(), generator=torch.Generator().manual_seed(0))
    with pytest.raises(ConfigError, match="sigma_min < sigma_max"):
        TargetScoreMatching(sigma_min=0.5, sigma_max=0.4)
    with pytest.raises(ConfigError, match="target"):
        TargetScoreMatching(target="qcsbm")
