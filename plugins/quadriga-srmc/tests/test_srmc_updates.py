"""theta recursion and alpha schedules of SRMC against hand-computed values."""

import math

import attrs
import pytest
import torch
from quadriga_srmc.sampler import SRMC
from quadriga_srmc.schedules import alpha_at, theta_gain
from quadriga_std.samplers.mcmc import ChainState
from quadriga_std.targets.gaussian import Gaussian

from quadriga.interfaces import Sampler


@attrs.define(kw_only=True)
class _ShiftKernel(Sampler):
    """Deterministic stand-in kernel: every transition moves each chain by +1 in every coordinate."""

    num_chains: int = 1
    uses_score = False

    def initial_state(self, target, generator):
        return self.init_state(target, torch.zeros(self.num_chains, target.dim, dtype=torch.float64))

    def init_state(self, target, x):
        return ChainState(x=x, log_prob=target.log_prob(x), score=None)

    def transition(self, state, target, generator):
        y = state.x + 1.0
        return ChainState(x=y, log_prob=target.log_prob(y)), torch.ones(y.shape[0], dtype=torch.bool), {}


def test_theta_matches_hand_computed_three_steps():
    # pi = N(0, I_2), s(x) = -x; X_1 = (2, -1), X_2 = (3, 0), X_3 = (4, 1); gamma_n = 0.5 n^-0.75.
    # theta_1 = 0.5 (-2, 1) = (-1, 0.5)
    # theta_2 = theta_1 + 0.297302 ((-3, 0) - theta_1) = (-1.594604, 0.351349)
    # theta_3 = theta_2 + 0.219346 ((-4, -1) - theta_2) = (-2.122217, 0.054937)
    target = Gaussian(mean=[0.0, 0.0], covariance=[[1.0, 0.0], [0.0, 1.0]])
    expected = {1: [-1.0, 0.5], 2: [-1.594604, 0.351349], 3: [-2.122217, 0.054937]}
    for steps, theta in expected.items():
        sr = SRMC(
            base_kernel=_ShiftKernel(),
            alpha=1.0,
            theta_step=0.5,
            rho=0.75,
            num_chains=1,
            num_steps=steps,
            burn_in=0,
        )
        out = sr.run(
            target,
            generator=torch.Generator().manual_seed(0),
            x0=torch.tensor([[1.0, -2.0]], dtype=torch.float64),
        )
        assert out.theta[0].tolist() == pytest.approx(theta, abs=1e-6)
        assert out.x[0].tolist() == [1.0 + steps, -2.0 + steps]


def test_gain_and_alpha_schedules():
    assert theta_gain(1, theta_step=0.5, rho=0.75) == 0.5
    assert theta_gain(16, theta_step=1.0, rho=0.75) == pytest.approx(0.125)
    assert alpha_at(7, alpha=2.0, schedule="fixed") == 2.0
    assert alpha_at(250, alpha=2.0, schedule="warmup", warmup=1000) == pytest.approx(0.5)
    assert alpha_at(5000, alpha=2.0, schedule="warmup", warmup=1000) == 2.0
    # adaptive: n / (C + n / alpha): 100 / (100 + 50) and the limit alpha
    assert alpha_at(100, alpha=2.0, schedule="adaptive", scale=100.0) == pytest.approx(2 / 3)
    assert alpha_at(10**9, alpha=2.0, schedule="adaptive", scale=100.0) == pytest.approx(2.0, rel=1e-6)
    assert alpha_at(3, alpha=0.0, schedule="adaptive") == 0.0
    with pytest.raises(ValueError):
        alpha_at(0, alpha=1.0, schedule="fixed")
    with pytest.raises(ValueError):
        alpha_at(1, alpha=1.0, schedule="cosine")
    assert math.isclose(theta_gain(3, theta_step=2.0, rho=1.0), 2 / 3)
