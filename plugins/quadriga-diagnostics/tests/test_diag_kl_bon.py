"""diag-kl-bon: exact best-of-N laws against closed forms and Monte Carlo, the KL bound, the tilt,
the evaluator, the pipeline and the claim at smoke scale."""

from __future__ import annotations

import numpy as np
import pytest
from quadriga_diagnostics.claims_part2 import kl_bon_equivalence
from quadriga_diagnostics.kl_bon import KLBestOfN, bon_law, kl_bon_row, kl_levels, reward_law, tilt_for_kl
from scipy.stats import binom

import quadriga.api
from quadriga.claims import evaluate_claim
from quadriga.errors import ConfigError
from quadriga.registry import Registry


def test_reward_law_is_binomial_for_binary_rewards():
    pmf = reward_law([0.7, 0.3], [0, 1], 20)
    assert np.allclose(pmf, binom.pmf(np.arange(21), 20, 0.3), atol=1e-15)
    with pytest.raises(ConfigError):
        reward_law([0.5, 0.5], [0, 1.5], 3)


def test_bon_law_closed_form_and_monte_carlo():
    # one binary token: P(best of N has reward 1) = 1 - 0.7^N
    assert bon_law(np.array([0.7, 0.3]), 5)[1] == pytest.approx(1 - 0.7**5, rel=1e-14)
    pmf = reward_law([0.5, 0.3, 0.2], [0, 1, 2], 6)
    law = bon_law(pmf, 4)
    rng = np.random.default_rng(0)
    draws = rng.choice(len(pmf), p=pmf / pmf.sum(), size=(200_000, 4)).max(axis=1)
    freq = np.bincount(draws, minlength=len(pmf)) / len(draws)
    assert np.max(np.abs(freq - law)) < 0.005
    assert law.sum() == pytest.approx(1.0, abs=1e-12)
    # huge N: all mass at the top level, still a law
    top = bon_law(pmf, np.exp(200.0))
    assert top[-1] == pytest.approx(1.0) and top.sum() == pytest.approx(1.0)


def test_kl_bound_and_tilt():
    row = kl_bon_row([0.5, 0.3, 0.2], [0, 1, 2], 64, 0.1)
    assert row["kl_bon"] <= row["bound"] + 1e-12
    p, w = np.array([0.5, 0.3, 0.2]), np.array([0.0, 1.0, 2.0])
    beta = tilt_for_kl(p, w, 10, 0.5)
    pb = p * np.exp(beta * w)
    pb /= pb.sum()
    assert 10 * kl_levels(pb, p) == pytest.approx(0.5, rel=1e-10)
    assert kl_levels(np.array([0.5, 0.5]), np.array([0.5, 0.5])) == 0.0


def test_evaluator_converges_with_length():
    v = KLBestOfN(lengths=[8, 128]).evaluate().values
    assert abs(1 - v["reward_ratio/128"]) < abs(1 - v["reward_ratio/8"])
    assert v["relative_kl/128"] < v["relative_kl/8"]
    with pytest.raises(ConfigError):
        KLBestOfN(token_probs=[0.5, 0.5], token_rewards=[0, 1, 2])


def test_pipeline_runs(tmp_path):
    res = quadriga.api.run("diag-kl-bon", overrides=["stage.bon.lengths=[8, 16]"], out=tmp_path / "run")
    assert "bon[kl_rate=0.2]" in res.artifacts


def test_kl_bon_claim_smoke(tmp_path):
    obs = kl_bon_equivalence.observations("smoke", tmp_path, Registry(use_env=False))
    assert 0 < obs.numbers["worst_at_largest_length"] < 0.2  # L = 64 at smoke scale
    assert evaluate_claim(kl_bon_equivalence, obs, "smoke")["status"] == "ran"
