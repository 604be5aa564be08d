"""Stochastic blocks keep their target invariant; the free-energy metric against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

pytest.importorskip("normflows")

import normflows as nf
from quadriga_snf.components import (
    FREE_ENERGY_MIN_COUNT,
    FREE_ENERGY_RANGE,
    exact_draws,
    exact_free_energy,
    free_energy_error,
)
from quadriga_snf.flows import InterpolatedTarget, TargetDensity, seeded
from quadriga_std.targets.analytic import DoubleWell
from quadriga_std.targets.gaussian import Gaussian
from scipy import stats

#: each test below is one family of 4 one-sided/two-sided tests; alpha per test (Bonferroni: 0.004 total)
ALPHA = 1e-3


def test_metropolis_block_leaves_a_gaussian_target_invariant():
    """x ~ N(mu, S) exactly, then one normflows MetropolisHastings block (10 steps, proposal std 0.5).

    The output must still be N(mu, S): a KS test of each whitened coordinate against N(0, 1) and a
    z-test of each mean, at ALPHA each, n = 20000, seed fixed. The block must also move the points
    (otherwise invariance is trivial): at least 30 % of them change.
    """
    mean = torch.tensor([1.0, -0.5], dtype=torch.float64)
    cov = torch.tensor([[2.0, 0.6], [0.6, 0.5]], dtype=torch.float64)
    target = Gaussian(mean=mean.tolist(), covariance=cov.tolist())
    q0 = nf.distributions.DiagGaussian(2, trainable=False)
    block = nf.flows.MetropolisHastings(
        InterpolatedTarget(q0, TargetDensity(target), 1.0),
        nf.distributions.DiagGaussianProposal((2,), [0.5, 0.5]),
        10,
    )
    n = 20000
    chol = torch.linalg.cholesky(cov)
    g = torch.Generator().manual_seed(11)
    x = (mean + torch.randn(n, 2, generator=g, dtype=torch.float64) @ chol.T).float()
    with seeded(torch.Generator().manual_seed(12)), torch.no_grad():
        y, log_det = block(x)
    assert float((y != x).any(1).double().mean()) > 0.3
    white = torch.linalg.solve_triangular(chol, (y.double() - mean).T, upper=False).T.numpy()
    for j in range(2):
        assert stats.kstest(white[:, j], "norm").pvalue > ALPHA, j
        z = white[:, j].mean() * math.sqrt(n)
        assert 2 * stats.norm.sf(abs(z)) > ALPHA, (j, z)
    # the layer's log path ratio is the energy difference log p(x) - log p(y) (detailed balance)
    lp = target.log_prob(x.double()) - target.log_prob(y.double())
    assert torch.allclose(log_det.double(), lp, atol=1e-3)


def test_metropolis_block_moves_a_wrong_start_towards_the_target():
    """Power check of the test above: from N(0, I) the same block's output is rejected by the KS test."""
    mean = torch.tensor([1.0, -0.5])
    target = Gaussian(mean=mean.tolist(), covariance=[[2.0, 0.6], [0.6, 0.5]])
    q0 = nf.distributions.DiagGaussian(2, trainable=False)
    block = nf.flows.MetropolisHastings(
        InterpolatedTarget(q0, TargetDensity(target), 1.0),
        nf.distributions.DiagGaussianProposal((2,), [0.5, 0.5]),
        1,
    )
    x = torch.randn(20000, 2, generator=torch.Generator().manual_seed(11))
    with seeded(torch.Generator().manual_seed(12)), torch.no_grad():
        y, _ = block(x)
    assert stats.kstest(((y[:, 0] - 1.0) / math.sqrt(2.0)).numpy(), "norm").pvalue < ALPHA


def test_exact_free_energy_is_the_energy_up_to_a_constant_on_narrow_bins():
    """F_j = -log P(bin j) = u(c_j) + const + O(h^2 u''): within 2e-3 kT on bins of width 0.01."""
    target = DoubleWell()
    edges = torch.linspace(*FREE_ENERGY_RANGE, 451, dtype=torch.float64)
    f = exact_free_energy(target, edges)
    c = (edges[1:] + edges[:-1]) / 2
    u = target.a * c + target.b * c**2 + target.c * c**4
    diff = (f - u).numpy()
    assert np.ptp(diff) < 2e-3, np.ptp(diff)


def test_free_energy_error_is_the_rms_of_a_known_profile_perturbation():
    """Weights with masses exp(-F_j - d_j) give error RMS(d - mean d); a constant d gives 0.

    Each bin centre is repeated 10000 times (the floor of half a draw is then 1.1e-6) and bins of
    exact mass below 1e-4 are left out, so no kept bin is floored.
    """
    target = DoubleWell()
    edges = torch.linspace(*FREE_ENERGY_RANGE, 46, dtype=torch.float64)
    f = exact_free_energy(target, edges)
    centres = ((edges[1:] + edges[:-1]) / 2).repeat_interleave(10000)
    keep = torch.exp(-f) >= 1e-4
    d = torch.linspace(-0.3, 0.5, f.numel(), dtype=torch.float64) ** 2
    dk = d[keep]
    for shift, expected in (
        (torch.full_like(f, 0.7), 0.0),
        (d, float((dk - dk.mean()).pow(2).mean().sqrt())),
    ):
        w = torch.exp(-f - shift).repeat_interleave(10000)
        error = free_energy_error(centres, w / w.sum(), f, edges, min_mass=1e-4)
        assert error == pytest.approx(expected, abs=1e-9)


def test_free_energy_error_penalises_a_missing_well():
    """Exact inverse-CDF draws (n = 4000) have a small profile error; the same draws with the left well
    removed (a mode-collapsed sampler) a large one, because the resolvable left-well bins are empty."""
    target = DoubleWell()
    edges = torch.linspace(*FREE_ENERGY_RANGE, 46, dtype=torch.float64)
    f = exact_free_energy(target, edges)
    x = exact_draws(target, 4000, torch.Generator().manual_seed(5))[:, 0].contiguous()
    min_mass = FREE_ENERGY_MIN_COUNT / x.numel()
    good = free_energy_error(x, torch.full_like(x, 1.0 / x.numel()), f, edges, min_mass=min_mass)
    right = x[x > 0]
    collapsed = free_energy_error(
        right, torch.full_like(right, 1.0 / right.numel()), f, edges, min_mass=min_mass
    )
    assert good < 0.5 < 1.5 < collapsed, (good, collapsed)
