"""An SR kernel still targets pi; alpha = 0 is the base kernel draw for draw; drifts are right."""

import torch
from quadriga_srmc.sampler import SRMC
from quadriga_srmc.surrogate import GradientTilt
from quadriga_std.samplers.gibbs import Gibbs
from quadriga_std.samplers.mcmc import HMC, MALA, RWM
from quadriga_std.targets.gaussian import Gaussian
from quadriga_std.targets.ising import Ising

MEAN = [1.0, -1.0]
COV = [[1.0, 0.5], [0.5, 2.0]]


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _check_moments(chains, target, z=4.5):
    """Grand mean and covariance within z standard errors (chains are independent replicates)."""
    c = chains.shape[0]
    means = chains.mean(1)  # [c, d]
    se = means.std(0) / c**0.5
    assert ((means.mean(0) - target.mean).abs() < z * se).all(), (means.mean(0), target.mean, se)
    centred = chains - target.mean
    covs = torch.einsum("cni,cnj->cij", centred, centred) / chains.shape[1]  # [c, d, d]
    se_cov = covs.std(0) / c**0.5
    assert ((covs.mean(0) - target.covariance).abs() < z * se_cov + 0.02).all(), (covs.mean(0), se_cov)


def test_sr_mala_targets_pi_on_2d_gaussian():
    target = Gaussian(mean=MEAN, covariance=COV)
    sr = SRMC(
        base_kernel=MALA(step_size=0.3, init="target"),
        alpha=1.0,
        rho=1.0,
        num_chains=128,
        num_steps=1500,
        burn_in=300,
        drift="shifted",
    )
    out = sr.sample(target, generator=_gen(0))
    _check_moments(out.chains, target)
    assert out.info["theta_norm"] < 0.15  # theta -> 0 (rho = 1: theta is the score average)
    assert 0.3 < out.info["acceptance_rate"] < 1.0
    assert out.info["score_evals"] > 0 and out.info["rejected_nonfinite"] == 0


def test_sr_hmc_rwm_and_exact_drift_mala_target_pi():
    target = Gaussian(mean=MEAN, covariance=COV)
    for kernel, drift, steps in (
        (HMC(step_size=0.3, num_leapfrog_steps=3, init="target"), "shifted", 400),
        (RWM(step_size=1.0, init="target"), "shifted", 800),
        (MALA(step_size=0.3, init="target"), "exact", 200),
    ):
        out = SRMC(
            base_kernel=kernel, alpha=1.0, rho=1.0, num_chains=96, num_steps=steps, burn_in=100, drift=drift
        ).sample(target, generator=_gen(1))
        _check_moments(out.chains, target)
        assert (out.info["hvp_evals"] > 0) == (drift == "exact")


def test_alpha_zero_is_the_base_kernel_draw_for_draw():
    target = Gaussian(dim=5, equicorrelation=0.5)
    base = MALA(step_size=0.2, num_chains=3, num_samples=50, burn_in=10, init="target").sample(
        target, generator=_gen(3)
    )
    sr = SRMC(
        base_kernel=MALA(step_size=0.2, init="target"), alpha=0.0, num_chains=3, num_steps=50, burn_in=10
    ).sample(target, generator=_gen(3))
    assert torch.equal(base.chains, sr.chains)
    assert sr.info["score_evals"] == base.info["score_evals"]
    ising = Ising(size=3, coupling=0.3)
    g = Gibbs(num_chains=4, num_samples=20, burn_in=5).sample(ising, generator=_gen(4))
    s = SRMC(base_kernel=Gibbs(), alpha=0.0, num_chains=4, num_steps=20, burn_in=5).sample(
        ising, generator=_gen(4)
    )
    assert torch.equal(g.chains, s.chains)


def test_exact_and_shifted_drift_closed_forms():
    # For a Gaussian s(x) = -P (x - mu) and H = -P: exact drift s(x) + alpha P theta,
    # shifted drift s(x - alpha theta) = the same vector (the Taylor step is exact for quadratics).
    target = Gaussian(mean=MEAN, covariance=COV)
    prec = torch.linalg.inv(torch.tensor(COV, dtype=torch.float64))
    x = torch.tensor([[0.3, 2.0], [-1.0, 0.5]], dtype=torch.float64)
    theta = torch.tensor([[0.7, -0.2], [0.1, 0.4]], dtype=torch.float64)
    expected = -(x - torch.tensor(MEAN, dtype=torch.float64)) @ prec + 1.5 * theta @ prec
    for drift in ("exact", "shifted"):
        tilt = GradientTilt(target, theta, drift=drift)
        tilt.set(theta, 1.5)
        assert torch.allclose(tilt.score(x), expected, atol=1e-10)
        lp = target.log_prob(x) - 1.5 * (theta * target.score(x)).sum(-1)
        assert torch.allclose(tilt.log_prob(x), lp, atol=1e-12)
        assert (tilt.counters["hvp_evals"] > 0) == (drift == "exact")


def test_store_running_mean_matches_draws():
    target = Gaussian(dim=3, equicorrelation=0.3)
    kw = dict(
        base_kernel=MALA(step_size=0.2, init="target"), alpha=1.0, num_chains=4, num_steps=200, burn_in=20
    )
    full = SRMC(**kw).sample(target, generator=_gen(5))
    light = SRMC(store="running-mean", **kw).sample(target, generator=_gen(5))
    assert light.chains.shape == (4, 1, 3) and light.x.shape == (4, 3)
    assert torch.allclose(light.chains[:, 0], full.chains.mean(1), atol=1e-10)
