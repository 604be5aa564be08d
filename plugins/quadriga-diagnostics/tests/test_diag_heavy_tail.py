"""Heavy-tailed SMD: the noise against scipy's stable law, closed-form recursions, the evaluator,
the pipeline and the claim at smoke scale."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from quadriga_diagnostics.claims import heavy_tail_rates
from quadriga_diagnostics.heavy_tail import HeavyTailSMD, predicted_rate, smd_errors, stable_noise

import quadriga.api
from quadriga.claims import evaluate_claim
from quadriga.errors import ConfigError
from quadriga.registry import Registry


def test_gaussian_limit_of_the_stable_noise_has_variance_two():
    x = stable_noise(2.0, (20000,), np.random.default_rng(0))
    assert np.var(x) == pytest.approx(2.0, rel=0.05)  # S(2, 0, 1) = N(0, 2)


def test_stable_noise_tail_matches_the_alpha_stable_power_law():
    # P(|X| > x) ~ 2 C_alpha x^{-alpha}: the ratio of tail frequencies at x and 2x is 2^alpha
    x = np.abs(stable_noise(1.5, (200000,), np.random.default_rng(1)))
    ratio = np.mean(x > 20.0) / np.mean(x > 40.0)
    assert ratio == pytest.approx(2**1.5, rel=0.15)


def test_predicted_rates_and_refusals():
    assert predicted_rate("convex", 1.5) == pytest.approx(-1 / 3)
    assert predicted_rate("strongly-convex", 1.5) == pytest.approx(-0.5)
    with pytest.raises(ConfigError):
        predicted_rate("concave", 1.5)
    with pytest.raises(ConfigError):
        stable_noise(1.0, (3,), np.random.default_rng(0))
    with pytest.raises(ConfigError):
        HeavyTailSMD(horizons=[10, 20])


def test_strongly_convex_euclidean_smd_is_the_average_of_the_noise():
    # with steps 1/(t+1) on x^2/2, x_T = -(1/T) sum_t xi_t exactly; at p = 2 with unit scale the
    # average is N(0, 2/T), so |x_T|^2 has mean 2/T
    errs = smd_errors("euclidean", "strongly-convex", 2.0, 50, 4000, np.random.default_rng(2))
    assert np.mean(errs) == pytest.approx(2.0 / 50, rel=0.08)


def test_noiseless_limit_of_the_convex_bed_is_deterministic_travel():
    # with a vanishing noise scale the Euclidean iterate moves from 1 to -1 at speed eta:
    # the averaged gap is the closed-form travel average
    horizon, p, step = 100, 1.5, 0.5
    errs = smd_errors("euclidean", "convex", p, horizon, 3, np.random.default_rng(3), noise_scale=1e-12)
    eta = step * horizon ** (-1 / p)
    x = np.maximum(1.0 - eta * np.arange(1, horizon + 1), -1.0)
    assert np.allclose(errs, (x.mean() + 1.0) / 2.0, rtol=1e-9)


def test_evaluator_recovers_the_gaussian_convex_rate():
    v = (
        HeavyTailSMD(tail_index=2.0, horizons=[100, 200, 400, 800], num_replicates=32)
        .evaluate(generator=torch.Generator().manual_seed(0))
        .values
    )
    assert v["slope_low"] <= v["slope"] <= v["slope_high"]
    assert abs(v["slope_error"]) < 0.15 and v["predicted_time_exponent"] == pytest.approx(2.0)
    assert v["error/T=100"] > v["error/T=800"] > 0


def test_pipeline_runs_a_matrix_point(tmp_path):
    res = quadriga.api.run(
        "diag-heavy-tail-smd",
        overrides=[
            "stage.convex.horizons=[50, 100, 200]",
            "stage.convex.num_replicates=8",
            "stage.strongly_convex.horizons=[50, 100, 200]",
            "stage.strongly_convex.num_replicates=8",
        ],
        out=tmp_path / "run",
    )
    v = res.artifacts["convex[geometry=entropic,tail_index=1.5]"].values
    assert v["predicted_slope"] == pytest.approx(-1 / 3) and math.isfinite(v["slope"])


def test_heavy_tail_claim_smoke(tmp_path):
    obs = heavy_tail_rates.observations("smoke", tmp_path, Registry(use_env=False))
    assert len(obs.intervals) == 8 and obs.numbers["largest_slope_change"] < 0
    rec = evaluate_claim(heavy_tail_rates, obs, "smoke")
    assert rec["status"] == "ran"
