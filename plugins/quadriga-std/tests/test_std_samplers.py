"""MCMC kernels, Gibbs and the simple samplers: statistical bounds at fixed seeds, the kernel contract."""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_std.samplers.gibbs import Gibbs
from quadriga_std.samplers.mcmc import HMC, MALA, RWM, ULA, ChainState
from quadriga_std.samplers.simple import IID, RandomSubsample, StandardThinning
from quadriga_std.targets.analytic import DoubleWell
from quadriga_std.targets.gaussian import Gaussian
from quadriga_std.targets.ising import Ising

from quadriga.artifacts import Samples
from quadriga.errors import ConfigError

MU = [1.0, -1.0]
SIGMA = [[1.0, 0.8], [0.8, 2.0]]


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def _chain_stats(chains: torch.Tensor, mu: torch.Tensor):
    """Per-chain mean and second moment about the true mean; chains are independent."""
    mean_c = chains.mean(1)  # [C, d]
    xc = chains - mu
    second_c = torch.einsum("cni,cnj->cij", xc, xc) / chains.shape[1]  # [C, d, d]
    return mean_c, second_c


def _within_3se(per_chain: torch.Tensor, truth: torch.Tensor):
    est = per_chain.mean(0)
    se = per_chain.std(0) / math.sqrt(per_chain.shape[0])
    z = ((est - truth) / se).abs()
    assert (z <= 3).all(), f"estimate {est} vs truth {truth}, |z| = {z}"


@pytest.mark.parametrize(
    "sampler",
    [RWM(step_size=1.2), MALA(step_size=0.5), HMC(step_size=0.4, num_leapfrog_steps=5)],
    ids=lambda s: type(s).__name__,
)
def test_kernels_recover_gaussian_moments(sampler):
    g = Gaussian(mean=MU, covariance=SIGMA)
    sampler.num_chains, sampler.num_samples, sampler.burn_in, sampler.init = 200, 150, 10, "target"
    out = sampler.sample(g, generator=_gen(1))
    assert out.x.shape == (200 * 150, 2) and out.chains.shape == (200, 150, 2)
    torch.testing.assert_close(out.x[:150], out.chains[0])  # chain-major rows
    assert 0.3 < out.info["acceptance_rate"] < 1.0 and out.info["rejected_nonfinite"] == 0
    mean_c, second_c = _chain_stats(out.chains, g.mean)
    _within_3se(mean_c, g.mean)
    _within_3se(second_c.reshape(200, 4), g.covariance.reshape(4))


def test_ula_has_its_known_discretisation_bias():
    # On N(mu, S) ULA's stationary covariance is (P - h P^2 / 2)^{-1}, P = S^{-1} (mean unbiased).
    g, h = Gaussian(mean=MU, covariance=SIGMA), 0.2
    out = ULA(step_size=h, num_chains=200, num_samples=150, burn_in=30, init="target").sample(
        g, generator=_gen(2)
    )
    P = torch.linalg.inv(g.covariance)
    biased = torch.linalg.inv(P - h * P @ P / 2)
    mean_c, second_c = _chain_stats(out.chains, g.mean)
    _within_3se(mean_c, g.mean)
    _within_3se(second_c.reshape(200, 4), biased.reshape(4))
    # and the exact covariance is rejected along its smallest eigendirection (where the bias is 24%)
    evals, evecs = torch.linalg.eigh(g.covariance)
    proj = torch.einsum("i,cij,j->c", evecs[:, 0], second_c, evecs[:, 0])
    z = (proj.mean() - evals[0]) / (proj.std() / math.sqrt(200))
    assert z > 5


