"""Distances: closed forms, independent numpy computations and POT's own answers."""

from __future__ import annotations

import math

import numpy as np
import ot
import pytest
import scipy.stats
import torch
from quadriga_std.evaluators.distances import MMD, EnergyDistance, SlicedWasserstein, Wasserstein

from quadriga.artifacts import Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Target


def _s(x, lw=None, stage=None):
    return Samples(
        x=torch.as_tensor(np.asarray(x, dtype=np.float64)),
        log_weights=None if lw is None else torch.as_tensor(lw),
        info={"stage": stage} if stage else {},
    )


def test_energy_distance_by_hand_1d():
    # x = {0, 1}, y = {3}: 2 * (3 + 2)/2 - (0 + 1 + 1 + 0)/4 - 0 = 4.5
    m = EnergyDistance().evaluate(
        _s([[0.0], [1.0]], stage="a"), _s([[3.0]]), generator=torch.Generator().manual_seed(0)
    )
    assert m.values["a/energy_distance"] == pytest.approx(4.5, abs=1e-12)
    assert m.values["a/energy_distance_sqrt"] == pytest.approx(math.sqrt(4.5))
    assert m.tables["summary"][0]["subject"] == "a" and "distances" in m.figures


def test_energy_distance_weighted_against_numpy():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(40, 3)), rng.normal(0.5, 1.0, size=(30, 3))
    lw = rng.normal(size=40)
    a = np.exp(lw) / np.exp(lw).sum()
    b = np.full(30, 1 / 30)
    d = lambda u, v: np.linalg.norm(u[:, None] - v[None], axis=-1)  # noqa: E731
    expect = 2 * a @ d(x, y) @ b - a @ d(x, x) @ a - b @ d(y, y) @ b
    got = (
        EnergyDistance()
        .evaluate({"w": _s(x, lw)}, _s(y), generator=torch.Generator().manual_seed(0))
        .values["w/energy_distance"]
    )
    assert got == pytest.approx(expect, rel=1e-10)


def test_mmd_unbiased_u_statistic_against_numpy():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(25, 2)), rng.normal(1.0, 1.0, size=(35, 2))
    h = 0.7
    k = lambda u, v: np.exp(-((u[:, None] - v[None]) ** 2).sum(-1) / (2 * h * h))  # noqa: E731
    kxx, kyy = k(x, x), k(y, y)
    expect = (
        (kxx.sum() - np.trace(kxx)) / (25 * 24) + (kyy.sum() - np.trace(kyy)) / (35 * 34) - 2 * k(x, y).mean()
    )
    vals = MMD(bandwidth=h).evaluate({"s": _s(x)}, _s(y), generator=torch.Generator().manual_seed(0)).values
    assert vals["s/mmd2"] == pytest.approx(expect, rel=1e-10)
    assert vals["s/mmd"] == pytest.approx(math.sqrt(max(expect, 0)))
    # uniform log-weights give the same U-statistic
    assert MMD(bandwidth=h).evaluate(
        {"s": _s(x, np.zeros(25))}, _s(y), generator=torch.Generator().manual_seed(0)
    ).values["s/mmd2"] == pytest.approx(expect)
    # IMQ kernel
    kimq = lambda u, v: (1 + ((u[:, None] - v[None]) ** 2).sum(-1) / h**2) ** -0.5  # noqa: E731
    a, c = kimq(x, x), kimq(y, y)
    expect_imq = (a.sum() - 25) / (25 * 24) + (c.sum() - 35) / (35 * 34) - 2 * kimq(x, y).mean()
    assert MMD(kernel="imq", bandwidth=h).evaluate(
        {"s": _s(x)}, _s(y), generator=torch.Generator().manual_seed(0)
    ).values["s/mmd2"] == pytest.approx(expect_imq)


def test_mmd_gaussian_closed_form_between_gaussians():
    # X ~ N(0, s^2 I_d), Y ~ N(mu, s^2 I_d), Gaussian kernel with bandwidth h:
    # MMD^2 = 2 (h^2/(h^2+2s^2))^(d/2) (1 - exp(-|mu|^2 / (2 (h^2 + 2 s^2))))
    d, s, h, n = 2, 1.0, 1.5, 1500
    mu = np.array([1.0, 0.5])
    c = h * h + 2 * s * s
    exact = 2 * (h * h / c) ** (d / 2) * (1 - math.exp(-(mu @ mu) / (2 * c)))
    est = []
    for rep in range(4):
        rng = np.random.default_rng(100 + rep)
        est.append(
            MMD(bandwidth=h)
            .evaluate(
                {"x": _s(rng.normal(size=(n, d)))},
                _s(mu + rng.normal(size=(n, d))),
                generator=torch.Generator().manual_seed(0),
            )
            .values["x/mmd2"]
        )
    est = np.array(est)
    se = est.std(ddof=1) / math.sqrt(len(est))
    assert abs(est.mean() - exact) < 4 * se + 0.005, (est, exact)


def test_median_heuristic_bandwidth():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(50, 2)), rng.normal(size=(60, 2))
    z = np.vstack([x, y])
    dist = np.linalg.norm(z[:, None] - z[None], axis=-1)[np.triu_indices(110, 1)]
    h = MMD().evaluate({"x": _s(x)}, _s(y), generator=torch.Generator().manual_seed(0)).values["x/bandwidth"]
    assert h == pytest.approx(float(torch.tensor(dist).median()))


