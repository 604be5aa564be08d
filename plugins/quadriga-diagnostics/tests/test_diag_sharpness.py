"""GFS sharpness: power iteration against a quadratic's known eigenvalue, the flow's numerical
limit against the closed form of its invariants, the evaluator and the claim at smoke scale."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_diagnostics.claims import gfs_monotone
from quadriga_diagnostics.hessian import top_hessian_eigenvalue
from quadriga_diagnostics.sharpness import (
    GFSSharpness,
    draw_initial_weights,
    gfs_sharpness_closed_form,
    gradient_flow_limit,
    scalar_net_loss,
)

from quadriga.claims import evaluate_claim
from quadriga.errors import ConfigError
from quadriga.registry import Registry


def test_power_iteration_finds_a_quadratics_sharpness():
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    eig = np.array([7.5, 3.0, 2.0, 1.0, 0.5, -1.0])
    a = torch.tensor(q @ np.diag(eig) @ q.T)
    value, v = top_hessian_eigenvalue(
        lambda x: 0.5 * x @ a @ x,
        torch.zeros(6, dtype=torch.float64),
        generator=torch.Generator().manual_seed(1),
    )
    assert value == pytest.approx(7.5, rel=1e-8)
    assert abs(float(torch.dot(v, torch.tensor(q[:, 0])))) == pytest.approx(1.0, abs=1e-4)


def test_power_iteration_refuses_a_matrix_of_parameters():
    with pytest.raises(ConfigError):
        top_hessian_eigenvalue(lambda x: x.sum(), torch.zeros(2, 2), generator=torch.Generator())


def test_closed_form_gfs_at_a_balanced_minimum_and_after_the_flow():
    # at w = (1, 1, 1) the flow is at rest and the sharpness is |grad f|^2 = 3
    assert gfs_sharpness_closed_form([1.0, 1.0, 1.0]) == pytest.approx(3.0, rel=1e-12)
    # depth 2 from (a, b): w_1^2 - w_2^2 is kept and w_1 w_2 = 1, so S = w_1^2 + w_2^2 = sqrt(d^2 + 4)
    a, b = 2.0, 0.3
    assert gfs_sharpness_closed_form([a, b]) == pytest.approx(np.sqrt((a * a - b * b) ** 2 + 4), rel=1e-12)


def test_numerical_flow_reaches_the_closed_form_solution():
    w = np.array([1.6, 0.7, 1.1, 0.8])
    limit = gradient_flow_limit(w)
    assert scalar_net_loss(limit) < 1e-20
    assert np.allclose(limit**2 - limit[0] ** 2, w**2 - w[0] ** 2, atol=1e-8)  # invariants kept
    assert np.sum(1 / limit**2) == pytest.approx(gfs_sharpness_closed_form(w), rel=1e-8)


def test_evaluator_measures_a_monotone_gfs_sharpness_while_the_loss_oscillates():
    m = GFSSharpness(num_steps=60, evaluate_every=3).evaluate(generator=torch.Generator().manual_seed(0))
    v = m.values
    assert v["edge_ratio_initial"] == pytest.approx(1.3, rel=1e-9)
    assert v["max_relative_gap"] < 1e-7
    assert v["monotone_fraction"] == 1.0
    assert v["loss_increase_fraction"] > 0.2  # GD oscillates at the edge
    assert v["gfs_sharpness_final"] < v["gfs_sharpness_initial"]
    assert len(m.tables["trajectory"]) == 21


def test_draws_table_reproduces_a_run_from_each_drawn_initialisation():
    gen = torch.Generator().manual_seed(3)
    kwargs = {"num_steps": 30, "evaluate_every": 3, "stability_ratio": 1.2}
    m = GFSSharpness(num_draws=2, **kwargs).evaluate(generator=gen)
    plain = GFSSharpness(**kwargs).evaluate(generator=torch.Generator().manual_seed(3))
    assert m.values == plain.values  # the draws do not touch the run from initial_weights
    draws = m.tables["draws"]
    assert [r["draw"] for r in draws] == [0, 1] and {r["subject"] for r in draws} == {"diag-gfs-sharpness"}
    for row in draws:
        w = np.asarray(row["weights"])
        assert len(w) == 4 and 0.8 - 1e-5 <= np.prod(w) <= 1.25 + 1e-5  # product c ~ U[0.8, 1.25]
        assert row["stability_ratio"] == 1.2
        # learning rate 2 * ratio / S_GFS(w_0), closed form; the measured start is at the ratio
        assert row["learning_rate"] == pytest.approx(2 * 1.2 / gfs_sharpness_closed_form(w), rel=1e-12)
        assert row["edge_ratio_initial"] == pytest.approx(1.2, rel=1e-8)
        alone = GFSSharpness(initial_weights=row["weights"], **kwargs).evaluate(generator=gen).values
        for key in ("monotone_fraction", "loss_increases", "learning_rate", "final_loss"):
            assert row[key] == alone[key]  # GD itself is deterministic given the weights
        assert row["gfs_sharpness_final"] == pytest.approx(alone["gfs_sharpness_final"], rel=1e-8)
    # the drawn weights are the draw_initial_weights stream: unbalanced, so the flow moves them
    w = draw_initial_weights(np.random.default_rng(0))
    assert len(w) == 4 and np.ptp(w) > 0.01


def test_evaluator_refuses_a_negative_product_and_a_divergent_rate():
    with pytest.raises(ConfigError):
        GFSSharpness(initial_weights=[1.0, -1.0])
    with pytest.raises(ConfigError, match="diverged"):
        GFSSharpness(initial_weights=[3.0, 0.3], stability_ratio=3.5, num_steps=50).evaluate(
            generator=torch.Generator()
        )


def test_gfs_claim_smoke(tmp_path):
    obs = gfs_monotone.observations("smoke", tmp_path, Registry(use_env=False))
    assert obs.numbers["runs"] == 2 and obs.numbers["min_edge_ratio_initial"] > 1.0
    assert obs.numbers["min_monotone_fraction"] == 1.0
    assert obs.values == {"diag-gfs-sharpness": [1.0, 1.0]}  # the rows of the draws table
    assert obs.intervals["all runs"].estimate == 1.0 and obs.intervals["all runs"].n == 2
    rec = evaluate_claim(gfs_monotone, obs, "smoke")
    assert rec["status"] == "ran"


def test_pipeline_runs_every_stability_ratio(tmp_path):
    import quadriga.api

    res = quadriga.api.run("diag-gfs-sharpness", overrides=["stage.gfs.num_steps=20"], out=tmp_path / "run")
    for ratio in (1.1, 1.2, 1.3, 1.4):
        v = res.artifacts[f"gfs[stability_ratio={ratio}]"].values
        assert v["edge_ratio_initial"] == pytest.approx(ratio, rel=1e-9)
