"""The data-attribution kit: closed forms, reference answers and the cache's resume."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
import torch
from quadriga_std.attribution import (
    LDS,
    AttributionTask,
    InfluenceFunctions,
    RemovalEffect,
    TracIn,
    influence_scores,
    lds_scores,
    load_or_build_zoo,
    predicted_margins,
    random_masks,
    top_k_weights,
    tracin_scores,
)
from quadriga_std.attribution.training import TrainingMap

from quadriga.seeding import make_generator
from quadriga.testing import parametrize_with_checks, plugin_cases
from quadriga.threads import single_thread


@pytest.fixture(autouse=True)
def _one_thread():
    """Small tensor work: one intra-op thread (many threads only contend on a shared machine)."""
    with single_thread():
        yield


ATTRIBUTION = {
    ("dataset", "attribution-task"),
    ("estimator", "influence-function"),
    ("estimator", "tracin"),
    ("evaluator", "lds"),
    ("evaluator", "removal-effect"),
}


@parametrize_with_checks([c for c in plugin_cases("quadriga-std") if (c.kind, c.name) in ATTRIBUTION])
def test_conformance(case, check):
    check(case)


class _Ridge:
    """Ridge least squares as a training map: sum_i w_i (x_i^T theta - y_i)^2 / 2 + lam/2 |theta|^2."""

    def __init__(self, X, y, lam):
        self.X, self.y, self.lam = X, y, lam
        self.n = X.shape[0]

    def objective(self, theta, w):
        r = self.X @ theta - self.y
        return 0.5 * (w * r * r).sum() + 0.5 * self.lam * (theta * theta).sum()

    def margins(self, theta, X, y):
        return X @ theta

    def train(self, w):
        H = self.X.T @ (w[:, None] * self.X) + self.lam * torch.eye(self.X.shape[1], dtype=torch.float64)
        return torch.linalg.solve(H, self.X.T @ (w * self.y))


def test_influence_times_sherman_morrison_factor_is_exact_leave_one_out():
    """Ridge: the exact LOO change of a prediction is IF's removal effect / (1 - h_ii) (Sherman-Morrison)."""
    g = torch.Generator().manual_seed(0)
    X = torch.randn(25, 4, generator=g, dtype=torch.float64)
    y = X @ torch.tensor([1.0, -2.0, 0.5, 0.0], dtype=torch.float64) + torch.randn(
        25, generator=g, dtype=torch.float64
    )
    Xt = torch.randn(3, 4, generator=g, dtype=torch.float64)
    ridge = _Ridge(X, y, lam=0.7)
    (tau,) = influence_scores(ridge, Xt, None)
    theta = ridge.train(torch.ones(25, dtype=torch.float64))
    H = X.T @ X + 0.7 * torch.eye(4, dtype=torch.float64)
    h = torch.einsum("ij,jk,ik->i", X, torch.linalg.inv(H), X)
    for i in range(25):
        w = torch.ones(25, dtype=torch.float64)
        w[i] = 0
        exact = Xt @ ridge.train(w) - Xt @ theta
        np.testing.assert_allclose((-tau[i] / (1 - h[i])).numpy(), exact.numpy(), rtol=1e-9, atol=1e-12)
    # and IF alone is the first-order term: off by exactly the factor 1 - h_ii
    assert float(h.max()) > 0.05


def _tiny_map(steps=400, n=40, hidden=()):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = (X[: n + 5, :5] - X[: n + 5, :5].mean(0)) / X[: n + 5, :5].std(0)
    X, y = torch.as_tensor(X), torch.as_tensor(y[: n + 5])
    tmap = TrainingMap(X[:n], y[:n], 2, hidden=hidden, steps=steps, lr=1.0, weight_decay=0.2)
    return tmap, X[n:], y[n:]


def test_influence_matches_finite_differences_of_the_converged_training_map():
    """Logistic regression trained to convergence: IF = d margin / d w_i (central differences, h = 1e-4)."""
    tmap, Xt, yt = _tiny_map()
    (tau,) = influence_scores(tmap, Xt, yt)
    h = 1e-4
    for i in (0, 7, 33):
        up, down = torch.ones(tmap.n, dtype=torch.float64), torch.ones(tmap.n, dtype=torch.float64)
        up[i] += h
        down[i] -= h
        with torch.no_grad():
            fd = (tmap.margins(tmap.train(up), Xt, yt) - tmap.margins(tmap.train(down), Xt, yt)) / (2 * h)
        np.testing.assert_allclose(tau[i].numpy(), fd.numpy(), rtol=1e-4, atol=1e-7)


