"""The MMD^2 loss and MD3QN's mechanism on free particles: closed forms and a statistical bound."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from quadriga_md3qn.learner import MD3QN, PerSourceMMDQN
from quadriga_md3qn.mmd import mixture_kernel, mmd2, squared_distances
from quadriga_std.rl.returns import correlation_matrix

from quadriga.errors import ConfigError
from quadriga.threads import single_thread

H = [float(h) for h in range(1, 11)]


def test_mmd2_of_single_particles_is_the_closed_form():
    # one particle each: MMD^2 = k(x, x) + k(y, y) - 2 k(x, y) = 2 sum_h (1 - exp(-|x - y|^2 / h))
    z, t = torch.tensor([[[0.0, 0.0]]]), torch.tensor([[[1.0, 2.0]]])
    expected = 2 * sum(1 - math.exp(-5.0 / h) for h in H)
    assert float(mmd2(z, t, H)) == pytest.approx(expected, rel=1e-6)
    # the official code's kernel averages over the K = 2 sources: distance 2.5 instead of 5
    assert float(mmd2(z, t, H, "mean")) == pytest.approx(2 * sum(1 - math.exp(-2.5 / h) for h in H), rel=1e-6)


def test_mmd2_is_zero_for_equal_sets_and_code_kernel_is_paper_kernel_with_k_times_bandwidths():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(4, 16, 3, generator=g)
    assert torch.allclose(mmd2(z, z[:, torch.randperm(16, generator=g)], H), torch.zeros(4), atol=1e-5)
    t = torch.randn(4, 20, 3, generator=g)
    torch.testing.assert_close(mmd2(z, t, H, "mean"), mmd2(z, t, [3 * h for h in H], "sum"))
    # the V-statistic is a squared RKHS distance: non-negative
    assert torch.all(mmd2(z, t, H) >= -1e-6)
    d = squared_distances(z, t)
    torch.testing.assert_close(d, torch.cdist(z, t).pow(2), atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(mixture_kernel(torch.zeros(1), [1.0, 2.0]), torch.tensor([2.0]))


def _fit_free_particles(distance, seed: int) -> np.ndarray:
    """Gradient descent of free particles z [1, 48, 2] onto 128 draws of a rho = 0.6 Gaussian."""
    rng = np.random.default_rng(seed)
    target = rng.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], 128)
    t = torch.tensor(target, dtype=torch.float32)[None]
    z = torch.tensor(rng.normal(size=(1, 48, 2)), dtype=torch.float32, requires_grad=True)
    opt = torch.optim.Adam([z], lr=0.05)
    with single_thread():
        for _ in range(150):
            opt.zero_grad()
            distance(z, t).sum().backward()
            opt.step()
    return z.detach()[0].numpy()


def test_joint_mmd_recovers_the_correlation_that_per_source_mmd_ignores():
    joint, per_source = MD3QN(), PerSourceMMDQN()
    corr_joint = [correlation_matrix(_fit_free_particles(joint.particle_distance, s))[0, 1] for s in range(2)]
    corr_marg = [
        correlation_matrix(_fit_free_particles(per_source.particle_distance, s))[0, 1] for s in range(2)
    ]
    # joint MMD: the particles' correlation approaches 0.6 (sample correlation of 48 points: sd ~0.09)
    assert all(abs(c - 0.6) < 0.2 for c in corr_joint), corr_joint
    # marginal MMD leaves the coupling of the independent start (corr ~ 0 +- 0.15) in place
    assert all(abs(c) < 0.35 for c in corr_marg), corr_marg


def test_md3qn_settings_are_checked():
    with pytest.raises(ConfigError, match="bandwidths"):
        MD3QN(bandwidths=[1.0, -2.0])
    with pytest.raises(ConfigError, match="kernel_distance"):
        MD3QN(kernel_distance="max")
    with pytest.raises(ConfigError, match="loss_function"):
        MD3QN(loss_function="l2")