def test_sliced_wasserstein_matches_pot_with_same_projections():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(200, 4)), rng.normal(0.3, 1.2, size=(150, 4))
    ev = SlicedWasserstein(num_projections=50, p=2.0)
    proj = ev.projections(4, torch.Generator().manual_seed(7))
    assert proj.shape == (4, 50) and np.allclose(np.linalg.norm(proj, axis=0), 1)
    expect = ot.sliced_wasserstein_distance(x, y, n_projections=50, p=2, projections=proj)
    got = ev.evaluate({"x": _s(x)}, _s(y), generator=torch.Generator().manual_seed(7))
    assert got.values["x/sliced_wasserstein"] == pytest.approx(expect, rel=1e-10)
    # another stage generator (another root seed) gives other projections and another value
    other = ev.evaluate({"x": _s(x)}, _s(y), generator=torch.Generator().manual_seed(8))
    assert other.values["x/sliced_wasserstein"] != pytest.approx(expect, rel=1e-12)


def test_wasserstein_matches_emd2_and_scipy_1d():
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(60, 3)), rng.normal(1.0, 1.0, size=(50, 3))
    expect = ot.emd2(np.full(60, 1 / 60), np.full(50, 1 / 50), ot.dist(x, y, metric="sqeuclidean")) ** 0.5
    assert Wasserstein(p=2).evaluate({"x": _s(x)}, _s(y), generator=torch.Generator().manual_seed(0)).values[
        "x/wasserstein"
    ] == pytest.approx(expect, rel=1e-8)
    # weighted W1 in 1-D against scipy's closed form on the quantile functions
    u, v = rng.normal(size=80), rng.normal(0.5, 2.0, size=70)
    lw = rng.normal(size=80)
    ref = scipy.stats.wasserstein_distance(u, v, u_weights=np.exp(lw))
    got = (
        Wasserstein(p=1)
        .evaluate({"u": _s(u[:, None], lw)}, _s(v[:, None]), generator=torch.Generator().manual_seed(0))
        .values["u/wasserstein"]
    )
    assert got == pytest.approx(ref, rel=1e-8)


def test_wasserstein_subsampling_is_reported():
    rng = np.random.default_rng(5)
    with pytest.warns(UserWarning, match="subsampled"):
        m = Wasserstein(max_points=30).evaluate(
            {"x": _s(rng.normal(size=(50, 2)))},
            _s(rng.normal(size=(20, 2))),
            generator=torch.Generator().manual_seed(0),
        )
    assert any("subsampled from 50 to 30" in n for n in m.info["notes"])


class _NoSampler(Target):
    dim = 2


class _Exact(Target):
    dim = 1

    def sample(self, num_samples, *, generator):
        return torch.randn(num_samples, 1, generator=generator, dtype=torch.float64) + 2.0


def test_reference_target_and_bad_inputs():
    x = _s(np.random.default_rng(6).normal(2.0, 1.0, size=(500, 1)))
    m1 = EnergyDistance(num_reference_samples=500).evaluate(
        {"x": x}, _Exact(), generator=torch.Generator().manual_seed(0)
    )
    m2 = EnergyDistance(num_reference_samples=500).evaluate(
        {"x": x}, _Exact(), generator=torch.Generator().manual_seed(0)
    )
    assert m1.values == m2.values and m1.values["x/energy_distance"] < 0.05
    with pytest.raises(ConfigError, match="no exact sampler"):
        EnergyDistance().evaluate({"x": x}, _NoSampler(), generator=torch.Generator().manual_seed(0))
    with pytest.raises(ConfigError, match="dimension"):
        EnergyDistance().evaluate({"x": x}, _s(np.zeros((3, 2))), generator=torch.Generator().manual_seed(0))
    with pytest.raises(ConfigError, match="bandwidth"):
        MMD(bandwidth=-1.0)


def test_mmd_median_heuristic_with_ties_uses_nonzero_distances_and_says_so():
    """Two sets of 100 with 80 equal values: the pooled median distance is 0."""
    x = torch.zeros(100, 1, dtype=torch.float64)
    y = torch.zeros(100, 1, dtype=torch.float64)
    x[80:] = torch.linspace(1.0, 2.0, 20)[:, None]
    y[80:] = torch.linspace(-2.0, -1.0, 20)[:, None]
    pooled = torch.pdist(torch.cat([x, y]))
    assert float(pooled.median()) == 0.0
    m = MMD().evaluate(
        {"s": Samples(x=x)}, reference=Samples(x=y), generator=torch.Generator().manual_seed(0)
    )
    assert m.values["s/bandwidth"] == pytest.approx(float(pooled[pooled > 0].median()))
    assert m.values["s/mmd"] > 0.1  # different samples give a positive MMD (the old fallback gave ~0)
    assert "ties" in m.info["notes"][0]


def test_constant_reference_is_a_config_error():
    ref = Samples(x=torch.ones(50, 2, dtype=torch.float64))
    sub = Samples(x=torch.randn(50, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64))
    for ev in (MMD(), EnergyDistance()):
        with pytest.raises(ConfigError, match="reference is constant"):
            ev.evaluate({"s": sub}, reference=ref, generator=torch.Generator().manual_seed(0))
    from quadriga_std.evaluators.distances import _median_distance

    with pytest.raises(ConfigError, match="bandwidth"):
        _median_distance(torch.ones(5, 2), torch.ones(5, 2))
