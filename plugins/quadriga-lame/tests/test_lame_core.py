"""LAME's fixed point, affinities and the TENT / pseudo-labelling baselines against closed forms."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from quadriga_lame.baselines import PseudoLabel, Tent, adaptable_copy, entropy_loss, pseudo_label_loss
from quadriga_lame.lame import LAME, affinity_matrix, lame_energy, laplacian_optimization
from quadriga_std.shift.classifier import build_net
from sklearn.neighbors import NearestNeighbors

from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError


def _simplex(n: int, c: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, c, generator=g, dtype=torch.float64).softmax(-1)


def test_no_affinity_returns_the_model_probabilities():
    p = _simplex(7, 4, 0)
    z, _ = laplacian_optimization(p, torch.zeros(7, 7, dtype=torch.float64))
    torch.testing.assert_close(z, p)


def test_the_result_is_the_fixed_point_of_the_update():
    p = _simplex(30, 5, 1)
    f = torch.nn.functional.normalize(torch.randn(30, 8, generator=torch.Generator().manual_seed(2)), dim=-1)
    W = affinity_matrix(f.double(), "knn", 3)
    z, steps = laplacian_optimization(p, W, max_steps=500, tol=1e-14)
    assert steps < 500
    torch.testing.assert_close(z, (p.log() + W @ z).softmax(-1), atol=1e-6, rtol=0)


def test_energy_never_increases_for_a_psd_affinity():
    # W = 0.3 f f' with f >= 0 is symmetric, non-negative and PSD: the concave-convex bound holds
    p = _simplex(20, 3, 3)
    f = torch.rand(20, 4, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    W = 0.3 * f @ f.T
    log_p, z, energies = p.log(), p, []
    for _ in range(30):
        z = (log_p + W @ z).softmax(-1)
        energies.append(lame_energy(z, log_p, W))
    assert all(b <= a + 1e-9 for a, b in itertools.pairwise(energies))


def test_knn_affinity_matches_scikit_learn_neighbours():
    X = torch.randn(25, 6, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    W = affinity_matrix(X, "knn", 4)
    _, idx = NearestNeighbors(n_neighbors=5).fit(X.numpy()).kneighbors(X.numpy())
    want = np.zeros((25, 25))
    for i, row in enumerate(idx):
        want[i, [j for j in row if j != i][:4]] = 1.0
    np.testing.assert_array_equal(W.numpy(), want)
    assert torch.all(W.diagonal() == 0)
    assert affinity_matrix(X[:1], "knn", 4).sum() == 0  # a batch of one has no neighbour
    rbf = affinity_matrix(X, "rbf", 4)
    assert torch.all((rbf > 0) == (W > 0)) and rbf.max() <= 1.0


def test_laplacian_corrects_noisy_predictions_in_clustered_batches():
    # two well-separated feature clusters (one class each); the model is right on 70 % of rows
    rng = np.random.default_rng(6)
    y = np.repeat([0, 1], 32)
    f = torch.tensor(np.c_[y * 10.0, 1 - y * 1.0] + 0.1 * rng.standard_normal((64, 2)))
    wrong = rng.random(64) < 0.3
    p = torch.full((64, 2), 0.2, dtype=torch.float64)
    p[np.arange(64), np.where(wrong, 1 - y, y)] = 0.8
    z, _ = laplacian_optimization(p, affinity_matrix(torch.nn.functional.normalize(f, dim=-1), "knn", 5))
    assert (z.argmax(-1).numpy() == y).mean() > 0.95 > (p.argmax(-1).numpy() == y).mean()


def _fitted(seed: int = 0) -> Fitted:
    torch.manual_seed(seed)
    net = build_net(6, [16, 8], 3)
    # give BatchNorm non-trivial running statistics
    net.train()
    with torch.no_grad():
        for _ in range(5):
            net(torch.randn(32, 6) * 2 + 1)
    net.eval()
    return Fitted(model=net, info={"classes": [0, 1, 2]})


def test_entropy_and_pseudo_label_losses_closed_forms():
    assert float(entropy_loss(torch.zeros(4, 5))) == pytest.approx(math.log(5))
    logits = torch.tensor([[math.log(9.0), 0.0], [0.0, 0.0]])  # p = (0.9, 0.1) and (0.5, 0.5)
    assert float(pseudo_label_loss(logits, 0.85)) == pytest.approx(-math.log(0.9))
    assert float(pseudo_label_loss(logits, 0.95)) == 0.0


def test_adaptable_copy_frees_only_batchnorm_affine_parameters():
    fitted = _fitted()
    model, params = adaptable_copy(fitted.model)
    free = {n for n, p in model.named_parameters() if p.requires_grad}
    assert free == {
        n for n, _ in model.named_parameters() if n.startswith("body.1.") or n.startswith("body.4.")
    }
    assert len(params) == 4 and model.body[1].running_mean is None


@pytest.mark.parametrize("cls", [Tent, PseudoLabel])
def test_baselines_leave_the_source_model_unchanged_and_restart_each_call(cls):
    fitted = _fitted()
    before = {k: v.clone() for k, v in fitted.model.state_dict().items()}
    adapted = cls(learning_rate=0.05).fit(None, fitted, generator=None, progress=None)
    X = np.random.default_rng(7).standard_normal((40, 6))
    batches = [slice(s, s + 8) for s in range(0, 40, 8)]
    first, second = adapted.predict(X, batches), adapted.predict(X, batches)
    np.testing.assert_allclose(first, second)
    np.testing.assert_allclose(first.sum(1), 1.0, atol=1e-6)
    for k, v in fitted.model.state_dict().items():
        torch.testing.assert_close(v, before[k])
    # the first batch is predicted before any update: batch statistics, source affine parameters
    model, _ = adaptable_copy(fitted.model)
    with torch.no_grad():
        want = model(torch.as_tensor(X[:8], dtype=torch.float32)).softmax(-1).double().numpy()
    np.testing.assert_allclose(first[:8], want, atol=1e-6)


def test_lame_predictor_and_bad_model():
    fitted = _fitted()
    lame = LAME(knn=3).fit(None, fitted, generator=None, progress=None)
    X = np.random.default_rng(8).standard_normal((20, 6))
    out = lame.predict(X, [slice(0, 1), slice(1, 20)])
    with torch.no_grad():
        p0 = fitted.model(torch.as_tensor(X[:1], dtype=torch.float32)).softmax(-1).double().numpy()
    np.testing.assert_allclose(out[:1], p0, atol=1e-6)  # a batch of one is left as it is
    np.testing.assert_allclose(out.sum(1), 1.0, atol=1e-9)
    with pytest.raises(ConfigError, match="features"):
        LAME().fit(
            None, Fitted(model=torch.nn.Linear(2, 2), info={"classes": [0, 1]}), generator=None, progress=None
        )
