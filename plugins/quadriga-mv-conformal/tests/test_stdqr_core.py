"""ST-DQR: split-conformal coverage at any fit, a bounding box that contains the region, a fitted latent."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_mv_conformal.stdqr import STDQR
from quadriga_std.evaluators.regions import RegionCoverage
from quadriga_std.tasks.multivariate import MultivariateResponse

from quadriga.errors import ConfigError


def _data(shape: str, **kw) -> MultivariateResponse:
    d = MultivariateResponse(shape=shape, **kw)
    d.prepare(generator=torch.Generator().manual_seed(0))
    return d


@pytest.fixture(scope="module")
def banana():
    d = _data("banana", n_train=1000, n_calibration=400, n_test=600)
    est = STDQR(num_epochs=60).estimate(d, generator=torch.Generator().manual_seed(1))
    return d, est


def test_coverage_over_resplits_is_nominal(banana):
    # 400 calibration points: E[coverage] in [0.9, 0.9 + 1/401]; 100 re-splits, within 4 s.e.
    d, est = banana
    v = (
        RegionCoverage(resplits=100, volume_points=5, mc_samples=200)
        .evaluate({"st": est}, d, generator=torch.Generator().manual_seed(2))
        .values
    )
    se = v["st/coverage_se"]
    assert 0.9 - 4 * se < v["st/coverage"] < 0.9 + 1 / 401 + 4 * se


def test_the_bounding_box_contains_the_region(banana):
    d, est = banana
    region = est.predict
    X = d.split("test")[0][:3]
    low, high = region.box(X, region.threshold)
    rng = np.random.default_rng(3)
    for i in range(3):
        # a box three times wider: every point inside the region must lie in the region's box
        centre, half = (low[i] + high[i]) / 2, 1.5 * (high[i] - low[i])
        Y = centre + half * (2 * rng.random((20000, 2)) - 1)
        inside = region.contains(np.repeat(X[i : i + 1], len(Y), 0), Y)
        assert inside.any()
        assert np.all((Y[inside] >= low[i]) & (Y[inside] <= high[i]))


def test_the_representation_fits_and_the_area_beats_the_ellipsoid(banana):
    from quadriga_std.estimators.regions import EllipsoidConformal

    d, est = banana
    assert est.info["reconstruction_r2"] > 0.9
    assert 0.3 < est.info["latent_var"] < 3.0  # a spherical-ish latent, not collapsed
    ell = EllipsoidConformal(regressor="knn").estimate(d, generator=torch.Generator().manual_seed(1))
    assert est.value < 0.7 * ell.value  # measured 0.27-0.4 at full training; a loose bound here


def test_too_few_calibration_points_fail_before_fitting():
    d = _data("ring", n_train=50, n_calibration=5, n_test=10)
    with pytest.raises(ConfigError, match="too few"):
        STDQR(num_epochs=1).estimate(d, generator=torch.Generator().manual_seed(0))
