"""diag-plrf-phases: the phase formulas at known points, the closed-form loss curve against its
recursion stepped by hand and against SGD, the compute-optimal fit on a synthetic two-term loss,
the evaluator, the pipeline and the claim at smoke scale."""

from __future__ import annotations

import numpy as np
import pytest
from quadriga_diagnostics.claims_scaling import plrf_exponents
from quadriga_diagnostics.plrf_phases import (
    PLRFPhases,
    PLRFProblem,
    compute_optimal,
    dim_grid,
    loss_curves,
    phase_exponents,
    simulate_sgd,
)
from scipy import stats

import quadriga.api
from quadriga.claims import evaluate_claim
from quadriga.errors import ConfigError
from quadriga.registry import Registry


def test_phase_formulas_at_known_points():
    assert phase_exponents(0.6, 0.3) == ("Ia", pytest.approx(0.8 / 2.2), pytest.approx(1 / 2.2))
    assert phase_exponents(1.0, 0.7) == ("II", pytest.approx(2.4 / 3.4), pytest.approx(0.7 / 1.7))
    assert phase_exponents(0.7, 1.2) == ("III", pytest.approx(1 - 1 / 2.8), 0.5)
    # continuity across the II / III boundary alpha = beta: both give 1 - 1 / (4 alpha)
    assert phase_exponents(1.0, 0.999)[1] == pytest.approx(phase_exponents(1.0, 1.001)[1], abs=1e-3)
    with pytest.raises(ConfigError):
        phase_exponents(0.4, 0.7)
    with pytest.raises(ConfigError):
        phase_exponents(0.8, 0.5)


def _stepped(problem, d, steps, gamma):
    lam, s, p_opt = problem.spectrum(d)
    a = (1 - gamma * lam) ** 2 + gamma**2 * lam**2
    out = []
    for _ in range(steps + 1):
        p = p_opt + lam @ s
        out.append(p)
        s = a * s + gamma**2 * p * lam
    return np.array(out)


def test_closed_form_matches_recursion_and_start():
    problem = PLRFProblem.draw(1.0, 0.7, 64, 16, np.random.default_rng(0))
    steps = np.arange(0, 60)
    closed = loss_curves(problem, 16, steps, learning_rate=0.3)
    assert np.allclose(closed, _stepped(problem, 16, 59, 0.3), rtol=1e-10)
    # theta_0 = 0: P(0) = b^T D b
    assert closed[0] == pytest.approx(problem.target @ (problem.data_var * problem.target), rel=1e-10)
    assert loss_curves(problem, 16, [1e7], learning_rate=0.3)[0] >= problem.spectrum(16)[2]
    with pytest.raises(ConfigError):
        loss_curves(problem, 16, [1], learning_rate=50.0)


def test_sgd_simulation_matches_the_formula():
    problem = PLRFProblem.draw(1.0, 0.7, 64, 16, np.random.default_rng(1))
    sim = simulate_sgd(problem, 16, 200, 400, learning_rate=0.3, rng=np.random.default_rng(2))
    checks = [0, 10, 50, 200]
    formula = loss_curves(problem, 16, checks, learning_rate=0.3)
    se = sim[checks].std(1, ddof=1) / np.sqrt(400)
    assert np.all(np.abs(sim[checks].mean(1) - formula) <= 4 * se + 1e-12)


def test_compute_optimal_on_a_two_term_loss():
    # P(r, d) = d^-a + r^-b at f = r d: d* = f^(b / (a + b)), P* ~ f^(-a b / (a + b))
    a, b = 1.0, 0.5
    dims = np.array(dim_grid(16, 4096, 4))
    flops = np.logspace(3, 9, 25)
    losses = dims[:, None] ** -a + (flops[None, :] / dims[:, None]) ** -b
    fit = compute_optimal(dims, flops, losses)
    assert fit["eta"] == pytest.approx(a * b / (a + b), abs=0.005)
    assert fit["xi"] == pytest.approx(b / (a + b), abs=0.01)
    with pytest.raises(ConfigError):
        compute_optimal(dims, flops[:2], losses[:, :2])


def test_evaluator_values():
    ev = PLRFPhases(d_min=16, d_max=64, flops_max=1e6, flop_points=16, draws=2, sim_steps=100)
    v = ev.evaluate().values
    assert v["phase_index"] == 2.0 and v["eta_predicted"] == pytest.approx(2.4 / 3.4)
    assert v["eta_low"] <= v["eta"] <= v["eta_high"] and 0 < v["eta"] < 1.5
    with pytest.raises(ConfigError):
        PLRFPhases(alpha=0.4)