def test_counters_and_determinism():
    g = Gaussian(dim=2)
    a = HMC(num_chains=3, num_samples=20, burn_in=5, thin=2, num_leapfrog_steps=4).sample(
        g, generator=_gen(3)
    )
    b = HMC(num_chains=3, num_samples=20, burn_in=5, thin=2, num_leapfrog_steps=4).sample(
        g, generator=_gen(3)
    )
    assert torch.equal(a.x, b.x)
    transitions = 5 + 20 * 2
    assert a.info["score_evals"] == 3 + 3 * 4 * transitions
    assert a.info["log_prob_evals"] == 3 + 3 * transitions
    r = RWM(num_chains=2, num_samples=10, burn_in=0).sample(g, generator=_gen(3))
    assert r.info["score_evals"] == 0 and r.info["log_prob_evals"] == 2 + 2 * 10


class _DuckTarget:
    """Only log_prob and score; NaN on the right half-plane x_0 > 3 (an overflowing surrogate)."""

    def __init__(self):
        self.calls = 0

    def log_prob(self, x):
        self.calls += 1
        lp = -0.5 * (x * x).sum(-1)
        return torch.where(x[:, 0] > 3, torch.nan, lp)

    def score(self, x):
        return torch.where((x[:, :1] > 3), torch.nan, -x)


@pytest.mark.parametrize(
    "kernel",
    [RWM(step_size=3.0), ULA(step_size=2.0), MALA(step_size=2.0), HMC(step_size=1.5, num_leapfrog_steps=3)],
    ids=lambda k: type(k).__name__,
)
def test_transition_contract_on_duck_typed_target(kernel):
    duck = _DuckTarget()
    x = torch.randn(64, 3, generator=_gen(4), dtype=torch.float64)
    state = kernel.init_state(duck, x)
    assert isinstance(state, ChainState) and state.log_prob.shape == (64,)
    assert (state.score is None) == (type(kernel) is RWM)
    rejected = 0
    for _ in range(20):
        new, accepted, counters = kernel.transition(state, duck, _gen(5 + _))
        assert new.x.shape == (64, 3) and accepted.shape == (64,) and accepted.dtype == torch.bool
        assert {"score_evals", "log_prob_evals", "rejected_nonfinite"} <= set(counters)
        # rejected chains keep their state; nothing non-finite ever enters the state
        torch.testing.assert_close(new.x[~accepted], state.x[~accepted])
        assert torch.isfinite(new.x).all() and torch.isfinite(new.log_prob).all()
        torch.testing.assert_close(new.log_prob, duck.log_prob(new.x))
        rejected += counters["rejected_nonfinite"]
        state = new
    assert rejected > 0  # the large steps do reach the NaN region


def test_init_target_needs_exact_sampler():
    with pytest.raises(ConfigError, match="init"):
        MALA(init="target", num_samples=2).sample(DoubleWell(), generator=_gen())
    with pytest.raises(ConfigError, match="step_size must be a finite number"):
        MALA(step_size=-1.0)
    with pytest.raises(ConfigError, match="step_size must be a finite number"):
        MALA(step_size=float("inf"))
    with pytest.raises(ConfigError, match="init must be one of 'normal', 'target'"):
        RWM(init="uniform")


def _ising_stats(t: Ising, chains: torch.Tensor):
    c, n, d = chains.shape
    flat = chains.reshape(-1, d)
    m = flat.mean(-1).reshape(c, n)
    return {
        "marginal": chains.mean(1),  # [c, d]
        "abs_mag": m.abs().mean(1, keepdim=True),
        "nn_corr": t.bond_average(flat).reshape(c, n).mean(1, keepdim=True),
    }


@pytest.mark.parametrize("scan", ["systematic", "random"])
def test_gibbs_matches_exact_ising_enumeration(scan):
    t = Ising(size=3, coupling=0.4, field=0.1)
    out = Gibbs(scan=scan, num_chains=100, num_samples=60, burn_in=10).sample(t, generator=_gen(6))
    stats = _ising_stats(t, out.chains)
    _within_3se(stats["marginal"], t.marginals())
    _within_3se(stats["abs_mag"], torch.tensor([t.mean_abs_magnetization()], dtype=torch.float64))
    _within_3se(stats["nn_corr"], torch.tensor([t.nearest_neighbour_correlation()], dtype=torch.float64))
    assert 0 < out.info["acceptance_rate"] < 1


