"""Critical batch size: the exact SGD recursion against simulated SGD and its noiseless closed
form, steps to target, the evaluator, pipeline and claim at smoke scale."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_diagnostics.claims import crit_batch_growth
from quadriga_diagnostics.crit_batch import SUBJECT, CriticalBatch, excess_loss_trajectory, steps_to_targets

from quadriga.claims import evaluate_claim
from quadriga.errors import ConfigError
from quadriga.registry import Registry


def test_recursion_matches_simulated_minibatch_sgd():
    rng = np.random.default_rng(0)
    h = np.array([1.0, 0.5, 0.25, 0.1])
    w_star = np.array([1.0, -0.7, 0.5, 2.0])
    eta, batch, steps, noise_var, reps = 0.3, 2, 25, 0.2, 20000
    w = np.zeros((reps, 4))
    for _ in range(steps):
        x = rng.normal(size=(reps, batch, 4)) * np.sqrt(h)
        y = x @ w_star + np.sqrt(noise_var) * rng.normal(size=(reps, batch))
        resid = np.einsum("rbd,rd->rb", x, w) - y
        w = w - eta * np.einsum("rb,rbd->rd", resid, x) / batch
    sim = 0.5 * ((w - w_star) ** 2 @ h)
    exact = excess_loss_trajectory(h, w_star**2, np.array([eta]), batch, steps, noise_var)[-1, 0]
    assert abs(sim.mean() - exact) < 4 * sim.std() / np.sqrt(reps)


def test_noiseless_large_batch_limit_is_gradient_descent():
    h = np.array([1.0, 0.3])
    c0 = np.array([2.0, 5.0])
    traj = excess_loss_trajectory(h, c0, np.array([0.5]), 10**12, 7, 0.0)
    expected = 0.5 * (((1 - 0.5 * h) ** (2 * np.arange(8))[:, None]) * c0 * h).sum(1)
    assert np.allclose(traj[:, 0], expected, rtol=1e-9)


def test_divergence_becomes_inf_and_steps_to_targets():
    traj = excess_loss_trajectory(np.array([1.0]), np.array([1.0]), np.array([3.0, 0.5]), 10**9, 600, 0.0)
    assert np.isinf(traj[-1, 0]) and traj[-1, 1] < 1e-20
    assert steps_to_targets(traj, np.array([0.1251, 1e-300]))[0] == 1.0  # (1 - 0.5)^2 c0 / 2 = 0.125
    assert np.isinf(steps_to_targets(traj, np.array([-1.0]))[0])


def test_evaluator_finds_a_growing_critical_batch():
    v = (
        CriticalBatch(
            dim=16,
            budgets=[64, 128, 256],
            batch_sizes=[1, 2, 4, 16, 64, 256],
            learning_rates=np.geomspace(1e-3, 1.9, 12).tolist(),
            num_teachers=2,
        )
        .evaluate(generator=torch.Generator().manual_seed(0))
        .values
    )
    assert v["b_crit/T=256"] > v["b_crit/T=64"] > 1
    assert v["slope_low"] <= v["slope"] <= v["slope_high"] and v["slope"] > 0


def test_evaluator_tables_per_teacher_and_per_budget():
    from quadriga import stats

    budgets = [64, 128, 256]
    m = CriticalBatch(
        dim=16,
        budgets=budgets,
        batch_sizes=[1, 2, 4, 16, 64, 256],
        learning_rates=np.geomspace(1e-3, 1.9, 12).tolist(),
        num_teachers=3,
    ).evaluate(generator=torch.Generator().manual_seed(1))
    v, teachers = m.values, m.tables["teachers"]
    assert [r["teacher"] for r in teachers] == [0, 1, 2] and {r["subject"] for r in teachers} == {SUBJECT}
    slopes = np.array([r["slope"] for r in teachers])
    assert slopes.mean() == pytest.approx(v["slope"], rel=1e-12)
    fit = stats.interval(slopes, "mean")  # the claim's Student t interval over the rows
    assert (fit.low, fit.high) == pytest.approx((v["slope_low"], v["slope_high"]), rel=1e-12)
    rows = m.tables["budgets"]
    assert [r["T"] for r in rows] == budgets
    steps = {(r["T"], r["B"]): r["steps"] for r in m.tables["steps"]}
    for r in rows:
        assert r["b_crit"] == pytest.approx(v[f"b_crit/T={r['T']}"], rel=1e-12)
        # S_min is each teacher's fewest steps over B: its mean is at most the fewest mean steps;
        # E_min <= 1 * S(1) <= T (B = 1 reaches the budget's target within T steps)
        assert r["s_min"] <= min(s for (t, _), s in steps.items() if t == r["T"]) + 1e-12
        assert r["s_min"] <= r["e_min"] <= r["T"]


def test_evaluator_refuses_bad_grids():
    with pytest.raises(ConfigError):
        CriticalBatch(batch_sizes=[2, 4, 8])
    with pytest.raises(ConfigError):
        CriticalBatch(budgets=[10, 20])


def test_pipeline_runs_both_noise_levels(tmp_path):
    import quadriga.api

    res = quadriga.api.run(
        "diag-crit-batch",
        overrides=[
            "stage.cb.dim=8",
            "stage.cb.budgets=[32, 64, 128]",
            "stage.cb.batch_sizes=[1, 4, 16, 64]",
            "stage.cb.num_teachers=2",
        ],
        out=tmp_path / "run",
    )
    assert res.artifacts["cb[noise_var=1.0]"].values["predicted_slope"] == 1.0


def test_crit_batch_claim_smoke(tmp_path):
    obs = crit_batch_growth.observations("smoke", tmp_path, Registry(use_env=False))
    assert obs.numbers["slope"] > 0
    # the replicates are the 2 teachers' rows; their mean is the evaluator's slope
    assert len(obs.values[SUBJECT]) == 2
    assert np.mean(obs.values[SUBJECT]) == pytest.approx(obs.numbers["slope"], rel=1e-12)
    assert obs.table.count("\n") >= 5  # header, rule and the 4 budgets
    rec = evaluate_claim(crit_batch_growth, obs, "smoke")
    assert rec["status"] == "ran"