_SMALL = {
    "d_min": 16,
    "d_max": 64,
    "flops_min": 1e2,
    "flops_max": 1e5,
    "flop_points": 12,
    "draws": 3,
    "sim_steps": 100,
}


def test_per_draw_rows_give_the_reported_eta():
    m = PLRFPhases(**_SMALL).evaluate()
    v, draws = m.values, m.tables["per_draw"]
    assert [r["draw"] for r in draws] == [0, 1, 2] and {r["subject"] for r in draws} == {"plrf"}
    assert {(r["phase"], r["alpha"], r["beta"]) for r in draws} == {("II", 1.0, 0.7)}
    # the rows' eta_error is eta - the phase formula, and its mean is the reported eta minus it
    errors = np.array([r["eta_error"] for r in draws])
    assert errors == pytest.approx([r["eta"] - 2.4 / 3.4 for r in draws], abs=1e-15)
    assert errors.mean() == pytest.approx(v["eta"] - v["eta_predicted"], abs=1e-12)
    # the reported t interval is the rows' one-sample Student t interval, shifted by the formula
    half = stats.t.ppf(0.975, 2) * errors.std(ddof=1) / np.sqrt(3)
    assert v["eta_low"] == pytest.approx(v["eta_predicted"] + errors.mean() - half, abs=1e-12)
    assert v["eta_high"] == pytest.approx(v["eta_predicted"] + errors.mean() + half, abs=1e-12)
    assert min(r["interior_decades"] for r in draws) == v["interior_decades"]
    (point,) = m.tables["per_point"]
    assert point["eta"] == v["eta"] and point["simulation_gap"] == v["simulation_gap"]
    assert point["d_max"] == 64.0 and len(m.tables["frontier"]) == 12


def test_points_in_one_run():
    one = PLRFPhases(**_SMALL).evaluate()
    both = PLRFPhases(**_SMALL, points=[[1.0, 0.7], [0.6, 0.3]]).evaluate()
    # the first point consumes the generator as the single-point run does: same values
    assert both.values == one.values
    for got, want in zip(both.tables["per_draw"][:3], one.tables["per_draw"], strict=True):
        assert got == pytest.approx(want, nan_ok=True)
    ia = [r for r in both.tables["per_draw"] if r["phase"] == "Ia"]
    assert [r["draw"] for r in ia] == [0, 1, 2]
    assert all(r["eta_predicted"] == pytest.approx(0.8 / 2.2) for r in ia)
    assert [p["phase"] for p in both.tables["per_point"]] == ["II", "Ia"]
    assert np.mean([r["eta"] for r in ia]) == pytest.approx(both.tables["per_point"][1]["eta"], abs=1e-12)
    with pytest.raises(ConfigError):
        PLRFPhases(points=[[1.0]])
    with pytest.raises(ConfigError):
        PLRFPhases(points=[[0.4, 0.7]])


def test_pipeline_runs(tmp_path):
    small = ["d_min=16", "d_max=64", "flops_min=100.0", "flops_max=100000.0", "flop_points=12"]
    small += ["draws=2", "sim_steps=50"]
    small += ["points=[[0.6, 0.3], [1.0, 0.7]]"]
    res = quadriga.api.run(
        "diag-plrf-phases", overrides=[f"stage.phases.{o}" for o in small], out=tmp_path / "run"
    )
    rows = res.artifacts["phases"].tables["per_draw"]
    assert [(r["phase"], r["draw"]) for r in rows] == [(p, k) for p in ("Ia", "II") for k in (0, 1)]


def test_plrf_claim_smoke(tmp_path):
    obs = plrf_exponents.observations("smoke", tmp_path, Registry(use_env=False))
    # one point at smoke scale: one group, under its label, the rows of the two W draws
    assert list(obs.values) == ["phase=II,alpha=1.0,beta=0.7"]
    (group,) = obs.values.values()
    assert list(group) == ["plrf"] and len(group["plrf"]) == 2
    assert obs.numbers["d_max"] == 64 and obs.numbers["min_interior_decades"] > 0
    assert obs.numbers["largest_simulation_gap_in_se"] < 6
    assert evaluate_claim(plrf_exponents, obs, "smoke")["status"] == "ran"
