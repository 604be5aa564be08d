"""diag-additive-shift: Gaussian moments, the exact OLS risk against Monte Carlo, the evaluator,
the pipeline and the claim at smoke scale."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_diagnostics.additive_shift import (
    AdditiveShift,
    additive_features,
    expected_excess_risk,
    shift_risks,
    shifted_moments,
)
from quadriga_diagnostics.claims_part2 import additive_shift_simpler

import quadriga.api
from quadriga.claims import evaluate_claim
from quadriga.errors import ConfigError
from quadriga.registry import Registry
from quadriga.seeding import numpy_rng


def test_shifted_moments_are_gaussian_moments():
    m = 0.7
    M = shifted_moments(2, 4, m, -0.3)
    # features [1, x, x^2, z, z^2, z^3, z^4]; E x^2 = m^2 + 1, E x^4 = m^4 + 6 m^2 + 3
    assert M[0, 0] == pytest.approx(1.0)
    assert M[0, 2] == pytest.approx(m**2 + 1)
    assert M[2, 2] == pytest.approx(m**4 + 6 * m**2 + 3)
    z = -0.3
    assert M[6, 6] == pytest.approx(z**8 + 28 * z**6 + 210 * z**4 + 420 * z**2 + 105)  # E z^8
    assert M[1, 3] == pytest.approx(m * z)  # independence


def test_expected_excess_risk_against_monte_carlo_over_noise():
    rng = np.random.default_rng(0)
    design = additive_features(rng.standard_normal(60), rng.standard_normal(60), 1, 3)
    M = shifted_moments(1, 3, 0.0, 0.8)
    sigma = 0.5
    risks = []
    for _ in range(4000):
        err = np.linalg.lstsq(design, sigma * rng.standard_normal(60), rcond=None)[0]
        risks.append(err @ M @ err)
    se = np.std(risks) / np.sqrt(len(risks))
    assert abs(np.mean(risks) - expected_excess_risk(design, M, sigma)) < 4 * se


def test_evaluator_gap_is_positive_and_refusals():
    v = AdditiveShift(num_designs=8).evaluate(generator=torch.Generator().manual_seed(0)).values
    assert v["gap/1"] > v["gap/0.5"] > 0
    assert v["increase_x/1"] > 0 and v["increase_z/1"] > 10 * v["increase_x/1"]
    with pytest.raises(ConfigError):
        AdditiveShift(deg_f=3, deg_g=3)


def test_per_design_table_matches_the_exact_risks_and_the_means():
    ev = AdditiveShift(num_designs=5, shifts=[0.5, 1.0])
    out = ev.evaluate(generator=torch.Generator().manual_seed(3))
    rows = out.tables["per_design"]
    assert len(rows) == 2 * 5 * 2  # shifts x designs x moved input
    for s in (0.5, 1.0):
        for moved in ("x", "z"):
            inc = [r["increase"] for r in rows if r["shift"] == s and r["moved"] == moved]
            assert [r["design"] for r in rows if r["shift"] == s and r["moved"] == moved] == list(range(5))
            assert np.mean(inc) == pytest.approx(out.values[f"increase_{moved}/{s:g}"], rel=1e-12)
        gap = [
            z["increase"] - x["increase"]
            for z, x in zip(
                [r for r in rows if r["shift"] == s and r["moved"] == "z"],
                [r for r in rows if r["shift"] == s and r["moved"] == "x"],
                strict=True,
            )
        ]
        assert np.mean(gap) == pytest.approx(out.values[f"gap/{s:g}"], rel=1e-12)
    # every row recomputed from the same draws: the exact risks of shift_risks, design by design
    rng = numpy_rng(torch.Generator().manual_seed(3))
    for j in range(5):
        r = shift_risks(100, 1, 5, 0.5, [0.5, 1.0], rng)
        for i, s in enumerate((0.5, 1.0)):
            for moved in ("x", "z"):
                (row,) = [q for q in rows if q["shift"] == s and q["moved"] == moved and q["design"] == j]
                assert row["increase"] == pytest.approx(r[moved][i] - r["base"], rel=1e-12)


def test_pipeline_runs(tmp_path):
    res = quadriga.api.run(
        "diag-additive-shift", overrides=["stage.shift.num_designs=2"], out=tmp_path / "run"
    )
    assert "shift[deg_g=7]" in res.artifacts


def test_additive_claim_smoke(tmp_path):
    obs = additive_shift_simpler.observations("smoke", tmp_path, Registry(use_env=False))
    assert obs.numbers["min_mean_increase_x"] > 0
    # one comparison per shift, 4 designs per arm, paired by design
    assert list(obs.values) == ["shift=0.5", "shift=1.0"]
    assert all(len(obs.values[g][arm]) == 4 for g in obs.values for arm in ("z", "x"))
    assert evaluate_claim(additive_shift_simpler, obs, "smoke")["status"] == "ran"
