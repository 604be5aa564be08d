"""Stream-SW against POT: convention, exactness without compaction, seeding, batching, weights."""

import numpy as np
import ot
import pytest
import torch
from quadriga_stream_sw.stream import OneSidedStreamSW, StreamSW, SubsampleSW
from quadriga_stream_sw.wasserstein import exact_sliced, projected_wpp, random_projections

from quadriga.errors import ConfigError


def _data(n=300, m=250, d=3, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return (
        torch.randn(n, d, generator=gen, dtype=torch.float64) - 1,
        torch.randn(m, d, generator=gen, dtype=torch.float64) * 1.5 + 2,
    )


def _pot(x, y, theta, p=2.0):
    return ot.sliced_wasserstein_distance(x.numpy(), y.numpy(), projections=theta.T.numpy(), p=p)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_equals_pot_without_compaction(p):
    x, y = _data()
    sw = StreamSW(3, num_projections=40, k=512, p=p, generator=torch.Generator().manual_seed(1))
    sw.update_source(x)
    sw.update_target(y)
    est = sw.estimate()
    assert est.value == pytest.approx(_pot(x, y, sw.theta, p), rel=1e-12)
    assert est.info["retained_per_projection"] == 550


def test_weights_are_validated():
    u = torch.randn(10, 4, dtype=torch.float64)
    v = torch.randn(8, 4, dtype=torch.float64)
    with pytest.raises(ConfigError, match="entries for 10 atoms"):
        projected_wpp(u, v, torch.full((100,), 0.01, dtype=torch.float64), None)
    # the reference code's baseline bug: a subsample of m points weighted 1/n sums to m/n
    with pytest.raises(ConfigError, match=r"sums to 0\.1"):
        projected_wpp(u, v, torch.full((10,), 0.01, dtype=torch.float64), None)
    with pytest.raises(ConfigError, match="non-negative"):
        projected_wpp(u, v, torch.tensor([-0.1] + [1.1 / 9] * 9, dtype=torch.float64), None)
    with pytest.raises(ConfigError, match="sums to"):
        exact_sliced(u[:, :2], v[:, :2], random_projections(2, 5, None), a=torch.full((10,), 0.2))


def test_identical_seeds_identical_projections_and_estimates():
    x, y = _data(3000, 3000)

    def run(seed):
        sw = StreamSW(3, num_projections=30, k=16, generator=torch.Generator().manual_seed(seed))
        for start in range(0, 3000, 500):
            sw.update_source(x[start : start + 500])
            sw.update_target(y[start : start + 500])
        return sw.theta, sw.estimate()

    (t1, e1), (t2, e2), (t3, e3) = run(7), run(7), run(8)
    assert torch.equal(t1, t2) and e1.value == e2.value and e1.stderr == e2.stderr
    assert not torch.equal(t1, t3) and e1.value != e3.value


def test_varying_batches_match_one_batch_without_compaction():
    x, y = _data(400, 300)
    theta = random_projections(3, 25, torch.Generator().manual_seed(4))
    one = StreamSW(3, k=1000, projections=theta)
    one.update_source(x)
    one.update_target(y)
    many = StreamSW(3, k=1000, projections=theta)
    for a, b in [(0, 1), (1, 57), (57, 58), (58, 250), (250, 400)]:
        many.update_source(x[a:b])
    for a, b in [(0, 120), (120, 121), (121, 300)]:
        many.update_target(y[a:b])
    many.update_target(y[:0])
    assert many.estimate().value == pytest.approx(one.estimate().value, rel=1e-13)


def test_compacted_estimate_close_to_exact_and_memory_bounded():
    x, y = _data(8000, 8000, d=2, seed=3)
    sw = StreamSW(2, num_projections=30, k=40, generator=torch.Generator().manual_seed(0))
    for start in range(0, 8000, 1000):
        sw.update_source(x[start : start + 1000])
        sw.update_target(y[start : start + 1000])
    exact = _pot(x, y, sw.theta)
    assert abs(sw.estimate().value - exact) / exact < 0.01
    assert sw.memory_floats() <= 2 * 30 * (3 * 40 + 13)


def test_stderr_matches_spread_over_direction_sets():
    x, y = _data(200, 200, d=5, seed=6)
    values, stderrs = [], []
    for seed in range(20):
        sw = StreamSW(5, num_projections=40, k=1000, generator=torch.Generator().manual_seed(seed))
        sw.update_source(x)
        sw.update_target(y)
        est = sw.estimate()
        values.append(est.value)
        stderrs.append(est.stderr)
    ratio = np.std(values, ddof=1) / np.mean(stderrs)
    assert 0.55 < ratio < 1.7


def test_one_sided_matches_pot_value_and_gradient():
    x, y = _data(200, 300)
    theta = random_projections(3, 20, torch.Generator().manual_seed(9))
    sw = OneSidedStreamSW(3, k=1000, projections=theta)
    sw.update_target(y[:100])
    sw.update_target(y[100:])
    xs = x.clone().requires_grad_(True)
    value = sw.distance(xs)
    value.backward()
    xr = x.clone().requires_grad_(True)
    ref = ot.sliced_wasserstein_distance(xr, y, projections=theta.T, p=2)
    ref.backward()
    assert float(value.detach()) == pytest.approx(float(ref.detach()), rel=1e-12)
    assert torch.allclose(xs.grad, xr.grad, rtol=1e-9, atol=1e-12)
    assert sw.estimate(x).info["memory_floats"] == 300 * 20


def test_subsample_keeps_m_points_with_weights_one_over_m():
    x, y = _data(1000, 1000, d=2)
    theta = random_projections(2, 20, torch.Generator().manual_seed(0))
    full = SubsampleSW(2, num_retained=5000, projections=theta, generator=torch.Generator().manual_seed(0))
    full.update_source(x)
    full.update_target(y)
    assert full.estimate().value == pytest.approx(_pot(x, y, theta), rel=1e-12)
    sub = SubsampleSW(2, num_retained=100, projections=theta, generator=torch.Generator().manual_seed(0))
    for start in range(0, 1000, 300):
        sub.update_source(x[start : start + 300])
        sub.update_target(y[start : start + 300])
    exact = _pot(x, y, theta)
    assert sub.memory_floats() == 2 * 100 * 20
    # correctly weighted: close to the exact value, not sqrt(m/n) = 0.32 times it
    assert abs(sub.estimate().value - exact) / exact < 0.15


def test_bad_batches_raise():
    sw = StreamSW(2, num_projections=5, k=10)
    with pytest.raises(ConfigError, match=r"\[B, 2\]"):
        sw.update_source(torch.zeros(4, 3))
    with pytest.raises(ConfigError, match="NaN"):
        sw.update_source(torch.tensor([[0.0, float("nan")]]))
    with pytest.raises(ConfigError, match="both streams"):
        sw.estimate()
