"""Discrete score of SRMC on the Ising model against exact enumeration."""

import torch
from quadriga_srmc.evaluators import exact_expectation
from quadriga_srmc.sampler import SRMC
from quadriga_srmc.surrogate import FlipTilt, discrete_score
from quadriga_std.samplers.gibbs import Gibbs
from quadriga_std.targets.ising import Ising


class _LogProbOnly:
    """The Ising density seen only through log_prob (no fast paths)."""

    def __init__(self, ising):
        self.ising, self.dim = ising, ising.dim

    def log_prob(self, x):
        return self.ising.log_prob(x)


def test_discrete_score_has_zero_mean_under_exact_ising():
    ising = Ising(size=3, coupling=0.44, field=0.1)
    states, p = ising.states(), ising.probabilities()
    s = discrete_score(_LogProbOnly(ising), states)  # generic path: d + 1 log_prob rows per state
    assert torch.allclose(s, ising.discrete_score(states), atol=1e-10)
    mean = (p[:, None] * s).sum(0)
    assert mean.abs().max() < 1e-10
    assert s.abs().max() > 1.0  # not trivially zero


def test_flip_tilt_ratios_match_brute_force():
    ising = Ising(size=3, coupling=0.4, field=0.05)
    gen = torch.Generator().manual_seed(0)
    x = (2 * torch.randint(0, 2, (3, 9), generator=gen) - 1).double()
    theta = torch.randn(3, 9, generator=gen, dtype=torch.float64)
    tilt = FlipTilt(ising, theta)
    tilt.set(theta, 0.7)
    ratios = tilt.all_flip_log_ratios(x)
    for j in range(9):
        y = x.clone()
        y[:, j] = -y[:, j]
        assert torch.allclose(ratios[:, j], tilt.log_prob(y) - tilt.log_prob(x), atol=1e-10)


def test_gibbs_on_the_surrogate_leaves_pi_theta_invariant():
    # with theta frozen, the base kernel run on the tilt must sample pi_theta exactly (enumeration)
    ising = Ising(size=3, coupling=0.3, field=0.15)
    gen = torch.Generator().manual_seed(0)
    th = 0.3 * torch.randn(1, 9, generator=gen, dtype=torch.float64)
    theta = th.expand(64, 9).clone()
    tilt = FlipTilt(ising, theta)
    tilt.set(theta, 1.0)
    states = ising.states()
    p = torch.softmax(ising.log_prob(states) - (th * ising.discrete_score(states)).sum(-1), 0)
    exact = float((p * states.mean(-1)).sum())
    assert abs(exact - ising.mean_magnetization()) > 0.005  # the tilt matters at this theta
    kernel = Gibbs(num_chains=64)
    state = kernel.initial_state(tilt, gen)
    draws = []
    for n in range(300):
        state, _, _ = kernel.transition(state, tilt, gen)
        if n >= 50:
            draws.append(state.x.mean(-1))
    m = torch.stack(draws, 1).mean(1)
    assert abs(float(m.mean()) - exact) < 4.5 * float(m.std()) / 8


def test_sr_gibbs_magnetization_matches_enumeration():
    # theta -> 0 (rho = 1: theta is the running score average), so the plain average targets pi
    ising = Ising(size=2, coupling=0.3, field=0.15)
    out = SRMC(base_kernel=Gibbs(), alpha=0.5, rho=1.0, num_chains=64, num_steps=600, burn_in=50).sample(
        ising, generator=torch.Generator().manual_seed(1)
    )
    m = out.chains.mean(-1).mean(1)  # per-chain mean magnetization
    exact = exact_expectation(ising, lambda s: s.mean(-1))
    assert abs(exact - ising.mean_magnetization()) < 1e-12
    se = m.std() / 64**0.5
    assert abs(float(m.mean()) - exact) < 4.5 * float(se)
    assert out.info["score_evals"] > 0 and 0 < out.info["acceptance_rate"] < 1