def test_gibbs_log_prob_only_target_equals_fast_path():
    t = Ising(size=3, coupling=0.3)

    class LogProbOnly:
        dim = 9

        def log_prob(self, x):
            return t.log_prob(x)

    g = Gibbs(num_chains=5, num_samples=10, burn_in=2)
    fast, slow = g.sample(t, generator=_gen(7)), g.sample(LogProbOnly(), generator=_gen(7))
    assert torch.equal(fast.x, slow.x)
    assert set(fast.x.unique().tolist()) <= {-1.0, 1.0}
    state = g.init_state(t, fast.x[:5])
    new, _flipped, counters = g.transition(state, LogProbOnly(), _gen(8))
    torch.testing.assert_close(new.log_prob, t.log_prob(new.x))
    assert counters["log_prob_evals"] == 5 * 9


def test_iid_and_subsamplers():
    g = Gaussian(dim=2)
    s = IID(num_samples=400).sample(g, generator=_gen(9))
    assert s.x.shape == (400, 2)
    with pytest.raises(ConfigError, match="exact samples"):
        IID().sample(DoubleWell(), generator=_gen())
    sub = RandomSubsample().sample(s, generator=_gen(10))
    assert sub.x.shape == (20, 2)
    idx = torch.tensor(sub.info["indices"])
    assert len(set(idx.tolist())) == 20 and torch.equal(sub.x, s.x[idx])
    th = StandardThinning(num_points=30).sample(s, generator=None)
    assert th.info["step"] == 13 and th.x.shape == (30, 2) and torch.equal(th.x[0], s.x[12])
    with pytest.raises(ConfigError):
        RandomSubsample().sample(g, generator=_gen())
    with pytest.raises(ConfigError, match="num_points"):
        StandardThinning(num_points=500).sample(s, generator=None)
    w = Samples(x=s.x, log_weights=torch.arange(400.0))
    assert torch.equal(
        StandardThinning(step=100).sample(w, generator=None).log_weights,
        torch.tensor([99.0, 199.0, 299.0, 399.0]),
    )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_fused_evaluation_gives_the_same_chains_bit_for_bit(dtype):
    """MALA and ULA call the Gaussian's log_prob_and_score once per proposal; hiding it (two calls)
    changes no bit of the chains, and the counters (kept on the device) are the same."""
    from quadriga_std.samplers.mcmc import MALA, ULA
    from quadriga_std.targets.gaussian import Gaussian

    class Separate:  # the same target without the fused call
        def __init__(self, inner):
            self.inner, self.dim = inner, inner.dim

        def log_prob(self, x):
            return self.inner.log_prob(x)

        def score(self, x):
            return self.inner.score(x)

    target = Gaussian(dim=7, equicorrelation=0.4)
    x = torch.randn(5, 7, dtype=getattr(torch, dtype), generator=torch.Generator().manual_seed(1))
    lp, s = target.log_prob_and_score(x)
    assert torch.equal(lp, target.log_prob(x)) and torch.equal(s, target.score(x))
    for cls in (MALA, ULA):
        kw = dict(num_chains=3, num_samples=150, burn_in=20, step_size=0.05, dtype=dtype)
        a = cls(**kw).sample(target, generator=torch.Generator().manual_seed(0))
        b = cls(**kw).sample(Separate(target), generator=torch.Generator().manual_seed(0))
        assert torch.equal(a.x, b.x)
        keys = ("acceptance_rate", "score_evals", "log_prob_evals", "rejected_nonfinite")
        assert {k: a.info[k] for k in keys} == {k: b.info[k] for k in keys}
        assert isinstance(a.info["rejected_nonfinite"], int) and a.info["score_evals"] == 3 * 171
