"""Optimistic OMD in the SEA model: the regret of known sequences in closed form, the evaluator,
the pipeline and the claim at smoke scale."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_diagnostics.claims import sea_omd_sqrt
from quadriga_diagnostics.sea_omd import (
    OptimisticOMDRegret,
    ball_projection,
    fit_regret_slope,
    optimistic_omd_regret,
    sweep_from_tables,
)

import quadriga.api
from quadriga.claims import evaluate_claim
from quadriga.errors import ConfigError
from quadriga.registry import Registry


def test_regret_of_a_constant_sequence_in_closed_form():
    # c_t = 1 in one dimension on [-1, 1], delta = 1: eta_1 = 1, x_1 = 0, xh_2 = -1; afterwards the
    # hint is exact (c_t - M_t = 0), eta = 1 / sqrt(2), and x_t = Pi(-1 - eta) = -1: loss 0 - (T - 1),
    # best fixed point -T, so the regret is exactly 1
    c = np.ones((1, 50, 1))
    assert optimistic_omd_regret(c)[0] == pytest.approx(1.0, abs=1e-12)


def test_regret_of_the_alternating_sequence_in_closed_form():
    # c_t = a (-1)^t in 1-D: the hint is always wrong, |c_t - M_t| = 2a after round 1; the recursion
    # in closed form (xh stays inside the interval for a small a) is evaluated step by step here
    a, horizon = 0.05, 40
    c = a * (-1.0) ** np.arange(horizon)
    xh, hint, acc, loss = 0.0, 0.0, 0.0, 0.0
    for t in range(horizon):
        eta = 1.0 / np.sqrt(1.0 + acc)
        x = np.clip(xh - eta * hint, -1, 1)
        loss += c[t] * x
        xh = np.clip(xh - eta * c[t], -1, 1)
        acc += (c[t] - hint) ** 2
        hint = c[t]
    expected = loss + abs(c.sum())
    assert optimistic_omd_regret(c.reshape(1, horizon, 1))[0] == pytest.approx(expected, rel=1e-12)
    assert expected > 0  # a wrong hint costs: eta_t a^2 per round


def test_ball_projection_and_refusals():
    x = np.array([[3.0, 4.0], [0.3, 0.4]])
    assert np.allclose(ball_projection(x, 1.0), [[0.6, 0.8], [0.3, 0.4]])
    with pytest.raises(ConfigError):
        optimistic_omd_regret(np.ones((3, 2)))
    with pytest.raises(ConfigError):
        OptimisticOMDRegret(levels=[0.1])


def test_evaluator_slope_is_near_one_half():
    v = (
        OptimisticOMDRegret(levels=[0.1, 0.4, 1.6], horizon=300, num_replicates=4)
        .evaluate(generator=torch.Generator().manual_seed(0))
        .values
    )
    assert v["slope_low"] <= v["slope"] <= v["slope_high"]
    assert 0.4 < v["slope"] < 0.7 and v["r_squared"] > 0.9
    assert v["regret/adversarial/1.6"] > v["regret/adversarial/0.1"] > 0


def test_replicates_table_gives_back_the_means_and_the_slope():
    m = OptimisticOMDRegret(levels=[0.1, 0.4, 1.6], horizon=200, num_replicates=5).evaluate(
        generator=torch.Generator().manual_seed(2)
    )
    reps = m.tables["replicates"]
    assert [r["replicate"] for r in reps] == list(range(5))
    for sweep in ("stochastic", "adversarial"):
        for level in ("0.1", "0.4", "1.6"):
            col = [r[f"regret/{sweep}/{level}"] for r in reps]
            assert np.mean(col) == pytest.approx(m.values[f"regret/{sweep}/{level}"], rel=1e-12)
    # the adversarial sweep has no noise: every replicate's regret is the same
    assert len({r["regret/adversarial/0.4"] for r in reps}) == 1
    # each row's slope is the least-squares slope of its log regrets against log V
    v = {(r["sweep"], f"{r['level']:g}"): r["V"] for r in m.tables["sweep"]}
    keys = sorted(v)
    x = np.log([v[k] for k in keys])
    y = np.log([reps[0][f"regret/{s}/{lv}"] for s, lv in keys])
    assert reps[0]["slope"] == pytest.approx(np.polyfit(x, y, 1)[0], rel=1e-10)
    # the tables give back the evaluator's fit exactly
    fit, r2 = fit_regret_slope(sweep_from_tables(m.tables["sweep"], reps))
    assert fit.estimate == pytest.approx(m.values["slope"], rel=1e-12)
    assert (fit.low, fit.high) == pytest.approx((m.values["slope_low"], m.values["slope_high"]), rel=1e-12)
    assert r2 == pytest.approx(m.values["r_squared"], rel=1e-12)


def test_pipeline_runs_every_horizon(tmp_path):
    res = quadriga.api.run(
        "diag-sea-omd",
        overrides=["stage.omd.levels=[0.2, 0.8]", "stage.omd.num_replicates=2"],
        out=tmp_path / "run",
    )
    assert {f"omd[horizon={t}]" for t in (250, 1000, 4000)} <= set(res.artifacts)


def test_sea_claim_smoke(tmp_path):
    obs = sea_omd_sqrt.observations("smoke", tmp_path, Registry(use_env=False))
    assert obs.numbers["variance_decades"] >= 2.0 and obs.numbers["horizon"] == 4000
    assert len(obs.values["diag-sea-omd"]) == 4  # one row per replicate: its own slope
    ci = obs.intervals["both sweeps"]
    assert ci.estimate == pytest.approx(obs.numbers["slope"] - 0.5, rel=1e-12) and ci.n == 4
    rec = evaluate_claim(sea_omd_sqrt, obs, "smoke")
    assert rec["status"] == "ran"
