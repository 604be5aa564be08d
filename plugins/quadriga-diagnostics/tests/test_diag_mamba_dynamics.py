"""diag-mamba-dynamics: the velocity field against its closed forms, both regimes, the evaluator,
the pipeline and the claim at smoke scale."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_diagnostics.claims_part2 import mamba_criterion
from quadriga_diagnostics.mamba_dynamics import MambaTokenDynamics, classify, token_velocity

import quadriga.api
from quadriga.claims import evaluate_claim
from quadriga.registry import Registry


def _params(mu_sign: float, spread: float = 0.0) -> dict:
    return {
        "s_b": np.array([1.0, 0.5]),
        "s_c": mu_sign * np.array([1.0, 0.5]),
        "a": np.array([1.0, 1.0 + spread]),
        "s": 0.3,
        "b": -0.2,
    }


def test_velocity_of_the_first_token_is_cubic_and_norm_follows_mu():
    p = _params(1.0)
    x = np.array([0.7, -0.4, 1.1])
    v = token_velocity(x, p)
    mu = 1.25
    delta = np.log1p(np.exp(0.3 * x - 0.2))
    assert v[0] == pytest.approx(mu * delta[0] * x[0] ** 3, rel=1e-12)
    # second token: x_2 (x_1^2 D_1 mu e^{-D_2} + x_2^2 D_2 mu) with one decay rate a = 1
    expected = x[1] * mu * (x[0] ** 2 * delta[0] * np.exp(-delta[1]) + x[1] ** 2 * delta[1])
    assert v[1] == pytest.approx(expected, rel=1e-12)
    assert x @ v > 0 and x @ token_velocity(x, _params(-1.0)) < 0  # d|x|^2/dt has the sign of mu


def test_both_regimes_are_classified():
    x0 = np.array([0.5, -1.0, 0.8])
    assert classify(x0, _params(1.0), 200.0) == "divergent"
    assert classify(x0, _params(-1.0), 200.0) == "convergent"


def test_evaluator_hits():
    v = (
        MambaTokenDynamics(num_draws=6, horizon=100.0)
        .evaluate(generator=torch.Generator().manual_seed(0))
        .values
    )
    assert v["hit_share"] == 1.0 and v["hit_low"] < 1.0 and v["undecided_share"] == 0.0


def test_pipeline_runs(tmp_path):
    res = quadriga.api.run(
        "diag-mamba-dynamics",
        overrides=["stage.ssm.num_draws=2", "stage.ssm.horizon=50.0"],
        out=tmp_path / "run",
    )
    assert "ssm[decay_spread=3.0]" in res.artifacts


def test_mamba_claim_smoke(tmp_path):
    obs = mamba_criterion.observations("smoke", tmp_path, Registry(use_env=False))
    assert evaluate_claim(mamba_criterion, obs, "smoke")["status"] == "ran"
