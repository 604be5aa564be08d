"""Replicate-MSE and magnetization evaluators against closed forms."""

import numpy as np
import pytest
import torch
from quadriga_srmc.evaluators import MagnetizationError, ReplicateMeanMSE
from quadriga_std.targets.gaussian import Gaussian
from quadriga_std.targets.ising import Ising

from quadriga.artifacts import Samples
from quadriga.errors import ConfigError


def _samples(chains, **info):
    return Samples(x=chains.reshape(-1, chains.shape[-1]), chains=chains, info=info)


def test_replicate_mse_closed_form_and_ratio():
    target = Gaussian(mean=[1.0, 2.0], covariance=[[1.0, 0.0], [0.0, 1.0]])
    # chain k = 1..5 has constant draws at mean + k * (1, 1): per-dimension MSE = k^2
    offsets = torch.arange(1, 6, dtype=torch.float64)
    a = target.mean + offsets[:, None, None] * torch.ones(5, 10, 2, dtype=torch.float64)
    b = target.mean + 2 * (a - target.mean)  # MSE 4 k^2
    m = ReplicateMeanMSE(baseline="b", num_bootstrap=500).evaluate(
        {"a": _samples(a, draws_per_chain=10), "b": _samples(b)},
        target,
        generator=torch.Generator().manual_seed(0),
    )
    assert m.values["a/mse_median"] == pytest.approx(9.0)
    assert m.values["a/mse_mean"] == pytest.approx(np.mean(np.arange(1, 6) ** 2))
    assert m.values["a/asymptotic_variance"] == pytest.approx(10 * 11.0)
    assert m.values["a/mse_ratio"] == pytest.approx(0.25)
    # one value with its interval, not the interval's ends as metrics of their own
    assert not [k for k in m.values if k.endswith(("_low", "_high"))]
    ci = m.intervals["a/mse_median"]
    # per-chain MSEs {1, 4, 9, 16, 25}: a resample's median is <= 1 with probability
    # P(Binomial(5, 1/5) >= 3) = 0.058 > 0.025 (likewise >= 25), so the 95% percentile interval
    # is the whole range [1, 25]
    assert (ci["low"], ci["high"], ci["level"]) == (1.0, 25.0, 0.95)
    assert ci["method"] == "percentile bootstrap of the median over 5 chains (500 resamples)"
    ratio = m.intervals["a/mse_ratio"]
    assert ratio["low"] <= 0.25 <= ratio["high"] and "ratio of medians" in ratio["method"]
    assert set(m.intervals) == {"a/mse_median", "a/mse_ratio", "b/mse_median"} and m.problems() == []
    assert m.tables["replicate_mse"][0]["mse_median_low"] == 1.0  # the table keeps the ends as columns
    assert "b/mse_ratio" not in m.values
    with pytest.raises(ConfigError, match="baseline"):
        ReplicateMeanMSE(baseline="c").evaluate(
            {"a": _samples(a)}, target, generator=torch.Generator().manual_seed(0)
        )
    with pytest.raises(ConfigError, match="chains"):
        ReplicateMeanMSE().evaluate(
            Samples(x=a.reshape(-1, 2)), target, generator=torch.Generator().manual_seed(0)
        )


def test_magnetization_error_against_enumeration():
    ising = Ising(size=2, coupling=0.5, field=0.2)
    exact_abs = ising.mean_abs_magnetization()
    exact_m = ising.mean_magnetization()
    up = torch.ones(3, 4, 4, dtype=torch.float64)  # every draw all spins up: m = |m| = 1
    m = MagnetizationError(num_bootstrap=200).evaluate(
        {"up": _samples(up)}, ising, generator=torch.Generator().manual_seed(0)
    )
    assert m.values["up/mag_mse"] == pytest.approx((1 - exact_m) ** 2)
    assert m.values["up/abs_mag_bias"] == pytest.approx(1 - exact_abs)
    assert m.values["up/exact_abs_mag"] == pytest.approx(exact_abs)
    with pytest.raises(ConfigError, match="9 sites per draw but the reference has 4"):
        MagnetizationError(num_bootstrap=200).evaluate(
            {"big": _samples(torch.ones(3, 4, 9))}, ising, generator=torch.Generator().manual_seed(0)
        )


