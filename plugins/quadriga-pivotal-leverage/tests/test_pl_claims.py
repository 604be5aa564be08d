"""Claim observations (hand-computed values) and the claims at smoke scale once the protocol is present."""

from __future__ import annotations

import math

import numpy as np
import pytest
from quadriga_pivotal_leverage.observe import (
    CENSOR_FACTOR,
    log_risk_at,
    observer,
    samples_to_target,
    samples_to_target_slope,
)

# risk ratios per (arm, replicate, d, multiple of d)
_CURVES = {
    ("pivotal-leverage", 0): {10: {2: 1.3, 3: 1.2, 6: 1.05}, 20: {2: 1.2, 3: 1.1, 6: 1.02}},
    ("pivotal-leverage", 1): {10: {2: 1.1, 3: 1.1, 6: 1.01}, 20: {2: 1.4, 3: 1.3, 6: 1.2}},
    ("leverage-iid", 0): {10: {2: 9.0, 3: 2.0, 6: 1.2}, 20: {2: 8.0, 3: 3.0, 6: 1.3}},
    ("leverage-iid", 1): {10: {2: 5.0, 3: 1.4, 6: 1.24}, 20: {2: 7.0, 3: 2.0, 6: 1.25}},
    ("uniform", 0): {10: {2: 99.0, 3: 50.0, 6: 9.0}},
}


def _values():
    values = {}
    for (arm, i), by_d in _CURVES.items():
        for d, curve in by_d.items():
            for m, r in curve.items():
                name = f"{arm}[num_features={d}][budget_per_feature={m}.0][{i}]"
                values[f"{name}/risk_ratio"] = r
                values[f"{name}/num_features"] = float(d)
                values[f"{name}/budget"] = float(m * d)
                values[f"{name}/num_queried"] = float(m * d)
    return values


_ARMS = ("pivotal-leverage", "leverage-iid")


def test_log_risk_at_2d_averages_over_d_per_replicate():
    out = log_risk_at(_values(), _ARMS, multiple=2.0)
    assert out["pivotal-leverage"] == pytest.approx(
        [np.mean(np.log([1.3, 1.2])), np.mean(np.log([1.1, 1.4]))]
    )
    assert out["leverage-iid"] == pytest.approx([np.mean(np.log([9.0, 8.0])), np.mean(np.log([5.0, 7.0]))])
    with pytest.raises(ValueError, match="budget"):
        log_risk_at(_values(), _ARMS, multiple=4.0)


def test_samples_to_target_and_censoring():
    out = samples_to_target(_values(), _ARMS, target=1.25)
    # pivotal[0]: d=10 first <= 1.25 at 3d, d=20 at 2d -> mean(3, 2); pivotal[1]: 2d and 6d
    assert out["pivotal-leverage"] == pytest.approx([2.5, 4.0])
    # iid[0]: 6d at d=10; d=20 never (1.3) -> censored at 1.5 * 6d; iid[1]: 6d and 6d
    assert out["leverage-iid"] == pytest.approx([(6 + CENSOR_FACTOR * 6) / 2, 6.0])


def test_samples_to_target_slope_is_the_log_log_slope():
    out = samples_to_target_slope(_values(), _ARMS, target=1.25)
    k10, k20 = 30.0, 40.0  # pivotal[0]: k* = 3 * 10 and 2 * 20
    assert out["pivotal-leverage"][0] == pytest.approx(math.log(k20 / k10) / math.log(2))
    assert out["leverage-iid"][1] == pytest.approx(math.log(120 / 60) / math.log(2))


def test_observer_reads_the_evaluator_stage():
    class _M:
        values = _values()

    class _R:
        def __init__(self):
            self.artifacts = {"excess-risk": _M()}

    observe = observer(samples_to_target, "excess-risk", _ARMS, target=1.25)
    assert observe(_R()) == samples_to_target(_values(), _ARMS, target=1.25)


def _protocol():
    import quadriga.claims as qc

    if not hasattr(qc, "Claim"):
        pytest.skip("the quadriga.claims Claim protocol is not in this core yet")
    return qc


def test_claims_are_claim_objects_on_the_registered_pipeline():
    qc = _protocol()
    from quadriga_pivotal_leverage import claims

    for claim in (claims.EXCESS_RISK, claims.FEWER_SAMPLES, claims.LINEAR_GROWTH):
        assert isinstance(claim, qc.Claim)
        assert claim.pipeline == "pivotal-legendre"
        assert claim.arms == _ARMS
        assert set(claim.scales) == {"smoke", "paper"}
