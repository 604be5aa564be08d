"""Closed-form kernel mean embeddings, exact MMD, the two evaluators and the claims at smoke scale."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from quadriga_kernel_thinning import claims
from quadriga_kernel_thinning.embedding import (
    double_embedding,
    embedding,
    mixture_of,
    mmd_between,
    mmd_to_mixture,
)
from quadriga_kernel_thinning.evaluators import IntegrationError, MMDToTarget, integrand_values
from quadriga_std.targets.analytic import Banana
from quadriga_std.targets.gaussian import Gaussian, GaussianMixture

from quadriga.artifacts import Samples
from quadriga.errors import ConfigError


def _mixture() -> GaussianMixture:
    target = GaussianMixture(
        weights=[0.5, 0.3, 0.2],
        means=[[0.0, 0.0], [3.0, 1.0], [-1.0, 2.5]],
        covariances=[[[1.0, 0.3], [0.3, 0.5]], [[0.4, 0.0], [0.0, 0.8]], [[0.3, -0.1], [-0.1, 0.2]]],
    )
    target.prepare(generator=torch.Generator().manual_seed(0))
    return target


def test_one_dimensional_closed_form():
    # P = N(0, s^2), k = exp(-r^2 / (2 sigma^2)):
    # Pk(x) = sigma / sqrt(sigma^2 + s^2) exp(-x^2 / (2 (sigma^2 + s^2))),
    # PPk = sigma / sqrt(sigma^2 + 2 s^2)
    s2, sigma = 2.0, 0.7
    w, mu, cov = np.ones(1), np.zeros((1, 1)), np.full((1, 1, 1), s2)
    x = np.array([[0.0], [1.3], [-2.0]])
    expect = sigma / math.sqrt(sigma**2 + s2) * np.exp(-(x[:, 0] ** 2) / (2 * (sigma**2 + s2)))
    np.testing.assert_allclose(embedding(x, w, mu, cov, sigma), expect, rtol=1e-12)
    assert double_embedding(w, mu, cov, sigma) == pytest.approx(
        sigma / math.sqrt(sigma**2 + 2 * s2), rel=1e-12
    )


def test_mixture_embedding_against_monte_carlo():
    target = _mixture()
    w, mu, cov = mixture_of(target)
    y = target.sample(200_000, generator=torch.Generator().manual_seed(1)).numpy()
    sigma = 1.1
    x = np.array([[0.5, 0.5], [3.0, 0.0], [-2.0, 3.0]])
    mc = np.exp(-((x[:, None, :] - y[None, :50_000]) ** 2).sum(-1) / (2 * sigma**2))
    np.testing.assert_allclose(
        embedding(x, w, mu, cov, sigma), mc.mean(1), atol=5 * mc.std(1).max() / math.sqrt(50_000)
    )
    pair = np.exp(-((y[:100_000] - y[100_000:]) ** 2).sum(-1) / (2 * sigma**2))
    assert abs(double_embedding(w, mu, cov, sigma) - pair.mean()) < 5 * pair.std() / math.sqrt(len(pair))


def test_exact_mmd_agrees_with_a_large_reference_sample_and_gaussian_target():
    target = _mixture()
    w, mu, cov = mixture_of(target)
    x = target.sample(100, generator=torch.Generator().manual_seed(2))
    y = target.sample(4000, generator=torch.Generator().manual_seed(3))
    exact = mmd_to_mixture(x, w, mu, cov, 1.0)
    assert 0.02 < exact < 0.3 and exact == pytest.approx(mmd_between(x, y, 1.0), abs=0.02)
    g = Gaussian(mean=[1.0, -1.0, 0.5], covariance=[[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 0.7]])
    xg = g.sample(50, generator=torch.Generator().manual_seed(4))
    one = mixture_of(g)
    same = (
        np.array([0.4, 0.6]),
        np.repeat(one[1], 2, 0),
        np.repeat(one[2], 2, 0),
    )  # a mixture of identical parts
    assert mmd_to_mixture(xg, *one, 1.5) == pytest.approx(mmd_to_mixture(xg, *same, 1.5), rel=1e-12)


def test_mmd_evaluator_values_figure_and_errors():
    target = GaussianMixture(preset="4-mode-2d")
    target.prepare(generator=torch.Generator().manual_seed(0))
    good = Samples(x=target.sample(256, generator=torch.Generator().manual_seed(5)), info={"stage": "iid"})
    bad = Samples(x=torch.zeros(16, 2), info={"stage": "zeros"})
    m = MMDToTarget(bandwidth=1.0).evaluate(
        {"iid": good, "zeros": bad}, target, generator=torch.Generator().manual_seed(0)
    )
    assert m.values["iid/mmd"] < 0.5 * m.values["zeros/mmd"] and m.values["zeros/num_points"] == 16.0
    assert "coreset" in m.figures and m.info["exact"] is True
    with pytest.raises(ConfigError, match="Gaussian or Gaussian-mixture"):
        MMDToTarget().evaluate(good, Banana(), generator=torch.Generator().manual_seed(0))
    with pytest.raises(ConfigError, match="dimension"):
        MMDToTarget().evaluate(
            Samples(x=torch.zeros(4, 3)), target, generator=torch.Generator().manual_seed(0)
        )


def test_integration_error_against_monte_carlo():
    target = _mixture()
    y = target.sample(400_000, generator=torch.Generator().manual_seed(6))
    m = IntegrationError().evaluate(
        Samples(x=y, info={"stage": "big"}), target, generator=torch.Generator().manual_seed(0)
    )
    se = integrand_values(y.numpy()).std(0) / math.sqrt(len(y))
    for key, s in zip(("x1", "sqnorm", "cos"), se, strict=False):
        assert m.values[f"big/error_{key}"] < 4 * s
    with pytest.raises(ConfigError, match="dimension 3 but the target has 2"):
        IntegrationError().evaluate(
            Samples(x=torch.zeros(4, 3)), target, generator=torch.Generator().manual_seed(0)
        )
    with pytest.raises(ConfigError, match="Gaussian or Gaussian-mixture"):
        IntegrationError().evaluate(
            Samples(x=torch.zeros(4, 2)), Banana(), generator=torch.Generator().manual_seed(0)
        )


@pytest.mark.parametrize("claim", [claims.mmd_rate, claims.after_mcmc])
def test_claims_smoke(claim, tmp_path):
    """Smoke scale: finite numbers and intervals, status 'ran' (no verdict)."""
    from pathlib import Path

    from quadriga.claims import evaluate_claim

    obs = claim.observations("smoke", tmp_path)
    rec = evaluate_claim(claim, obs, "smoke")
    assert rec["status"] == "ran" and len(rec["comparisons"]) == 1
    c = rec["comparisons"][0]
    assert c["low"] <= c["estimate"] <= c["high"] and c["n"] == 2
    assert all(math.isfinite(v) for v in obs.numbers.values() if isinstance(v, float))
    assert all(Path(p).exists() for p in obs.figures.values())
