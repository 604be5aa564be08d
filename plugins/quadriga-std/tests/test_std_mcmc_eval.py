"""Sampler-quality evaluators: ESS against the AR(1) closed form, moment error by hand, mode coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from quadriga_std.evaluators.mcmc import ESS, ModeCoverage, MomentError, ess
from quadriga_std.targets.analytic import DoubleWell
from quadriga_std.targets.gaussian import Gaussian, GaussianMixture

from quadriga.artifacts import Samples
from quadriga.errors import ConfigError


def _ar1(rho: float, m: int, n: int, seed: int) -> np.ndarray:
    """m stationary AR(1) chains x_t = rho x_{t-1} + e_t of length n, as [m, n, 1]."""
    rng = np.random.default_rng(seed)
    x = np.empty((m, n))
    x[:, 0] = rng.standard_normal(m) / math.sqrt(1 - rho**2)
    e = rng.standard_normal((m, n))
    for t in range(1, n):
        x[:, t] = rho * x[:, t - 1] + e[:, t]
    return x[:, :, None]


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9])
@pytest.mark.parametrize("rank_normalize", [False, True])
def test_ess_matches_ar1_closed_form(rho, rank_normalize):
    m, n = 8, 4000
    est = float(ess(_ar1(rho, m, n, seed=int(10 * rho)), rank_normalize=rank_normalize)[0])
    exact = m * n * (1 - rho) / (1 + rho)
    assert est == pytest.approx(exact, rel=0.12)


def test_ess_evaluator_values_and_iact():
    chains = torch.as_tensor(np.concatenate([_ar1(0.8, 4, 2000, 1), _ar1(0.0, 4, 2000, 2)], -1))
    s = Samples(
        x=chains.reshape(-1, 2), chains=chains, info={"stage": "ar", "seconds": 2.0, "score_evals": 8000}
    )
    m = ESS(method="basic").evaluate(s, generator=torch.Generator().manual_seed(0))
    e_slow, e_fast = m.info["ess"]["ar"]
    assert e_slow == pytest.approx(8000 / 9, rel=0.15) and e_fast == pytest.approx(8000, rel=0.1)
    assert m.values["ar/ess_min"] == pytest.approx(e_slow)
    assert m.values["ar/iact_max"] == pytest.approx(8000 / e_slow)
    assert m.values["ar/ess_min_per_second"] == pytest.approx(e_slow / 2.0)
    assert m.tables["summary"][0]["subject"] == "ar"


def test_moment_error_by_hand():
    g = Gaussian(mean=[1.0, 0.0], covariance=[[2.0, 0.0], [0.0, 1.0]])
    x = torch.tensor([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0]], dtype=torch.float64)
    chains = x.reshape(2, 2, 2)
    m = MomentError().evaluate(
        {"a": Samples(x=x, chains=chains)}, g, generator=torch.Generator().manual_seed(0)
    )
    # mean (1, 1): mse = (0 + 1) / 2; sample covariance (ddof 1) = 4/3 I -> ||(-2/3, 1/3)||_F
    assert m.values["a/mean_mse"] == pytest.approx(0.5)
    assert m.values["a/cov_error"] == pytest.approx(math.sqrt(4 / 9 + 1 / 9))
    # chain means (1, 0) and (1, 2): mses 0 and 2 -> 1
    assert m.values["a/chain_mean_mse"] == pytest.approx(1.0)
    # weights: all mass on the first point
    w = MomentError().evaluate(
        {"w": Samples(x=x, log_weights=torch.tensor([0.0, -1e9, -1e9, -1e9]))},
        g,
        generator=torch.Generator().manual_seed(0),
    )
    assert w.values["w/mean_mse"] == pytest.approx(0.5)
    with pytest.raises(ConfigError, match="mean"):
        MomentError().evaluate({"a": Samples(x=x)}, object(), generator=torch.Generator().manual_seed(0))


def test_moment_error_of_exact_samples_is_small():
    g = Gaussian(dim=3, equicorrelation=0.5)
    n = 20000
    s = Samples(x=g.sample(n, generator=torch.Generator().manual_seed(0)))
    m = MomentError().evaluate({"iid": s}, g, generator=torch.Generator().manual_seed(0))
    # E[mean_mse] = trace(S) / (d n) = 1 / n; allow 10x (chi-square tail)
    assert m.values["iid/mean_mse"] < 10 / n
    assert m.values["iid/cov_error"] < 0.1


def test_mode_coverage_exact_and_stuck_samples():
    gmm = GaussianMixture(preset="4-mode-2d", weights=[0.1, 0.2, 0.3, 0.4])
    exact = Samples(x=gmm.sample(8000, generator=torch.Generator().manual_seed(1)))
    stuck_x = gmm.component_means[0] + 0.3 * torch.randn(
        800, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64
    )
    stuck = Samples(x=stuck_x, chains=stuck_x.reshape(2, 400, 2))
    m = ModeCoverage().evaluate(
        {"exact": exact, "stuck": stuck}, gmm, generator=torch.Generator().manual_seed(0)
    )
    # TV of a multinomial frequency: E <= sum_k sqrt(w_k (1 - w_k) / n) / 2 ~ 0.0095; allow 3x
    assert m.values["exact/tv"] < 0.03
    assert m.values["exact/modes_visited"] == 4
    for k, w in enumerate([0.1, 0.2, 0.3, 0.4]):
        assert m.values[f"exact/fraction_{k}"] == pytest.approx(
            w, abs=4 * math.sqrt(w * (1 - w) / 8000) + 0.005
        )
    assert m.values["stuck/tv"] == pytest.approx(0.9)
    assert m.values["stuck/modes_visited"] == 1 and m.values["stuck/chain_modes_visited"] == 1
    assert [r["subject"] for r in m.tables["summary"]] == ["exact", "stuck"]
    fig = m.figures["samples"]
    assert len(fig.axes) == 2
    # 8000 draws, at most 2000 plotted: said in words, not "every 4th"
    assert (
        fig.axes[0].get_title().endswith("\n1 draw in 4 plotted") and "plotted" not in fig.axes[1].get_title()
    )
    # the true values a sweep's summary.png draws as reference lines: the weights, and tv = 0
    expected = {f"fraction_{k}": w for k, w in enumerate([0.1, 0.2, 0.3, 0.4])} | {"tv": 0.0}
    assert m.info["true_values"] == pytest.approx(expected)
    with pytest.raises(ConfigError, match="mixture"):
        ModeCoverage().evaluate(exact, DoubleWell(), generator=torch.Generator().manual_seed(0))


def test_gmm_pipeline_runs_small(tmp_path):
    api = pytest.importorskip("quadriga.api")
    overrides = [
        f"stage.{s}.{k}={v}"
        for s in ("rwm", "mala", "hmc")
        for k, v in (("num_samples", 150), ("burn_in", 20))
    ]
    overrides += ["stage.energy.num_reference_samples=300"]
    res = api.run("gmm-mcmc-baselines", overrides=overrides, out=tmp_path / "run")
    assert res.status == "finished"
    vals = res.artifacts["coverage"].values
    assert 0 <= vals["hmc/tv"] <= 1 and 1 <= vals["rwm/modes_visited"] <= 4
    assert res.artifacts["energy"].values["hmc/energy_distance"] >= 0


def test_ess_of_a_stuck_chain_is_one_draw_per_chain_not_the_number_of_draws():
    """A constant chain (RWM with acceptance 0) has no information beyond its start."""
    import arviz

    stuck = torch.zeros(2, 2000, 1, dtype=torch.float64)
    stuck[1] += 3.0
    assert float(arviz.ess(stuck[:1, :, 0].numpy())) == 2000  # what arviz alone reports
    m = ESS().evaluate(
        {"samples": Samples(x=stuck.reshape(-1, 1), chains=stuck)}, generator=torch.Generator().manual_seed(0)
    )
    assert m.values["samples/ess_min"] == 2.0 and m.values["samples/stuck_chains"] == 2.0
    assert "never moved" in m.info["notes"][0]
    # i.i.d. draws are near 2000 (arviz may exceed n for negatively correlated draws; then a note)
    iid = torch.randn(4, 500, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    m = ESS().evaluate(
        {"samples": Samples(x=iid.reshape(-1, 2), chains=iid)}, generator=torch.Generator().manual_seed(0)
    )
    assert 1500 < m.values["samples/ess_min"] < 2600 and m.values["samples/rhat_max"] < 1.01
