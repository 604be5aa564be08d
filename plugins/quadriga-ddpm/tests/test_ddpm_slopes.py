"""Slope fits and the resolved-points rule of the dimension-free claim, on synthetic study rows."""

from __future__ import annotations

import math

import numpy as np
import pytest
from quadriga_ddpm.claims import analyse
from quadriga_ddpm.metrics import loglog_fit
from quadriga_ddpm.study import MIN_SLOPE_POINTS, slopes
from scipy import stats

STEPS = (10, 20, 50, 100, 200, 400)


def _rows(
    d: int,
    slope: float,
    floor: float,
    *,
    level: float = 1.0,
    sigma: float = 2.0,
    k: int = 2,
    metric: str = "direction_w1",
    jitter: float = 0.0,
) -> list[dict]:
    """Rows value = level * (T/10)^slope * exp(jitter * (-1)^i), all with the given floor."""
    return [
        {
            "sigma": sigma,
            "K": k,
            "d": d,
            "T": t,
            "schedule": "theory",
            "metric": metric,
            "value": level * (t / 10) ** slope * math.exp(jitter * (-1) ** i),
            "floor": floor,
        }
        for i, t in enumerate(STEPS)
    ]


def test_loglog_fit_matches_scipy_linregress_and_drops_points_at_the_floor():
    rng = np.random.default_rng(0)
    errors = [
        2.0 * t**-0.9 * math.exp(0.1 * z)
        for t, z in zip(STEPS, rng.standard_normal(len(STEPS)), strict=False)
    ]
    ref = stats.linregress(np.log(STEPS), np.log(errors))
    slope, se, used = loglog_fit(list(STEPS), errors)
    assert used == 6
    assert slope == pytest.approx(ref.slope, rel=1e-10)
    assert se == pytest.approx(ref.stderr, rel=1e-10)
    # a floor of errors[3] / 2 keeps exactly the first three points (strictly above twice the floor)
    slope3, se3, used3 = loglog_fit(list(STEPS), errors, [errors[3] / 2] * 6)
    ref3 = stats.linregress(np.log(STEPS[:3]), np.log(errors[:3]))
    assert used3 == 3 and slope3 == pytest.approx(ref3.slope, rel=1e-10) and se3 == pytest.approx(ref3.stderr)
    assert math.isnan(loglog_fit(list(STEPS), errors, [errors[1] / 2] * 6)[1])  # 2 points: no error bar


def test_slopes_need_min_points_above_the_floor_unless_exact():
    # d=2: 0.5 * (T/10)^-1 exceeds 2 * 0.02 for T <= 100 (4 points); d=16: only T = 10, 20 (2 points)
    rows = _rows(2, -1.0, 0.02, level=0.5) + _rows(16, -1.0, 0.1, level=0.5)
    rows += _rows(128, -0.8, 0.0, metric="tv")[:2]  # exact rows, 2 T values
    out = {(s["metric"], s["d"]): s for s in slopes(rows)}
    assert MIN_SLOPE_POINTS == 4
    assert out["direction_w1", 2]["resolved"] and out["direction_w1", 2]["points"] == 4
    assert out["direction_w1", 2]["slope"] == pytest.approx(-1.0, abs=1e-12)
    assert not out["direction_w1", 16]["resolved"] and out["direction_w1", 16]["points"] == 2
    assert math.isnan(out["direction_w1", 16]["slope"])
    assert out["tv", 128]["resolved"] and out["tv", 128]["slope"] == pytest.approx(-0.8, abs=1e-12)
    assert slopes(rows, min_points=2)[1]["slope"] == pytest.approx(-1.0, abs=1e-12)
    with pytest.raises(ValueError, match="min_points"):
        slopes(rows, min_points=1)


def _k1() -> list[dict]:
    return [r for d in (2, 16) for r in _rows(d, -0.8, 0.0, k=1, metric="tv")]


def test_claim_verdict_reports_unresolved_cells_instead_of_fitting_them(tmp_path):
    # d=2 and d=16 resolved (6 points each, slopes -1.0 and -0.9); d=128 has 2 points and a wild slope
    rows = _k1() + _rows(2, -1.0, 0.001) + _rows(16, -0.9, 0.001) + _rows(128, -3.0, 0.03)
    res = analyse(rows, tmp_path, scale="paper")
    assert res.numbers["verdict"] == "passed" and res.passed
    assert res.numbers["theory/K>1/direction_w1_slope_spread_max"] == pytest.approx(0.1, abs=1e-9)
    assert res.numbers["theory/K>1/direction_w1_slopes_resolved"] == 2
    assert "n/r (2)" in res.table
    # the same rows with a 2-point rule: the wild slope enters and the spread fails
    loose = analyse(rows, tmp_path, scale="paper", min_points=2)
    assert loose.numbers["verdict"] == "failed" and not loose.passed
    assert loose.numbers["theory/K>1/direction_w1_slope_spread_max"] == pytest.approx(2.1, abs=1e-9)
    # only one resolved d: the spread cannot be tested, so the claim is not passed
    few = analyse(_k1() + _rows(2, -1.0, 0.001) + _rows(16, -0.9, 0.3), tmp_path, scale="paper")
    assert few.numbers["verdict"] == "not enough resolved points" and not few.passed
    assert few.numbers["theory/K>1/direction_w1_spread_cells_tested"] == 0
    # two resolved d whose slopes differ by 0.7: a measured failure
    bad = analyse(
        _k1() + _rows(2, -1.2, 0.001) + _rows(16, -0.5, 0.001, jitter=0.01), tmp_path, scale="paper"
    )
    assert bad.numbers["verdict"] == "failed"
    assert bad.numbers["theory/K>1/direction_w1_slope_spread_max"] == pytest.approx(0.7, abs=0.02)


def test_replicated_floor_averages_independent_exact_draws_and_falls_as_root_n():
    from quadriga_ddpm.claims import replicated_floors

    from quadriga import ConfigError

    k1 = [
        {
            "sigma": 2.0,
            "K": 1,
            "d": 2,
            "T": 10,
            "schedule": "theory",
            "metric": "tv",
            "value": 0.1,
            "floor": 0.0,
        }
    ]
    sampled = _rows(4, -1.0, 9.9, metric="direction_w1")[:2] + _rows(4, -1.0, 9.9, metric="weight_error")[:1]
    floors = {}
    for n in (100, 1600):
        out = replicated_floors(k1 + sampled, n, draws=6, seed=0)
        assert out[0] == k1[0] and sampled[0]["floor"] == 9.9  # exact rows kept, input untouched
        w1 = [r for r in out if r["metric"] == "direction_w1"]
        assert all(r["floor_draws"] == 6 and 0 < r["floor_se"] < r["floor"] for r in w1)
        assert w1[0]["floor"] == w1[1]["floor"]  # one floor per (sigma, K, d) cell, shared over T
        floors[n] = w1[0]["floor"]
    # the 1-D W1 of n exact draws to the target is of order n^(-1/2): 16x the samples, about 1/4 the floor
    assert 2.5 < floors[100] / floors[1600] < 6.5
    with pytest.raises(ConfigError, match="draws"):
        replicated_floors(sampled, 100, draws=1)
