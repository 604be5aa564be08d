"""The claim helpers on constructed chains: acceptance on kept transitions, the run-off guard, the MSE."""

import numpy as np
import pytest
import torch
from quadriga_srmc.claims import DIVERGED_SDS, _diverged, _moved, _mse


def test_acceptance_counts_kept_transitions_that_moved():
    # 2 chains x 5 kept draws x 2 dims: chain 0 moves on 2 of 4 transitions, chain 1 on 4 of 4
    c0 = [[0, 0], [1, 0], [1, 0], [1, 0], [2, 2]]
    c1 = [[0, 0], [0, 1], [0, 2], [0, 3], [0, 4]]
    chains = torch.tensor([c0, c1], dtype=torch.float64)
    assert _moved(chains) == pytest.approx(6 / 8)
    assert _moved(torch.zeros(3, 10, 2)) == 0.0  # a chain that never moves accepts nothing


def test_guard_counts_chains_that_run_off_to_huge_finite_values():
    chains = torch.zeros(4, 6, 3, dtype=torch.float64)
    chains[1, 3, 0] = 0.99 * DIVERGED_SDS * 2.0  # inside the guard for target s.d. 2
    chains[2, 5, 2] = -1.01 * DIVERGED_SDS * 2.0  # beyond it, still finite
    chains[3, 0, 1] = 1e300
    assert bool(torch.isfinite(chains).all())
    assert _diverged(chains.abs().amax(dim=(1, 2)), 2.0) == 2


def test_mse_of_the_chain_mean_is_the_per_coordinate_squared_error():
    chains = torch.tensor([[[1.0, 3.0], [3.0, 5.0]], [[0.0, 0.0], [0.0, 0.0]]])  # means (2, 4) and (0, 0)
    mu = torch.tensor([1.0, 1.0])
    np.testing.assert_allclose(_mse(chains, mu), [(1 + 9) / 2, (1 + 1) / 2])
