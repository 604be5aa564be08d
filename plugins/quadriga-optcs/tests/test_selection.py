"""The selection arithmetic against closed forms, scipy, a literal port of the official loop, and
statistical bounds (fixed seeds; every bound is 3-4 standard errors wide)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from quadriga_optcs.selection import (
    benjamini_hochberg,
    bh_size,
    clipped_scores,
    conformal_pvalues,
    e_benjamini_hochberg,
    optcs_msel,
    optcs_selection,
)
from scipy import stats


def test_bh_on_hand_made_pvalues():
    # m = 5, q = 0.1: BH lines 0.02, 0.04, 0.06, 0.08, 0.10; p_(4) = 0.04 <= 0.08 is the last crossing
    p = np.array([0.5, 0.01, 0.04, 0.02, 0.03])
    assert bh_size(p, 0.1) == 4
    assert benjamini_hochberg(p, 0.1).tolist() == [False, True, True, True, True]
    # step-up, not step-down: p_(2) = 0.06 > 0.05 but p_(3) = 0.07 <= 0.075 rescues it
    p = np.array([0.001, 0.06, 0.07, 0.9])
    assert benjamini_hochberg(p, 0.1).tolist() == [True, True, True, False]
    assert not benjamini_hochberg(np.array([0.2, 0.3]), 0.1).any()


def test_bh_agrees_with_scipy():
    rng = np.random.default_rng(0)
    for trial in range(50):
        m = int(rng.integers(1, 200))
        p = np.concatenate([rng.uniform(size=m // 2), rng.beta(0.1, 5, size=m - m // 2)])
        q = float(rng.uniform(0.01, 0.5))
        ref = stats.false_discovery_control(p, method="bh") <= q
        assert (benjamini_hochberg(p, q) == ref).all(), trial
    rows = rng.uniform(size=(7, 30)) ** 3
    assert bh_size(rows, 0.2).tolist() == [int(benjamini_hochberg(r, 0.2).sum()) for r in rows]


def test_ebh_is_bh_on_reciprocals():
    # e = (40, 10, 0, 5), m = 4, q = 0.1: e_(k) >= 40 / k holds for k = 1 only
    assert e_benjamini_hochberg(np.array([40.0, 10.0, 0.0, 5.0]), 0.1).tolist() == [True, False, False, False]
    rng = np.random.default_rng(1)
    e = rng.exponential(size=40) * rng.integers(0, 2, 40) * 30
    with np.errstate(divide="ignore"):
        assert (e_benjamini_hochberg(e, 0.2) == benjamini_hochberg(np.where(e > 0, 1 / e, np.inf), 0.2)).all()


def test_conformal_pvalue_closed_form_and_ties():
    v = np.array([0.0, 1.0, 1.0, 2.0])
    # Vhat = 1: 1 score below, 2 tied -> (1 + U (1 + 2)) / 5
    assert conformal_pvalues(v, np.array([1.0]), np.array([0.5]))[0] == pytest.approx((1 + 1.5) / 5)
    assert conformal_pvalues(v, np.array([1.0]))[0] == pytest.approx(4 / 5)  # U = 1: (1 + #<=) / (n+1)
    vc, vt = clipped_scores(np.array([3.0, -1.0]), np.array([5.0, -2.0]), np.array([0.5]), threshold=0.0)
    assert vc.tolist() == [math.inf, 1.0] and vt.tolist() == [-0.5]


def test_randomised_pvalues_are_uniform_and_null_pvalues_super_uniform():
    # Exchangeable scores: the randomised p-value is exactly U(0, 1) (KS test, one p per draw).
    rng = np.random.default_rng(2)
    draws, n = 4000, 19
    scores = np.round(rng.standard_normal((draws, n + 1)), 1)  # ties on purpose
    p = np.array([conformal_pvalues(s[:n], s[n:], rng.uniform(size=1))[0] for s in scores])
    assert stats.kstest(p, "uniform").pvalue > 0.01
    # Clipped scores on regression data: P(p_j <= t, H_j true) <= t for every t (deterministic p).
    X = rng.uniform(-1, 1, size=(draws, n + 1))
    Y = X + rng.standard_normal((draws, n + 1))
    mu = 0.8 * X  # any fixed predictor
    pj, null = np.empty(draws), np.empty(draws, bool)
    for d in range(draws):
        vc, vt = clipped_scores(mu[d, :n], Y[d, :n], mu[d, n:], threshold=0.5)
        pj[d] = conformal_pvalues(vc, vt)[0]
        null[d] = Y[d, n] <= 0.5
    for t in np.arange(1, n + 1) / (n + 1):
        freq = np.mean((pj <= t + 1e-12) & null)
        assert freq <= t + 3 * math.sqrt(t * (1 - t) / draws), t


def _optcs_loop(vc, vt, q):
    """A literal port of the official OptCS loop (sizes R_j^k)."""
    K, m = vt.shape
    n = vc.shape[1]
    sizes = np.zeros((K, m), int)
    for j in range(m):
        for k in range(K):
            aux = np.zeros(m)
            for other in range(m):
                if other != j:
                    aux[other] = (np.sum(vc[k] <= vt[k, other]) + (vt[k, j] <= vt[k, other])) / (n + 1)
            sizes[k, j] = int(benjamini_hochberg(aux, q).sum())
    return sizes


def test_optcs_msel_matches_the_official_loop():
    rng = np.random.default_rng(3)
    K, n, m = 3, 30, 12
    vc = rng.standard_normal((K, n)) - 1.0
    vc[:, : n // 3] = np.inf  # alternatives in the calibration set
    vt = rng.standard_normal((K, m))
    sizes = _optcs_loop(vc, vt, 0.3)
    p, best, chosen = optcs_msel(vc, vt, 0.3, np.random.default_rng(0))
    assert (best == sizes.max(axis=0)).all() and (best >= 1).all()
    assert (sizes[chosen, np.arange(m)] == best).all()
    expect = [(1 + np.sum(vc[k] < vt[k, j])) / (n + 1) for j, k in enumerate(chosen)]
    assert p == pytest.approx(expect)


def test_single_candidate_gives_plain_conformal_pvalues():
    rng = np.random.default_rng(4)
    vc, vt = rng.standard_normal((1, 50)), rng.standard_normal((1, 20))
    p, _, chosen = optcs_msel(vc, vt, 0.2, rng)
    assert (chosen == 0).all() and p == pytest.approx(conformal_pvalues(vc[0], vt[0]))


def test_optcs_global_null_fdr_and_super_uniformity():
    # Global null (every label <= c): FDR = P(R != {}) <= q, and each p_j is super-uniform although
    # the candidate was chosen on the same data. The naive min over candidates is not.
    rng = np.random.default_rng(5)
    draws, K, n, m, q = 1500, 4, 40, 10, 0.2
    any_sel, p0, naive0 = 0, [], []
    cov = 0.3 * np.ones((K, K)) + 0.7 * np.eye(K)
    for _ in range(draws):
        s = rng.multivariate_normal(np.zeros(K), cov, size=n + m).T  # exchangeable units
        vc, vt = s[:, :n], s[:, n:]
        p, sizes, _ = optcs_msel(vc, vt, q, rng)
        any_sel += optcs_selection(p, sizes, q, "homogeneous", rng).any()
        p0.append(p[0])
        naive0.append(min(conformal_pvalues(vc[k], vt[k, :1])[0] for k in range(K)))
    se = math.sqrt(q * (1 - q) / draws)
    assert any_sel / draws <= q + 3 * se
    p0, naive0 = np.array(p0), np.array(naive0)
    for t in (0.05, 0.1, 0.2, 0.5):
        assert np.mean(p0 <= t) <= t + 3 * math.sqrt(t * (1 - t) / draws), t
    assert np.mean(naive0 <= 0.1) > 0.1 + 4 * math.sqrt(0.09 / draws)  # the correction matters


def test_selection_is_empty_as_q_goes_to_zero():
    rng = np.random.default_rng(6)
    vc, vt = rng.standard_normal((2, 100)) + 3, rng.standard_normal((2, 30))
    p, sizes, _ = optcs_msel(vc, vt, 1e-6, rng)
    for pruning in ("deterministic", "heterogeneous", "homogeneous"):
        assert not optcs_selection(p, sizes, 1e-6, pruning, rng).any()
    assert not benjamini_hochberg(conformal_pvalues(vc[0], vt[0]), 1e-6).any()
    with pytest.raises(ValueError, match="unknown pruning"):
        optcs_selection(p, sizes, 0.1, "greedy", rng)
