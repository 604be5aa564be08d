"""The numpy core: leverage scores, capped probabilities, the tree, pivotal sampling, weighted LS."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.polynomial.legendre import legvander
from quadriga_pivotal_leverage.pivotal import (
    bernoulli_sample,
    inclusion_probabilities,
    leverage_scores,
    pivotal_sample,
    tree_order,
    weighted_least_squares,
)
from scipy import stats


def test_leverage_scores_of_orthonormal_and_known_designs():
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((50, 4)))
    np.testing.assert_allclose(leverage_scores(q), (q**2).sum(axis=1), atol=1e-12)
    # invariant under A -> A R for invertible R (the column span is what matters)
    r = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    np.testing.assert_allclose(leverage_scores(q @ r), (q**2).sum(axis=1), atol=1e-10)
    # [I_d; 0] has scores 1 on the first d rows, 0 elsewhere; a constant column has 1/n
    np.testing.assert_allclose(
        leverage_scores(np.vstack([np.eye(3), np.zeros((5, 3))])), [1, 1, 1, 0, 0, 0, 0, 0]
    )
    np.testing.assert_allclose(leverage_scores(np.ones((8, 1))), np.full(8, 1 / 8))
    # rank-deficient: a duplicated column does not count twice
    a = rng.standard_normal((30, 3))
    assert leverage_scores(np.hstack([a, a[:, :1]])).sum() == pytest.approx(3.0)


def test_inclusion_probabilities_cap_and_sum():
    tau = np.array([5.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    p = inclusion_probabilities(tau, 3)
    assert p.sum() == pytest.approx(3.0)
    assert p[0] == 1.0  # 5/10 * 3 = 1.5 is capped
    np.testing.assert_allclose(p[1:], 2.0 / 5.0)  # the rest share the remaining budget of 2
    with pytest.raises(ValueError, match="budget"):
        inclusion_probabilities(np.array([1.0, 0.0, 2.0]), 3)


def test_tree_order_is_a_layout_and_sorts_a_line():
    rng = np.random.default_rng(1)
    x = rng.permutation(np.linspace(0, 1, 16))
    order = tree_order(x)
    np.testing.assert_array_equal(x[order], np.sort(x))  # 2^4 points: the k-d tree is the sorted line
    pts = rng.standard_normal((37, 3))
    for kind in ("kd", "pca"):
        layout = tree_order(pts, kind)
        assert layout.size == 64
        np.testing.assert_array_equal(np.sort(layout[layout >= 0]), np.arange(37))


def _draws(p, order, num, seed):
    rng = np.random.default_rng(seed)
    counts = np.zeros(p.size)
    sizes = []
    for _ in range(num):
        s = pivotal_sample(p, order, rng)
        counts[s] += 1
        sizes.append(s.size)
    return counts / num, np.array(sizes)


def test_pivotal_marginals_equal_the_requested_probabilities_and_size_is_exact():
    # leverage marginals of a degree-7 Legendre design on 100 points, budget 20 (some capped)
    x = np.linspace(-1, 1, 100)
    p = inclusion_probabilities(leverage_scores(legvander(x, 7)), 20)
    assert (p == 1.0).any()
    num = 6000
    freq, sizes = _draws(p, tree_order(x), num, seed=2)
    assert (sizes == 20).all()
    inner = (p > 0) & (p < 1)
    z = (freq[inner] - p[inner]) / np.sqrt(p[inner] * (1 - p[inner]) / num)
    # Bonferroni over the rows at family level 0.001
    assert np.abs(z).max() < stats.norm.isf(0.0005 / inner.sum())
    assert (freq[p == 1.0] == 1.0).all()


def test_pivotal_marginals_with_a_non_integer_sum():
    rng = np.random.default_rng(3)
    p = rng.uniform(0.05, 0.6, size=45)  # sum is not an integer
    num = 6000
    pts = rng.standard_normal((45, 2))
    freq, sizes = _draws(p, tree_order(pts, "pca"), num, seed=4)
    assert set(np.unique(sizes)) <= {int(np.floor(p.sum())), int(np.ceil(p.sum()))}
    assert sizes.mean() == pytest.approx(p.sum(), abs=4 * 0.5 / np.sqrt(num))
    z = (freq - p) / np.sqrt(p * (1 - p) / num)
    assert np.abs(z).max() < stats.norm.isf(0.0005 / p.size)


def test_pivotal_siblings_with_half_probabilities_split_exactly_one_each():
    # p = 1/2 on 32 sorted points: each pair of tree siblings holds exactly one selected point
    order = tree_order(np.arange(32.0))
    rng = np.random.default_rng(5)
    for _ in range(200):
        chosen = np.zeros(32, dtype=int)
        chosen[pivotal_sample(np.full(32, 0.5), order, rng)] = 1
        np.testing.assert_array_equal(chosen[order].reshape(16, 2).sum(axis=1), 1)


def test_bernoulli_marginals_and_random_size():
    p = np.linspace(0.05, 0.95, 40)
    rng = np.random.default_rng(6)
    sizes = np.array([bernoulli_sample(p, rng).size for _ in range(4000)])
    var = (p * (1 - p)).sum()
    assert sizes.mean() == pytest.approx(p.sum(), abs=4 * np.sqrt(var / 4000))
    assert sizes.var() == pytest.approx(var, rel=0.1)


def test_weighted_least_squares_with_all_points_and_equal_weights_is_ordinary_least_squares():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((60, 5))
    b = rng.standard_normal(60)
    ols = np.linalg.lstsq(a, b, rcond=None)[0]
    for w in (np.ones(60), np.full(60, 3.7)):
        coef, rank = weighted_least_squares(a, b, w)
        assert rank == 5
        np.testing.assert_allclose(coef, ols, atol=1e-12)
    # weights w equal OLS on rows scaled by sqrt(w) (the normal equations A^T W A x = A^T W b)
    w = rng.uniform(0.5, 2.0, 60)
    coef, _ = weighted_least_squares(a, b, w)
    np.testing.assert_allclose(coef, np.linalg.solve(a.T @ (w[:, None] * a), a.T @ (w * b)), atol=1e-10)
