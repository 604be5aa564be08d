"""sklearn-dataset: reproducible splits, feature lookup, and the exact exponential tilt."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from quadriga_std.tasks.datasets import SklearnDataset, tilt_log_ratio, tilted_resample

from quadriga.errors import ConfigError


def _prep(seed=0, **kw):
    d = SklearnDataset(**kw)
    d.prepare(generator=torch.Generator().manual_seed(seed))
    return d


def test_splits_reproducible_disjoint_and_sized():
    a, b, c = _prep(0, name="wine"), _prep(0, name="wine"), _prep(1, name="wine")
    for s in ("train", "calibration", "test"):
        np.testing.assert_array_equal(a.split(s)[0], b.split(s)[0])
    assert not np.array_equal(a.split("train")[0], c.split("train")[0])
    rows = {s: {tuple(r) for r in a.split(s)[0]} for s in ("train", "calibration", "test")}
    assert not rows["train"] & rows["calibration"] and not rows["calibration"] & rows["test"]
    assert [len(a.split(s)[1]) for s in ("train", "calibration", "test")] == [89, 44, 44]  # 178 rows
    X = np.vstack([a.split(s)[0] for s in ("train", "calibration", "test")])
    np.testing.assert_allclose(X.mean(0), 0, atol=0.1)  # standardized with whole-data moments
    with pytest.raises(KeyError, match="target splits need shift"):
        a.split("target_test")


def test_bad_configuration():
    with pytest.raises(ConfigError, match="Did you mean 'diabetes'"):
        SklearnDataset(name="diabetis")
    with pytest.raises(ConfigError, match="exceeds 1"):
        SklearnDataset(train=0.6, calibration=0.3, test=0.3)
    with pytest.raises(ConfigError, match="Did you mean 'bmi'"):
        _prep(name="diabetes", shift=True, shift_feature="bmj")


def test_gaussian_tilt_mean_shift_closed_form():
    # Tilting N(m, s^2) by exp(lambda x) gives N(m + lambda s^2, s^2).
    rng = np.random.default_rng(0)
    m, s, lam, n = 0.5, 2.0, 0.3, 20000
    pool = rng.normal(m, s, size=200_000)
    drawn = pool[tilted_resample(pool, lam, n, rng)]
    se = s / math.sqrt(n) + s / math.sqrt(pool.size)
    assert abs(drawn.mean() - (m + lam * s * s)) < 4 * se
    assert abs(drawn.std() - s) < 0.05
    # the ratio is normalised over the pool and is exp(lambda x - lambda m - lambda^2 s^2/2) in the limit
    w = np.exp(tilt_log_ratio(pool, lam, pool))
    assert w.mean() == pytest.approx(1.0, rel=1e-12)
    x0 = np.array([1.0])
    assert np.exp(tilt_log_ratio(x0, lam, pool))[0] == pytest.approx(
        math.exp(lam * 1.0 - lam * m - lam**2 * s**2 / 2), rel=0.02
    )


def test_shifted_dataset_ratio_and_feature_name():
    d = _prep(
        3,
        name="diabetes",
        shift=True,
        shift_feature="bmi",
        shift_strength=1.0,
        train=0.4,
        calibration=0.3,
        test=0.3,
    )
    assert d._column == 2
    Xs, _ = d.split("calibration")
    Xt, _ = d.split("target_test")
    assert Xt[:, 2].mean() > Xs[:, 2].mean() + 0.5  # tilted towards high bmi
    # importance identity on the pool: E_Q[x_j] = E_P[w x_j], both computed exactly on the pool
    pool = d._pool_feature
    w = np.exp(tilt_log_ratio(pool, 1.0, pool))
    eq = float((w * pool).mean())
    se = pool.std() * 1.5 / math.sqrt(len(Xt))
    assert abs(Xt[:, 2].mean() - eq) < 4 * se
    lr = d.likelihood_ratio(Xt)
    assert lr.shape == (len(Xt),) and (lr > 0).all()


def test_zero_strength_is_the_source_law():
    d = _prep(4, name="diabetes", shift=True, shift_strength=0.0, train=0.3, calibration=0.35, test=0.35)
    Xt, _ = d.split("target_test")
    np.testing.assert_allclose(d.likelihood_ratio(Xt), 1.0)
    Xs, _ = d.split("test")
    se = math.sqrt(2 / len(Xt))
    assert abs(Xt[:, 2].mean() - Xs[:, 2].mean()) < 4 * se
    with pytest.raises(ConfigError, match="shift = true"):
        _prep(name="iris").likelihood_ratio(Xt)
