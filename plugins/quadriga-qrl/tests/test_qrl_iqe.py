"""IQE: the union length against interval merging, the quasimetric axioms, a closed form."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_qrl.iqe import IQE, interval_union_length, iqe_components


def _merged_length(starts, ends):
    """Reference: sort and merge the intervals, sum the merged lengths."""
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(zip(starts, ends, strict=True)):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0.0)


def test_union_length_matches_interval_merging():
    rng = np.random.default_rng(0)
    start = rng.normal(size=(200, 7))
    end = start + rng.exponential(0.5, size=(200, 7)) * (rng.random((200, 7)) < 0.7)  # some empty
    got = interval_union_length(torch.as_tensor(start), torch.as_tensor(end)).numpy()
    want = np.array([_merged_length(s, e) for s, e in zip(start, end, strict=True)])
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_one_coordinate_is_the_positive_part():
    # k = m = 1: d(u, v) = |[u, max(u, v)]| = max(v - u, 0), an asymmetric quasimetric in closed form
    u, v = torch.tensor([[0.0]]), torch.tensor([[2.0]])
    assert float(iqe_components(u, v, 1)) == 2.0 and float(iqe_components(v, u, 1)) == 0.0


def test_iqe_is_a_quasimetric():
    torch.manual_seed(0)
    head = IQE(num_components=4)
    with torch.no_grad():
        head.raw_alpha.fill_(0.3)
    x, y, z = (torch.randn(500, 4 * 5) for _ in range(3))
    dxy, dyz, dxz = head(x, y), head(y, z), head(x, z)
    assert torch.all(head(x, x) == 0)
    assert torch.all(dxy >= 0)
    assert torch.all(dxz <= dxy + dyz + 1e-6)  # triangle inequality
    assert (dxy - head(y, x)).abs().max() > 0.1  # asymmetric


def test_components_must_divide_the_latent():
    with pytest.raises(ValueError, match="divide"):
        iqe_components(torch.zeros(3, 10), torch.zeros(3, 10), 3)


def test_gradients_flow_to_both_arguments():
    u = torch.randn(8, 12, requires_grad=True)
    v = torch.randn(8, 12, requires_grad=True)
    IQE(3)(u, v).sum().backward()
    assert u.grad.abs().sum() > 0 and v.grad.abs().sum() > 0