def test_tracin_is_the_one_step_metagradient_up_to_a_constant():
    """One GD step of a binary linear model (grad f constant in theta): d f(theta_1) / dw_i = TracIn_i +
    lr <grad f, mean grad l> / n, the same constant for every i."""
    tmap, Xt, yt = _tiny_map(steps=1)  # linear binary model: grad f is the same at every theta
    tau = tracin_scores(tmap, Xt, yt, every=1)
    h = 1e-5
    exact = []
    for i in range(tmap.n):
        up, down = torch.ones(tmap.n, dtype=torch.float64), torch.ones(tmap.n, dtype=torch.float64)
        up[i] += h
        down[i] -= h
        exact.append(
            (tmap.margins(tmap.train(up), Xt, yt) - tmap.margins(tmap.train(down), Xt, yt)) / (2 * h)
        )
    diff = torch.stack(exact) - tau  # [n, k]
    np.testing.assert_allclose(diff.numpy(), np.broadcast_to(diff[0].numpy(), diff.shape), atol=1e-8)
    assert float(tau.abs().max()) > 1e-4


def test_lds_is_one_for_the_true_linear_model_and_matches_scipy():
    rng = np.random.default_rng(0)
    masks = random_masks(50, 30, 0.5, rng)
    theta = rng.normal(size=(50, 4))
    actual = predicted_margins(theta, masks) + 3.0
    np.testing.assert_allclose(lds_scores(predicted_margins(theta, masks), actual), 1.0)
    np.testing.assert_allclose(lds_scores(predicted_margins(theta, masks), np.exp(actual)), 1.0)  # ranks only
    np.testing.assert_allclose(lds_scores(predicted_margins(-theta, masks), actual), -1.0)
    noisy = actual + rng.normal(size=actual.shape)
    pred = predicted_margins(theta, masks)
    ref = [scipy.stats.spearmanr(pred[:, t], noisy[:, t]).statistic for t in range(4)]
    np.testing.assert_allclose(lds_scores(pred, noisy), ref, rtol=1e-12)
    assert masks.sum(1).tolist() == [25] * 30
    # a constant prediction ranks nothing (0); constant ground truth leaves the LDS undefined (NaN)
    got = lds_scores(np.zeros((30, 2)), np.c_[actual[:, 0], np.ones(30)])
    assert got[0] == 0.0 and np.isnan(got[1])


def test_zoo_is_cached_and_resumes_after_an_interruption(tmp_path):
    calls = []

    def retrain(w):
        calls.append(len(w))
        if len(calls) == 2 and not getattr(retrain, "resumed", False):
            raise KeyboardInterrupt
        return w @ np.arange(10.0)[:, None]

    ident = {"what": "linear"}
    kw = dict(n=10, m=7, alpha=0.3, seed=1, retrain=retrain, cache_dir=tmp_path, chunk=3)
    with pytest.raises(KeyboardInterrupt):
        load_or_build_zoo(ident, **kw)
    retrain.resumed = True
    zoo = load_or_build_zoo(ident, **kw)
    assert calls == [3, 3, 3, 1]  # the first chunk was kept, the interrupted one redone
    np.testing.assert_allclose(zoo.margins[:, 0], zoo.masks @ np.arange(10.0))
    calls.clear()
    again = load_or_build_zoo(ident, **kw)
    assert calls == [] and np.array_equal(again.margins, zoo.margins)


def _task(**kw):
    task = AttributionTask(num_train=60, num_targets=6, steps=100, cache_dir="", **kw)
    task.prepare(generator=make_generator(0))
    return task


def test_zoo_margins_are_retrained_models():
    task = _task()
    zoo = task.zoo(0.5, 3, seed=4)
    np.testing.assert_allclose(zoo.margins, task.retrain(zoo.masks.astype(float)), atol=1e-10)
    np.testing.assert_allclose(task.full_margins(), task.retrain(np.ones((1, 60)))[0])


def test_influence_beats_random_removal_and_tracks_retraining():
    """Logistic regression: IF's LDS at alpha = 0.9 is high and its top-10 removals cut margins far more."""
    task = _task()
    g = make_generator(1)
    est = InfluenceFunctions().estimate(task, generator=g)
    m = LDS(alpha=0.9, num_subsets=40).evaluate({"if": est}, task, generator=g)
    assert m.values["if/lds"] > 0.7, m.values
    r = RemovalEffect(k=10).evaluate({"if": est}, task, generator=g)
    assert r.values["if/drop"] > 3 * max(r.values["random/drop"], 0.01), r.values
    tr = TracIn().estimate(task, generator=g)
    assert tuple(tr.value.shape) == (60, 6)


def test_top_k_weights_remove_the_largest_scores():
    tau = np.array([[0.1, 5.0], [3.0, -1.0], [2.0, 4.0], [-1.0, 0.0]])
    w = top_k_weights(tau, 2)
    np.testing.assert_array_equal(w, [[1, 0, 0, 1], [0, 1, 0, 1]])
