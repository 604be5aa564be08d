"""The registered components: conformance, closed forms, errors, and a small statistical comparison."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_pivotal_leverage.evaluators import ExcessRisk
from quadriga_pivotal_leverage.pivotal import inclusion_probabilities, leverage_scores
from quadriga_pivotal_leverage.samplers import LeverageIID, PivotalLeverage, Uniform
from quadriga_pivotal_leverage.tasks import DiabetesPoly, LegendreRegression, Surrogate2D

from quadriga import api
from quadriga.errors import ConfigError
from quadriga.testing import check_component


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("sampler", "pivotal-leverage"),
        ("sampler", "leverage-iid"),
        ("sampler", "uniform"),
        ("evaluator", "excess-risk"),
        ("dataset", "legendre-regression"),
        ("dataset", "surrogate-2d"),
        ("dataset", "diabetes-poly"),
    ],
)
def test_components_conform(kind, name):
    check_component(kind, name)


def _pool(**kw):
    pool = LegendreRegression(**{"num_points": 2000, "num_features": 20, **kw})
    pool.prepare(generator=torch.Generator().manual_seed(0))
    return pool


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def test_full_budget_gives_the_full_data_fit_and_risk_ratio_one():
    pool = _pool()
    a, b = pool.split("pool")
    ols = np.linalg.lstsq(a[:, :10], b, rcond=None)[0]
    for sampler in (PivotalLeverage(budget=2000, num_features=10), LeverageIID(budget=2000, num_features=10)):
        s = sampler.sample(pool, generator=_gen(1))
        assert s.info["num_queried"] == 2000
        np.testing.assert_allclose(s.info["coef"], ols, atol=1e-10)
        values = ExcessRisk().evaluate({"full[0]": s}, pool, generator=_gen(0)).values
        assert values["full[0]/risk_ratio"] == pytest.approx(1.0, abs=1e-10)
        assert values["full[0]/excess_risk"] == pytest.approx(0.0, abs=1e-10)


def test_samples_carry_the_queried_points_and_weights():
    pool = _pool()
    s = PivotalLeverage(budget_per_feature=2.0, num_features=10).sample(pool, generator=_gen(2))
    grid = pool.coordinates()[:, 0]
    x = s.x[:, 0].numpy()
    rows = np.array([int(np.argmin(np.abs(grid - v))) for v in x])
    np.testing.assert_array_equal(grid[rows], x)  # every queried point is a pool point
    assert np.unique(rows).size == rows.size == s.num_samples == s.info["budget"] == 20  # exact size
    p = inclusion_probabilities(leverage_scores(pool.design(10)), 20)
    np.testing.assert_allclose(s.log_weights.numpy(), -np.log(p[rows]), rtol=1e-12)  # weights 1/p_i
    assert pool.num_queries == 20


def test_uniform_pivotal_ablation_and_pca_tree_run_on_2d():
    pool = Surrogate2D(grid_size=20, total_degree=4)
    pool.prepare(generator=_gen(0))
    assert pool.design().shape == (400, 15)
    for sampler in (PivotalLeverage(tree="pca"), PivotalLeverage(marginals="uniform"), Uniform()):
        s = sampler.sample(pool, generator=_gen(3))
        assert np.isfinite(s.info["coef"]).all()


def test_diabetes_pool_shapes():
    pool = DiabetesPoly()
    assert pool.design().shape == (442, 66)
    assert pool.coordinates().shape == (442, 10)


def test_noise_is_drawn_in_prepare_and_depends_on_the_seed():
    a = _pool(noise=0.1)
    b = _pool(noise=0.1)
    c = LegendreRegression(num_points=2000, num_features=20, noise=0.1)
    c.prepare(generator=_gen(9))
    np.testing.assert_array_equal(a.split("pool")[1], b.split("pool")[1])
    assert not np.array_equal(a.split("pool")[1], c.split("pool")[1])
    clean = 1 / (1 + 25 * np.linspace(-1, 1, 2000) ** 2)
    resid = a.split("pool")[1] - clean
    assert resid.std() == pytest.approx(
        0.1 * np.sqrt(np.mean((0.5 + np.abs(np.linspace(-1, 1, 2000))) ** 2)), rel=0.1
    )


def test_errors_name_the_parameter():
    pool = _pool()
    with pytest.raises(ConfigError) as err:
        PivotalLeverage(num_features=50).sample(pool, generator=_gen(0))
    assert err.value.key == "num_features"
    with pytest.raises(ConfigError) as err:
        LeverageIID(budget=5000).sample(pool, generator=_gen(0))
    assert err.value.key == "budget"
    with pytest.raises(ConfigError) as err:
        PivotalLeverage(tree="octree")
    assert err.value.key == "tree"
    with pytest.raises(ConfigError) as err:
        PivotalLeverage().sample(object(), generator=_gen(0))
    assert err.value.key == "target"
    with pytest.raises(ConfigError) as err:
        LegendreRegression(num_points=5, num_features=6)
    assert err.value.key == "num_features"


def test_pivotal_beats_iid_leverage_at_k_equal_2d():
    # 1-D Runge, d = 20, k = 40, 60 paired draws: the research note's medians are about 1.2 vs 8;
    # the one-sided Wilcoxon signed-rank test on the paired risk ratios must reject at 1e-6.
    from scipy.stats import wilcoxon

    pool = _pool()
    piv, iid = [], []
    evaluator = ExcessRisk()
    for seed in range(60):
        subjects = {
            "piv[0]": PivotalLeverage(num_features=20).sample(pool, generator=_gen(seed)),
            "iid[0]": LeverageIID(num_features=20).sample(pool, generator=_gen(seed)),
        }
        values = evaluator.evaluate(subjects, pool, generator=_gen(0)).values
        piv.append(values["piv[0]/risk_ratio"])
        iid.append(values["iid[0]/risk_ratio"])
    assert np.median(piv) < 1.6 < 3.0 < np.median(iid)
    assert wilcoxon(piv, iid, alternative="less").pvalue < 1e-6


def test_plain_pipeline_runs_and_groups_replicates(tmp_path):
    stages = {}
    for arm in ("pivotal-leverage", "leverage-iid"):
        for i in range(3):
            stages[f"{arm}-{i}"] = {
                "use": arm,
                "inputs": {"target": "pool"},
                "num_features": 10,
            }
    stages["risk"] = {"use": "excess-risk", "inputs": {"subject": list(stages), "reference": "pool"}}
    spec = {
        "pipeline": {"name": "pl-test", "seed": 0},
        "task": {"pool": {"use": "legendre-regression", "num_points": 500, "num_features": 10}},
        "stage": stages,
    }
    result = api.run(spec, out=tmp_path / "run")
    assert result.status == "finished"
    values = result.artifacts["risk"].values
    assert all(values[f"pivotal-leverage-{i}/num_queried"] == 20 for i in range(3))
    assert all(values[f"{s}/risk_ratio"] >= 1.0 - 1e-12 for s in stages if s != "risk")
