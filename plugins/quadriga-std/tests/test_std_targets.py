"""Targets: scores against autograd, densities against scipy, exact moments, enumeration."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.integrate
import scipy.stats
import torch
from quadriga_std.targets.analytic import Banana, DoubleWell, Funnel
from quadriga_std.targets.gaussian import Gaussian, GaussianMixture
from quadriga_std.targets.ising import Ising
from quadriga_std.targets.logistic import BayesianLogistic

from quadriga.errors import ConfigError


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def _random_mixture():
    m = GaussianMixture(preset="random", dim=3, num_components=4, radius=2.0)
    m.prepare(generator=_gen(1))
    return m


def _full_cov_mixture():
    return GaussianMixture(
        weights=[0.2, 0.5, 0.3],
        means=[[0.0, 1.0], [2.0, -1.0], [-1.5, 0.5]],
        covariances=[[[1.0, 0.3], [0.3, 0.5]], [[0.4, -0.1], [-0.1, 0.8]], [[2.0, 0.0], [0.0, 0.3]]],
    )


TARGETS = {
    "gaussian": lambda: Gaussian(dim=4, equicorrelation=0.7),
    "gaussian-full": lambda: Gaussian(mean=[1.0, -2.0], covariance=[[2.0, 0.5], [0.5, 1.0]]),
    "gmm-4": lambda: GaussianMixture(preset="4-mode-2d"),
    "gmm-8ring": lambda: GaussianMixture(preset="8-ring"),
    "gmm-25": lambda: GaussianMixture(preset="25-grid"),
    "gmm-random": _random_mixture,
    "gmm-full": _full_cov_mixture,
    "banana": lambda: Banana(dim=3),
    "funnel": lambda: Funnel(dim=5),
    "double-well": lambda: DoubleWell(dim=3),
    "ising": lambda: Ising(size=3, coupling=0.4, field=0.1),
    "logistic": lambda: BayesianLogistic(prior_scale=2.0),
}


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_score_matches_autograd(name):
    t = TARGETS[name]()
    x = 0.3 * torch.randn(16, t.dim, generator=_gen(2), dtype=torch.float64)
    if name == "ising":
        x = torch.sign(x) + (x == 0)
    x.requires_grad_(True)
    (grad,) = torch.autograd.grad(t.log_prob(x).sum(), x)
    score = t.score(x.detach())
    assert score.shape == (16, t.dim)
    torch.testing.assert_close(score, grad, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", ["gaussian", "gmm-4", "banana", "funnel", "double-well", "logistic"])
def test_float32_input_stays_float32(name):
    t = TARGETS[name]()
    x = torch.randn(5, t.dim, generator=_gen(3))
    assert t.log_prob(x).dtype == torch.float32 and t.score(x).dtype == torch.float32
    torch.testing.assert_close(t.log_prob(x).double(), t.log_prob(x.double()), rtol=1e-4, atol=1e-3)


def test_gmm_log_prob_matches_scipy():
    m = _full_cov_mixture()
    x = torch.randn(50, 2, generator=_gen(4), dtype=torch.float64) * 2
    ref = np.log(
        sum(
            w * scipy.stats.multivariate_normal(mu, cov).pdf(x.numpy())
            for w, mu, cov in zip(
                [0.2, 0.5, 0.3], m.component_means.numpy(), m.component_covariances.numpy(), strict=False
            )
        )
    )
    np.testing.assert_allclose(m.log_prob(x).numpy(), ref, rtol=1e-10)
    comp = m.component_log_probs(x)
    assert comp.shape == (50, 3)
    np.testing.assert_allclose(torch.logsumexp(comp, -1).numpy(), ref, rtol=1e-10)


def test_gaussian_log_prob_matches_scipy():
    g = Gaussian(mean=[1.0, -2.0], covariance=[[2.0, 0.5], [0.5, 1.0]])
    x = torch.randn(20, 2, generator=_gen(5), dtype=torch.float64)
    ref = scipy.stats.multivariate_normal([1.0, -2.0], [[2.0, 0.5], [0.5, 1.0]]).logpdf(x.numpy())
    np.testing.assert_allclose(g.log_prob(x).numpy(), ref, rtol=1e-12)


@pytest.mark.parametrize("make", [_full_cov_mixture, _random_mixture])
def test_noised_score_is_gradient_of_noised_log_prob(make):
    m = make()
    x = torch.randn(12, m.dim, generator=_gen(6), dtype=torch.float64) * 2
    for ab in (0.3, torch.linspace(0.05, 0.95, 12, dtype=torch.float64)):
        xr = x.clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(m.noised_log_prob(xr, ab).sum(), xr)
        torch.testing.assert_close(m.noised_score(x, ab), grad, rtol=1e-9, atol=1e-10)
    torch.testing.assert_close(m.noised_log_prob(x, 1.0), m.log_prob(x))
    torch.testing.assert_close(m.noised_score(x, 1.0), m.score(x))


def test_noised_log_prob_is_the_forward_process_law():
    # x_t = sqrt(ab) x0 + sqrt(1-ab) eps is the mixture with means sqrt(ab) mu_k, covs ab S_k + (1-ab) I
    m, ab = _full_cov_mixture(), 0.4
    x = torch.randn(30, 2, generator=_gen(7), dtype=torch.float64)
    ref = np.log(
        sum(
            w
            * scipy.stats.multivariate_normal(math.sqrt(ab) * mu, ab * cov + (1 - ab) * np.eye(2)).pdf(
                x.numpy()
            )
            for w, mu, cov in zip(
                [0.2, 0.5, 0.3], m.component_means.numpy(), m.component_covariances.numpy(), strict=False
            )
        )
    )
    np.testing.assert_allclose(m.noised_log_prob(x, ab).numpy(), ref, rtol=1e-10)
    # per-row alpha_bar equals row-by-row scalar calls
    abs_ = torch.rand(30, generator=_gen(8), dtype=torch.float64) * 0.9 + 0.05
    rows = torch.stack([m.noised_score(x[i : i + 1], float(abs_[i]))[0] for i in range(30)])
    torch.testing.assert_close(m.noised_score(x, abs_), rows)


@pytest.mark.parametrize("name", ["gaussian-full", "gmm-full", "gmm-8ring", "banana"])
def test_exact_samples_match_exact_moments(name):
    t = TARGETS[name]()
    n = 40000
    x = t.sample(n, generator=_gen(9))
    assert x.shape == (n, t.dim)
    mean, cov = t.mean, t.covariance
    sd = cov.diagonal().sqrt()
    # sample mean within 4 standard errors per coordinate
    assert ((x.mean(0) - mean).abs() <= 4 * sd / math.sqrt(n)).all()
    # sample variances within 8% (normal-theory SE of a variance is sqrt(2/n) ~ 0.7%, heavier tails here)
    torch.testing.assert_close(x.var(0), cov.diagonal(), rtol=0.08, atol=0.0)


def test_funnel_samples_and_normalisation():
    f = Funnel(dim=3, scale=1.0)  # small scale: finite, well-estimated moments
    x = f.sample(40000, generator=_gen(10))
    torch.testing.assert_close(x.var(0), f.covariance.diagonal(), rtol=0.1, atol=0.0)
    # normalised: integrate over (v, x1) for dim 2, with x1 = e^{v/2} u (so the integrand stays wide)
    f2 = Funnel(dim=2, scale=1.0)

    def integrand(u, v):
        x = torch.tensor([[v, math.exp(v / 2) * u]], dtype=torch.float64)
        return math.exp(float(f2.log_prob(x)) + v / 2)

    z, _ = scipy.integrate.dblquad(integrand, -8, 8, -12, 12)
    assert z == pytest.approx(1.0, abs=1e-6)


def test_double_well_normalised_and_moments():
    dw = DoubleWell(dim=2)

    def dens(t: float) -> float:
        return math.exp(float(dw.log_prob(torch.tensor([[t, 0.0]], dtype=torch.float64)))) * math.sqrt(
            2 * math.pi
        )

    z = scipy.integrate.quad(dens, -6, 6, points=[-1.7, 0.0, 1.7])[0]
    m1 = scipy.integrate.quad(lambda t: t * dens(t), -6, 6, points=[-1.7, 0.0, 1.7])[0]
    assert z == pytest.approx(1.0, abs=1e-8)
    assert float(dw.mean[0]) == pytest.approx(m1, abs=1e-8)
    assert m1 > 0.5  # a = -0.5 favours the right well


def test_gaussian_mixture_moments_closed_form():
    m = GaussianMixture(preset="4-mode-2d")
    # equal weights on (+-2, +-2), sigma 0.6: mean 0, covariance (4 + 0.36) I
    torch.testing.assert_close(m.mean, torch.zeros(2, dtype=torch.float64))
    torch.testing.assert_close(m.covariance, 4.36 * torch.eye(2, dtype=torch.float64))
    x = m.component_means + 0.01
    assert m.assign(x).tolist() == [0, 1, 2, 3]


def test_ising_enumeration_and_flip_ratios():
    t = Ising(size=2, coupling=0.5, field=0.2)
    states = t.states()
    assert states.shape == (16, 4)
    # brute-force energy from the explicit bond list of the 2x2 periodic lattice (each pair bonded twice)
    bonds = [(0, 1), (1, 0), (2, 3), (3, 2), (0, 2), (2, 0), (1, 3), (3, 1)]
    lp = torch.stack([0.5 * sum(s[i] * s[j] for i, j in bonds) + 0.2 * s.sum() for s in states])
    torch.testing.assert_close(t.log_prob(states), lp)
    assert t.log_partition() == pytest.approx(float(torch.logsumexp(lp, 0)), abs=1e-12)
    t3 = Ising(size=3, coupling=0.3, field=-0.2)
    x = t3.sample(20, generator=_gen(11))
    ratios = t3.flip_log_ratios(x)
    for i in range(9):
        y = x.clone()
        y[:, i] *= -1
        torch.testing.assert_close(ratios[:, i], t3.log_prob(y) - t3.log_prob(x))
    torch.testing.assert_close(t3.discrete_score(x), ratios.exp() - 1)
    # exact-sample frequencies of the magnetisation
    big = t3.sample(40000, generator=_gen(12))
    m_exact = t3.mean_magnetization()
    assert abs(float(big.mean()) - m_exact) < 4 * float(big.mean(-1).std()) / 200
    assert m_exact < 0  # negative field


def test_ising_enumeration_limit_and_symmetry():
    with pytest.raises(ValueError, match="16"):
        Ising(size=5).log_partition()
    t = Ising(size=3, coupling=0.4)
    torch.testing.assert_close(t.marginals(), torch.zeros(9, dtype=torch.float64), atol=1e-12, rtol=0)
    assert 0 < t.nearest_neighbour_correlation() < 1


def test_bad_parameters_raise_config_error():
    with pytest.raises(ConfigError, match="positive definite"):
        Gaussian(dim=3, equicorrelation=-0.6)
    with pytest.raises(ConfigError, match="shape"):
        GaussianMixture(means=[[0.0, 0.0], [1.0, 1.0]], weights=[1.0, 2.0, 3.0], scale=1.0)
    with pytest.raises(ConfigError, match="dim"):
        GaussianMixture(preset="random")
    with pytest.raises(ConfigError, match="applies to preset 'random' only"):
        GaussianMixture(preset="4-mode-2d", num_components=8)  # K is fixed by the preset
    assert GaussianMixture(preset="random", dim=2).num_components is None  # 8 when drawn
    with pytest.raises(ConfigError):
        Gaussian()
    with pytest.raises(ConfigError, match="preset must be one of") as bad:
        GaussianMixture(preset="nine-modes")
    assert bad.value.key == "preset"


DIAGONAL = {
    "identity": lambda: Gaussian(dim=6),
    "isotropic": lambda: Gaussian(mean=[1.0, -1.0, 0.5], covariance=(2.5 * torch.eye(3)).tolist()),
    "unsorted-diagonal": lambda: Gaussian(
        mean=[0.0, 1.0, 2.0, 3.0, 4.0],
        covariance=torch.diag(torch.tensor([3.0, 1.0, 2.0, 0.5, 7.0])).tolist(),
    ),
    "tied-diagonal": lambda: Gaussian(covariance=torch.diag(torch.tensor([2.0, 1.0, 2.0, 1.0])).tolist()),
}


@pytest.mark.parametrize("name", sorted(DIAGONAL))
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_diagonal_gaussian_on_the_axes_is_bit_for_bit_the_matrix_path(name, dtype, eigenbasis):
    g = DIAGONAL[name]()
    assert g._axes is not None
    dense = eigenbasis(g)
    x = 1.7 * torch.randn(33, g.dim, generator=_gen(11), dtype=dtype)
    assert torch.equal(g.log_prob(x), dense.log_prob(x))
    assert torch.equal(g.score(x), dense.score(x))
    lp, s = g.log_prob_and_score(x)
    assert torch.equal(lp, dense.log_prob(x)) and torch.equal(s, dense.score(x))
    assert lp.dtype == dtype and s.dtype == dtype
    var = g.covariance.diagonal()
    ref = scipy.stats.multivariate_normal(g.mean.numpy(), np.diag(var.numpy())).logpdf(x.double().numpy())
    np.testing.assert_allclose(g.log_prob(x.double()).numpy(), ref, rtol=1e-12)
    torch.testing.assert_close(g.score(x.double()), -(x.double() - g.mean) / var, rtol=1e-14, atol=0)


def test_only_a_diagonal_covariance_takes_the_axes():
    assert Gaussian(dim=4, equicorrelation=0.7)._axes is None
    assert Gaussian(mean=[1.0, -2.0], covariance=[[2.0, 0.5], [0.5, 1.0]])._axes is None
    assert Gaussian(dim=3)._axes == (None, None, None)  # the identity: no reordering at all
    index, inverse, sign = DIAGONAL["unsorted-diagonal"]()._axes
    assert index.tolist() == [3, 1, 2, 0, 4] and inverse.tolist() == [3, 1, 2, 0, 4]
    assert sign.tolist() == [1.0] * 5


def test_signed_permutation_rotation_equals_the_matrix_products():
    from quadriga_std.targets.gaussian import _signed_permutation

    p = torch.zeros(4, 4, dtype=torch.float64)
    p[2, 0], p[0, 1], p[3, 2], p[1, 3] = 1.0, -1.0, 1.0, -1.0
    index, inverse, sign = _signed_permutation(p)
    z = torch.randn(7, 4, generator=_gen(12), dtype=torch.float64)
    assert torch.equal(Gaussian._rotate(z, (index, inverse, sign)), z @ p)
    assert torch.equal(Gaussian._unrotate(z, (index, inverse, sign)), z @ p.T)
    p[1, 3] = 0.5
    assert _signed_permutation(p) is None


@pytest.mark.parametrize("name", ["identity", "unsorted-diagonal"])
def test_mala_chains_on_a_diagonal_gaussian_are_unchanged(name, eigenbasis):
    from quadriga_std.samplers.mcmc import MALA

    g = DIAGONAL[name]()
    mala = MALA(step_size=0.2, num_chains=3, num_samples=40, burn_in=5)
    a = mala.sample(g, generator=_gen(13))
    b = mala.sample(eigenbasis(g), generator=_gen(13))
    assert torch.equal(a.chains, b.chains)
    assert a.info["acceptance_rate"] == b.info["acceptance_rate"]


def _conditioned(d, kappa, seed=0):
    """Gaussian with covariance Q diag(logspace(0, -log10 kappa, d)) Q^T (condition number kappa)."""
    q, _ = torch.linalg.qr(torch.randn(d, d, generator=_gen(seed), dtype=torch.float64))
    cov = (q * torch.logspace(0, -math.log10(kappa), d, dtype=torch.float64)) @ q.T
    return Gaussian(mean=[0.5] * d, covariance=(0.5 * (cov + cov.T)).tolist())


@pytest.mark.parametrize("kappa", [1e2, 1e6, 1e9])
def test_dense_gaussian_path_follows_the_dtype_and_condition_number(kappa, eigenbasis):
    from quadriga_std.targets.gaussian import PRECISION_ROUNDING

    g = _conditioned(20, kappa)
    assert g._condition == pytest.approx(kappa, rel=1e-3)
    x64 = g.sample(16, generator=_gen(3))
    for dtype in (torch.float64, torch.float32):
        x = x64.to(dtype)
        precision = torch.finfo(dtype).eps * g._condition <= PRECISION_ROUNDING
        assert (g._factors(x)[1] is not None) == precision
        if not precision:  # the eigenbasis: bit for bit the evaluation before the precision path
            ref = eigenbasis(g)
            assert torch.equal(g.log_prob(x), ref.log_prob(x)) and torch.equal(g.score(x), ref.score(x))
    # float64 (the precision up to kappa ~ 4.5e11) against scipy, in nats, at the same points
    exact = scipy.stats.multivariate_normal(g.mean.numpy(), g.covariance.numpy()).logpdf(x64.numpy())
    np.testing.assert_allclose(g.log_prob(x64).numpy(), exact, rtol=0, atol=1e-9 * kappa**0.5 + 1e-10)
    # float32: within 1e-3 nats of the float64 value at the float32 points where kappa <= 1e6
    x32 = x64.float()
    if kappa <= 1e6:
        err = (g.log_prob(x32).double() - g.log_prob(x32.double())).abs().max()
        assert float(err) < 1e-3
