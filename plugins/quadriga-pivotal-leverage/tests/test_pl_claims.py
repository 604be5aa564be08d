"""Claim observations on hand-computed values, and the claims at smoke scale through `quadriga verify`."""

from __future__ import annotations

import math

import numpy as np
import pytest
from quadriga_pivotal_leverage import claims
from quadriga_pivotal_leverage.observe import (
    CENSOR_FACTOR,
    growth_rates,
    k_star,
    log_risk_at,
    risk_table,
    samples_to_target,
    samples_to_target_slope,
)

from quadriga.claims import Claim, verify
from quadriga.pipeline import read_source
from quadriga.registry import get_registry

# risk ratios per (arm, replicate, d, multiple of d)
_CURVES = {
    ("pivotal-leverage", 0): {
        10: {2: 1.3, 3: 1.2, 6: 1.05},
        20: {2: 1.2, 3: 1.1, 6: 1.02},
        40: {2: 1.24, 3: 1.1, 6: 1.01},
    },
    ("pivotal-leverage", 1): {
        10: {2: 1.1, 3: 1.1, 6: 1.01},
        20: {2: 1.4, 3: 1.3, 6: 1.2},
        40: {2: 1.3, 3: 1.2, 6: 1.1},
    },
    ("leverage-iid", 0): {
        10: {2: 9.0, 3: 2.0, 6: 1.2},
        20: {2: 8.0, 3: 3.0, 6: 1.3},
        40: {2: 20.0, 3: 3.0, 6: 1.2},
    },
    ("leverage-iid", 1): {
        10: {2: 5.0, 3: 1.4, 6: 1.24},
        20: {2: 7.0, 3: 2.0, 6: 1.25},
        40: {2: 9.0, 3: 1.2, 6: 1.1},
    },
    ("uniform", 0): {10: {2: 99.0, 3: 50.0, 6: 9.0}},
}
_ARMS = ("pivotal-leverage", "leverage-iid")


def _values():
    values = {}
    for (arm, i), by_d in _CURVES.items():
        for d, curve in by_d.items():
            for m, r in curve.items():
                name = f"{arm}[num_features={d},budget_per_feature={m}.0][{i}]"
                values[f"{name}/risk_ratio"] = r
                values[f"{name}/num_features"] = float(d)
                values[f"{name}/budget"] = float(m * d)
                values[f"{name}/num_queried"] = float(m * d)
    return values


def _table():
    return risk_table(_values(), _ARMS)


def test_risk_table_reads_arms_replicates_and_offsets():
    table = risk_table(_values(), _ARMS, offset=10)
    assert set(table) == set(_ARMS)  # uniform is not an arm: left out
    assert sorted(table["pivotal-leverage"]) == [10, 11]
    assert table["leverage-iid"][11][40] == {80: 9.0, 120: 1.2, 240: 1.1}


def test_log_risk_at_2d_per_d_and_replicate():
    out = log_risk_at(_table(), _ARMS, multiple=2.0)
    assert list(out) == ["d=10", "d=20", "d=40"]
    assert out["d=10"]["pivotal-leverage"] == pytest.approx([math.log(1.3), math.log(1.1)])
    assert out["d=40"]["leverage-iid"] == pytest.approx([math.log(20.0), math.log(9.0)])
    with pytest.raises(ValueError, match="budget"):
        log_risk_at(_table(), _ARMS, multiple=4.0)


def test_samples_to_target_and_censoring():
    out = samples_to_target(_table(), _ARMS, target=1.25)
    # pivotal d=10: replicate 0 first <= 1.25 at 3d, replicate 1 at 2d
    assert out["d=10"]["pivotal-leverage"] == pytest.approx([3.0, 2.0])
    # iid d=20: replicate 0 never (1.3 at 6d) -> censored at 1.5 * 6d; replicate 1 at 6d (1.25)
    assert out["d=20"]["leverage-iid"] == pytest.approx([CENSOR_FACTOR * 6, 6.0])
    assert k_star({20: 2.0, 40: 1.3}, 1.25) == CENSOR_FACTOR * 40


def test_samples_to_target_slope_is_the_log_log_slope():
    out = samples_to_target_slope(_table(), _ARMS, target=1.25)
    # pivotal[0]: k* = 30, 40, 80 at d = 10, 20, 40; least squares on equally spaced log d
    ks = np.log([30.0, 40.0, 80.0])
    assert out["pivotal-leverage"][0] == pytest.approx((ks[2] - ks[0]) / math.log(4))
    # iid[1]: k* = 60, 120, 120
    assert out["leverage-iid"][1] == pytest.approx(math.log(120 / 60) / math.log(4))


def test_growth_rates_fit_the_mean_k_star():
    rates = growth_rates(_table(), _ARMS, target=1.25)
    means = [np.mean([30, 20]), np.mean([40, 120]), np.mean([80, 120])]  # pivotal k* per d
    slope = np.polyfit(np.log([10, 20, 40]), np.log(means), 1)[0]
    s, low, high = rates["pivotal-leverage"]
    assert s == pytest.approx(slope)
    assert low <= s <= high


def test_claims_are_claim_objects_on_the_registered_pipeline():
    for claim in (claims.EXCESS_RISK, claims.FEWER_SAMPLES, claims.LINEAR_GROWTH):
        assert isinstance(claim, Claim)
        assert claim.pipeline == "pivotal-legendre"
        assert claim.arms == _ARMS
        assert set(claim.scales) == {"smoke", "paper"}
        assert claim.scales["paper"].replicates == 400
        # label noise is the declared nuisance setting: the task's own key, 0 (as shipped) and 0.1
        assert claim.fragility == {"task.legendre.noise": [0.0, 0.1]}
        assert claim.plan is not None and claim.plan.effect > 0
    task = read_source("pivotal-legendre", get_registry())[0]["task"]["legendre"]
    assert task["noise"] == 0.0  # the headline claims are stated for noise-free labels
    # the growth claim tests the paper's rate (slope 1 within log 1.2 / log 4), not a sign
    eff = claims.LINEAR_GROWTH.effect
    assert (eff.statistic, eff.relation, eff.value) == ("mean", "within", 1.0)
    assert eff.tolerance == pytest.approx(math.log(1.2) / math.log(4), abs=0.002)


def test_smoke_verify_runs_the_grid_once_and_reports_numbers(tmp_path):
    records, report = verify(get_registry(), "quadriga-pivotal-leverage", scale="smoke", out_dir=tmp_path)
    by_name = {r["name"]: r for r in records}
    assert set(by_name) == {"pivotal-excess-risk", "pivotal-fewer-samples", "pivotal-linear-growth"}
    for rec in records:
        assert rec["status"] == "ran", rec.get("traceback", rec["summary"])
        for c in rec["comparisons"]:
            assert c["n"] == 2 and math.isfinite(c["estimate"])
    # per-d groups for the first two claims, one comparison for the slope
    assert [c["group"] for c in by_name["pivotal-excess-risk"]["comparisons"]] == ["d=10", "d=20", "d=40"]
    assert len(by_name["pivotal-linear-growth"]["comparisons"]) == 1
    # one set of runs: the later claims point at the first claim's runs
    assert (tmp_path / "pivotal-excess-risk" / "run-0" / "results.json").is_file()
    assert not (tmp_path / "pivotal-fewer-samples" / "run-0").exists()
    shared = (tmp_path / "pivotal-fewer-samples" / "shared-runs.txt").read_text().strip()
    assert shared == str(tmp_path / "pivotal-excess-risk")
    assert "not verdicts" in report.read_text()
