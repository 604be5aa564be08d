"""Each torch target against inference-gym: log density, coordinate order, ground truth, exact draws."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from quadriga_inference_gym import targets as T
from quadriga_inference_gym._gym import reference_log_density

ALL = [
    T.EightSchools,
    T.NealsFunnel,
    T.Banana,
    T.IllConditionedGaussian,
    T.BrownianMotionMissingMiddle,
    T.StochasticVolatilitySP500Small,
    T.SyntheticItemResponseTheory,
]
EXACT = [T.NealsFunnel, T.Banana, T.IllConditionedGaussian]
#: the time series are compared with inference-gym's vectorised form of the same model (MarkovChain
#: instead of one random variable per time step: the same density, evaluated about 8x faster)
OPTIONS = {
    T.StochasticVolatilitySP500Small: {"use_markov_chain": True},
    T.BrownianMotionMissingMiddle: {"use_markov_chain": True},
}


@pytest.fixture(scope="module", params=ALL, ids=lambda c: c.__name__)
def target(request):
    return request.param()


def _points(target, n=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    if type(target) in EXACT:
        return target.sample(n, generator=g)
    z = target.warm_start(n, generator=g)
    return z + 0.1 * torch.randn(z.shape, generator=g, dtype=z.dtype)  # off the ground-truth grid


def test_log_density_equals_inference_gym_up_to_a_constant(target):
    """log_prob - inference-gym's NumPy log density is one constant at random points.

    inference-gym computes in float32, so the spread allowed is 1e-6 of the typical |log density|
    plus float32 rounding of the Cholesky factor for the ill-conditioned Gaussian (5e-6).
    """
    z = _points(target)
    ours = target.log_prob(z).numpy()
    ref = reference_log_density(target.model, z.numpy(), **OPTIONS.get(type(target), {}))
    diff = ours - ref
    tol = (5e-6 if isinstance(target, T.IllConditionedGaussian) else 1e-6) * np.abs(ref).mean() + 1e-5
    assert np.ptp(diff) <= tol, (diff, ref)
    # the comparison has power: matched with the reference of other points the spread is far larger
    assert np.ptp(ours - np.roll(ref, 1)) > 100 * tol


def test_normalised_targets_have_no_offset():
    """Funnel, banana and the Gaussian are normalised in both: the constant is 0."""
    for cls in EXACT:
        t = cls()
        z = _points(t)
        diff = t.log_prob(z).numpy() - reference_log_density(t.model, z.numpy())
        assert abs(diff.mean()) < 1e-3, (cls.__name__, diff)


def test_score_is_the_gradient_and_the_cache_never_serves_a_stale_value():
    t = T.StochasticVolatilitySP500Small()
    z = _points(t, n=3)
    zg = z.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(t.log_prob(zg).sum(), zg)
    lp = t.log_prob(z)
    assert torch.allclose(t.score(z), g, rtol=1e-10, atol=1e-10)  # score after log_prob (MALA)
    assert torch.equal(t.log_prob(z), lp)  # log_prob after score (HMC)
    z[:, 5] += 1.0  # in place: the cache must not answer
    assert not torch.allclose(t.log_prob(z), lp)
    # central differences along one coordinate
    e = torch.zeros_like(z)
    e[:, 3] = 1e-5
    fd = (t.log_prob(z + e) - t.log_prob(z - e)) / 2e-5
    assert torch.allclose(t.score(z)[:, 3], fd, rtol=1e-5, atol=1e-4)


def test_coordinate_order_follows_inference_gym():
    """The transformation's order matches inference-gym's ground-truth modules, checked by value."""
    from inference_gym.targets.ground_truth import stochastic_volatility_sp500_small as gt

    t = T.StochasticVolatilitySP500Small()
    m = t.ground_truth_mean.numpy()
    assert m[:100] == pytest.approx(gt.IDENTITY_LOG_VOLATILITY_MEAN, rel=1e-6)
    assert m[100] == pytest.approx(float(gt.IDENTITY_MEAN_LOG_VOLATILITY_MEAN), rel=1e-6)
    assert m[101] == pytest.approx(float(gt.IDENTITY_PERSISTENCE_OF_VOLATILITY_MEAN), rel=1e-6)
    assert m[102] == pytest.approx(float(gt.IDENTITY_WHITE_NOISE_SHOCK_SCALE_MEAN), rel=1e-6)
    z = torch.zeros(1, t.dim, dtype=torch.float64)
    z[0, 0], z[0, 2] = 2.0, -1.0
    y = t.transform(z)[0]
    assert float(y[101]) == pytest.approx(2 / (1 + math.exp(-2.0)) - 1)  # phi = 2 sigmoid(z_0) - 1
    assert float(y[102]) == pytest.approx(math.log1p(math.exp(-1.0)))  # sigma = softplus(z_2)
    assert torch.allclose(t._inverse_bijector(t._bijector(z)[0]), z)


def test_ground_truth_of_the_gaussian_matches_its_covariance():
    t = T.IllConditionedGaussian()
    assert torch.allclose(t.covariance.diagonal().sqrt(), t.ground_truth_std, rtol=1e-6)


@pytest.mark.parametrize("cls", EXACT, ids=lambda c: c.__name__)
def test_exact_draws_match_the_ground_truth(cls):
    """Sample mean within 4.5 standard errors and sample sd within 10% of the ground truth, every coordinate.

    20000 draws; for the funnel only v = z_0 (the others have kurtosis e^{9}, too heavy-tailed for a
    normal bound at this n).
    """
    t = cls()
    x = t.sample(20000, generator=torch.Generator().manual_seed(1))
    m, sd = t.ground_truth_mean, t.ground_truth_std
    keep = slice(0, 1) if cls is T.NealsFunnel else slice(None)
    z = (x.mean(0) - m) / (sd / math.sqrt(x.shape[0]))
    assert z[keep].abs().max() < 4.5, z
    assert ((x.std(0) / sd - 1)[keep]).abs().max() < 0.1