def test_replicate_mse_per_chain_table_reads_points_moves_and_run_off():
    """One row per (subject, chain): the point's settings as columns, the MSE, moves and the largest |x|."""
    target = Gaussian(mean=[0.0, 0.0], covariance=[[4.0, 0.0], [0.0, 1.0]])  # largest s.d. 2
    # chain 0 moves on 1 of 3 transitions, chain 1 never moves; means (1.5, 0.75) and (3, -3)
    c0 = [[0.0, 0.0], [2.0, 1.0], [2.0, 1.0], [2.0, 1.0]]
    c1 = [[3.0, -3.0]] * 4
    a = torch.tensor([c0, c1], dtype=torch.float64)
    subjects = {"mala[step_size=0.1]": _samples(a), "srmala[base_kernel.step_size=0.1]": _samples(2 * a)}
    m = ReplicateMeanMSE(num_bootstrap=100).evaluate(
        subjects, target, generator=torch.Generator().manual_seed(0)
    )
    rows = m.tables["per_chain"]
    assert [(r["sampler"], r["step_size"], r["chain"]) for r in rows] == [
        ("mala", 0.1, 0),
        ("mala", 0.1, 1),
        ("srmala", 0.1, 0),
        ("srmala", 0.1, 1),
    ]
    assert rows[0]["subject"] == "mala[step_size=0.1]"
    assert [r["mse"] for r in rows] == pytest.approx([(1.5**2 + 0.75**2) / 2, 9.0, (3**2 + 1.5**2) / 2, 36.0])
    assert [r["moved"] for r in rows] == pytest.approx([1 / 3, 0.0, 1 / 3, 0.0])
    assert [r["max_abs"] for r in rows] == pytest.approx([2.0, 3.0, 4.0, 6.0])
    assert [r["max_abs_sd"] for r in rows] == pytest.approx([1.0, 1.5, 2.0, 3.0])
    for name in subjects:  # the rows' mean is the evaluator's mse_mean
        mine = [r["mse"] for r in rows if r["subject"] == name]
        assert np.mean(mine) == pytest.approx(m.values[f"{name}/mse_mean"])
    # a subject named from Python is its own sampler; running means (store = "means") give no moves
    plain = ReplicateMeanMSE(num_bootstrap=100).evaluate(
        {"x": _samples(a, store="means")}, target, generator=torch.Generator().manual_seed(0)
    )
    assert [set(r) for r in plain.tables["per_chain"]] == [{"subject", "sampler", "chain", "mse"}] * 2
    assert plain.tables["per_chain"][0]["sampler"] == "x"


def test_per_chain_moves_match_the_claim_helpers_on_a_sampler_run():
    """On a real MALA run the per-chain rows pool to the claims' acceptance and run-off counts."""
    from quadriga_srmc.claims import _diverged, _moved
    from quadriga_std.samplers.mcmc import MALA

    target = Gaussian(dim=3, equicorrelation=0.5)
    out = MALA(step_size=0.3, num_chains=5, num_samples=50, burn_in=10, init="target").sample(
        target, generator=torch.Generator().manual_seed(1)
    )
    m = ReplicateMeanMSE(num_bootstrap=100).evaluate(
        {"mala": out}, target, generator=torch.Generator().manual_seed(0)
    )
    rows = m.tables["per_chain"]
    assert np.mean([r["moved"] for r in rows]) == pytest.approx(_moved(out.chains))
    assert (
        _diverged([r["max_abs_sd"] for r in rows], 1.0)
        == _diverged(out.chains.abs().amax(dim=(1, 2)), 1.0)
        == 0
    )
    assert 0.2 < np.mean([r["moved"] for r in rows]) < 1.0


def test_replicate_mse_num_chains_reads_the_first_chains_of_every_subject():
    target = Gaussian(mean=[0.0, 0.0], covariance=[[1.0, 0.0], [0.0, 1.0]])
    offsets = torch.arange(1, 6, dtype=torch.float64)  # chain k has MSE k^2
    a = offsets[:, None, None] * torch.ones(5, 4, 2, dtype=torch.float64)
    gen = torch.Generator().manual_seed(0)
    m = ReplicateMeanMSE(num_bootstrap=100, num_chains=3).evaluate({"a": _samples(a)}, target, generator=gen)
    assert [r["mse"] for r in m.tables["per_chain"]] == pytest.approx([1.0, 4.0, 9.0])
    assert m.values["a/mse_mean"] == pytest.approx(14 / 3) and m.values["a/chains"] == 3
    with pytest.raises(ConfigError, match="5 chains but num_chains = 6"):
        ReplicateMeanMSE(num_bootstrap=100, num_chains=6).evaluate({"a": _samples(a)}, target, generator=gen)
