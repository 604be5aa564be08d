"""quadriga-magic: metagradients against finite differences and influence functions, metasmoothness
closed forms, the conformance checks and the smoke-scale claims."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_magic import claims
from quadriga_magic.magic import metagradients, metasmoothness, metasmoothness_score
from quadriga_std.attribution import influence_scores
from quadriga_std.attribution.training import TrainingMap

from quadriga.testing import parametrize_with_checks, plugin_cases
from quadriga.threads import single_thread


@pytest.fixture(autouse=True)
def _one_thread():
    """Small tensor work: one intra-op thread."""
    with single_thread():
        yield


@parametrize_with_checks(plugin_cases("quadriga-magic"))
def test_conformance(case, check):
    check(case)


def _map(hidden=(4,), steps=15, n=20, weight_decay=1e-3):
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(y))[: n + 3]
    X, y = torch.as_tensor(X[idx]), torch.as_tensor(y[idx])
    tmap = TrainingMap(X[:n], y[:n], 3, hidden=hidden, steps=steps, lr=0.5, weight_decay=weight_decay)
    return tmap, X[n:], y[n:]


def test_metagradients_match_central_differences_of_the_training_run():
    """Non-convex MLP, 15 GD steps: tau_i = d f(theta_T(w)) / d w_i (central differences, h = 1e-5)."""
    tmap, Xt, yt = _map()
    tau = metagradients(tmap, Xt, yt)
    h = 1e-5
    for i in (0, 9, 19):
        up, down = torch.ones(tmap.n, dtype=torch.float64), torch.ones(tmap.n, dtype=torch.float64)
        up[i] += h
        down[i] -= h
        fd = (tmap.margins(tmap.train(up), Xt, yt) - tmap.margins(tmap.train(down), Xt, yt)) / (2 * h)
        np.testing.assert_allclose(tau[i].numpy(), fd.numpy(), rtol=1e-5, atol=1e-9)


def test_metagradients_of_a_converged_convex_run_are_influence_functions():
    """Logistic regression run to convergence: the implicit function theorem gives IF exactly."""
    tmap, Xt, yt = _map(hidden=(), steps=300, weight_decay=0.3)
    (influence,) = influence_scores(tmap, Xt, yt)
    np.testing.assert_allclose(metagradients(tmap, Xt, yt).numpy(), influence.numpy(), rtol=1e-6, atol=1e-10)


def test_metasmoothness_score_closed_forms():
    a = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    zero = torch.zeros(3, dtype=torch.float64)
    assert metasmoothness_score(zero, a, 2 * a) == pytest.approx(1.0)  # linear in w
    assert metasmoothness_score(zero, a, 0.5 * a) == pytest.approx(-1.0)  # every coordinate turns back
    # one coordinate of three (weight |d| = 1 of 1 + 2 + 0.5 ... ) turns back
    back = torch.tensor([2.0, -4.0, 0.25], dtype=torch.float64)
    d = (back - zero).abs()
    assert metasmoothness_score(zero, a, back) == pytest.approx(float((d[0] + d[1] - d[2]) / d.sum()))


def test_a_smooth_small_step_map_is_metasmooth():
    tmap, _, _ = _map()
    assert metasmoothness(tmap, 0.01, seed=0) > 0.99


def test_smoke_claims_give_numbers(tmp_path):
    """Smoke scale (60 training points, 4 targets): numbers, not verdicts."""
    obs = claims.run_observations(claims._SMOKE, tmp_path)
    assert all(len(v) == 4 for v in obs.values.values())
    assert obs.numbers["metasmoothness"] > 0.9
    assert np.all(np.isfinite(obs.values["magic"]))
    assert obs.numbers["magic/training_runs"] > 1.0
