"""Multivariate conformal regions: volumes, coverage and the region-coverage evaluator."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from quadriga_std.estimators.regions import (
    BoxConformal,
    EllipsoidConformal,
    ScoreRegion,
    ball_volume,
    conformal_threshold,
)
from quadriga_std.evaluators.regions import RegionCoverage, monte_carlo_volume
from quadriga_std.tasks.multivariate import GAUSSIAN_COV, MultivariateResponse
from scipy.stats import chi2

from quadriga.artifacts import Estimate


def _data(shape: str, seed: int = 0, **kw) -> MultivariateResponse:
    d = MultivariateResponse(shape=shape, **kw)
    d.prepare(generator=torch.Generator().manual_seed(seed))
    return d


def test_ball_volume_closed_forms():
    assert ball_volume(1, 2.0) == pytest.approx(4.0)
    assert ball_volume(2, 1.5) == pytest.approx(math.pi * 2.25)
    assert ball_volume(3, 1.0) == pytest.approx(4 / 3 * math.pi)


def test_conformal_threshold_rank():
    # n = 9, alpha = 0.1: rank ceil(0.9 * 10) = 9 -> the largest score
    assert conformal_threshold(np.arange(9.0)[::-1], 0.1) == 8.0
    assert conformal_threshold(np.arange(19.0), 0.1) == 17.0  # rank ceil(0.9 * 20) = 18


def _exact_gaussian_region(alpha: float) -> ScoreRegion:
    prec = np.linalg.inv(GAUSSIAN_COV)

    def score(X, Y):
        r = Y - np.c_[X[:, 0], -X[:, 0] / 2]
        return np.einsum("ni,ij,nj->n", r, prec, r)

    sd = np.sqrt(np.diag(GAUSSIAN_COV))

    def box(X, t):
        mu = np.c_[X[:, 0], -X[:, 0] / 2]
        return mu - math.sqrt(t) * sd, mu + math.sqrt(t) * sd

    return ScoreRegion(score=score, threshold=float(chi2.ppf(1 - alpha, 2)), box=box, dim=2)


def test_exact_region_covers_at_nominal_within_binomial_bound():
    d = _data("gaussian", n_test=4000)
    m = RegionCoverage(volume_points=20, mc_samples=4000).evaluate(
        {"exact": Estimate(value=0.0, predict=_exact_gaussian_region(0.1), info={"alpha": 0.1})},
        d,
        generator=torch.Generator().manual_seed(1),
    )
    v = m.values
    se = math.sqrt(0.9 * 0.1 / 4000)
    assert abs(v["exact/coverage"] - 0.9) < 3 * se
    # the exact region is an ellipse of area pi * chi2_{0.9} * sqrt(det): MC within 4 s.e.
    want = math.pi * chi2.ppf(0.9, 2) * math.sqrt(np.linalg.det(GAUSSIAN_COV))
    assert abs(v["exact/volume"] - want) < 4 * v["exact/volume_se"] + 1e-9


def test_ellipsoid_monte_carlo_volume_matches_its_closed_form():
    d = _data("banana")
    est = EllipsoidConformal(regressor="linear").estimate(d, generator=torch.Generator().manual_seed(0))
    X = d.split("test")[0][:10]
    vol, se = monte_carlo_volume(est.predict, X, 20000, np.random.default_rng(2))
    exact = est.predict.volume(X, est.predict.threshold)
    assert np.all(np.abs(vol - exact) < 4 * se)
    assert est.value == pytest.approx(exact[0])


def test_box_volume_is_the_product_of_widths():
    d = _data("ring")
    est = BoxConformal(regressor="knn").estimate(d, generator=torch.Generator().manual_seed(0))
    q, s = est.info["threshold"], np.array(est.info["scales"])
    assert est.value == pytest.approx(np.prod(2 * q * s))
    vol, _ = monte_carlo_volume(est.predict, d.split("test")[0][:3], 500, np.random.default_rng(0))
    np.testing.assert_allclose(vol, est.value)  # the box is its own bounding box


@pytest.mark.parametrize("cls", [BoxConformal, EllipsoidConformal])
def test_split_conformal_coverage_over_resplits(cls):
    # 200 calibration points: E[coverage] in [0.9, 0.9 + 1/201]; 100 re-splits give a s.e. of
    # about 0.003, so the mean lies within 4 s.e. of that band
    d = _data("bimodal", n_train=500, n_calibration=200, n_test=800)
    est = cls(regressor="knn").estimate(d, generator=torch.Generator().manual_seed(0))
    v = (
        RegionCoverage(resplits=100, volume_points=5, mc_samples=200)
        .evaluate({"r": est}, d, generator=torch.Generator().manual_seed(3))
        .values
    )
    assert 0.9 - 4 * v["r/coverage_se"] < v["r/coverage"] < 0.9 + 1 / 201 + 4 * v["r/coverage_se"]
    assert 0 < v["r/coverage_se"] < 0.01
