"""Closed forms of Feasible Learning's updates (dual step, resilient slack, the first primal-dual step)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from quadriga_feasible_learning.feasible import (
    dual_step,
    epsilon_from_probability,
    loss_summary,
    make_mlp,
    minimal_slack,
    sample_losses,
)
from quadriga_feasible_learning.learners import ERM, FeasibleLearning

from quadriga.seeding import child_generator, make_generator


def test_dual_step_on_a_hand_made_loss_vector():
    lam = torch.tensor([0.0, 0.5, 1.0])
    losses = torch.tensor([0.2, 0.9, 0.1])
    # FL: [lam + 0.1 (l - 0.5)]_+ = [0 - 0.03, 0.5 + 0.04, 1 - 0.04]_+
    assert torch.allclose(dual_step(lam, losses, 0.5, 0.1), torch.tensor([0.0, 0.54, 0.96]))
    # RFL (alpha = 2): the gradient loses lam / alpha = [0, 0.25, 0.5]
    assert torch.allclose(dual_step(lam, losses, 0.5, 0.1, alpha=2.0), torch.tensor([0.0, 0.515, 0.91]))


def test_dual_step_refuses_bad_input():
    with pytest.raises(ValueError, match="differ"):
        dual_step(torch.zeros(2), torch.zeros(3), 0.5, 0.1)
    with pytest.raises(ValueError, match="lr and alpha"):
        dual_step(torch.zeros(2), torch.zeros(2), 0.5, 0.0)


def test_resilient_ascent_converges_to_the_minimal_norm_slack():
    """At fixed losses, lam_t - lam* = (1 - lr/alpha)^t (lam_0 - lam*) with lam* = alpha relu(l - eps)."""
    losses = torch.tensor([0.1, 0.6, 1.5, 3.0], dtype=torch.float64)
    eps, lr, alpha, steps = 0.5, 0.05, 2.0, 200
    u_star, lam_star = minimal_slack(losses, eps, alpha)
    assert torch.allclose(u_star, torch.tensor([0.0, 0.1, 1.0, 2.5], dtype=torch.float64))
    assert torch.allclose(lam_star, alpha * u_star)
    lam = torch.zeros(4, dtype=torch.float64)
    for _ in range(steps):
        lam = dual_step(lam, losses, eps, lr, alpha)
    expected = lam_star * (1 - (1 - lr / alpha) ** steps)
    assert torch.allclose(lam, expected, atol=1e-12)
    # and every constraint holds with the slack lam / alpha (minimal: equality where violated)
    assert torch.all(losses <= eps + lam_star / alpha + 1e-12)


def test_plain_fl_multipliers_grow_with_the_accumulated_violation():
    losses = torch.tensor([0.2, 1.0])
    lam = torch.zeros(2)
    for _ in range(10):
        lam = dual_step(lam, losses, 0.5, 0.1)
    assert torch.allclose(lam, torch.tensor([0.0, 10 * 0.1 * 0.5]))


def test_epsilon_and_loss_summary_closed_forms():
    assert epsilon_from_probability(0.6) == pytest.approx(0.5108256237659907)
    s = loss_summary(np.arange(1.0, 101.0), epsilon=50.0)
    assert s["max"] == 100.0 and s["mean"] == 50.5
    assert s["q99"] == pytest.approx(99.01) and s["q50"] == pytest.approx(50.5)
    assert s["cvar10"] == pytest.approx(95.5)  # mean of 91..100
    assert s["feasible_fraction"] == 0.5
    ce = sample_losses(torch.zeros(3, 4), torch.tensor([0, 1, 3]), "classification")
    assert torch.allclose(ce, torch.full((3,), math.log(4)))


def _blobs(array_dataset, n=40, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(size=(n, 2)) + 3.0 * y[:, None]
    return array_dataset({"train": (X, y), "test": (X, y)})


def test_eps_above_every_initial_loss_leaves_the_model_untouched(array_dataset, progress):
    """lam stays 0, the Lagrangian has zero gradient and Adam does not move the parameters."""
    data = _blobs(array_dataset)
    gen = make_generator(3)
    fit = FeasibleLearning(hidden_sizes=[8], num_epochs=5, batch_size=10, epsilon=50.0).fit(
        data, generator=gen, progress=progress
    )
    init = make_mlp(2, [8], 2, generator=child_generator(make_generator(3), "init"))
    assert torch.equal(fit.info["multipliers"], torch.zeros(40))
    for a, b in zip(fit.model.state_dict().values(), init.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert fit.history["multiplier_max"][-1] == 0.0


def test_one_sample_is_a_projected_dual_step_then_one_adam_step(array_dataset, progress):
    """n = 1, one epoch: lam = [eta (l(theta_0) - eps)]_+ and Adam's first step is -lr sign(grad)."""
    X, y = np.array([[0.3, -1.2]]), np.array([1])
    data = array_dataset({"train": (X, y)})
    eps, eta, lr = 0.1, 0.5, 0.01
    learner = FeasibleLearning(
        hidden_sizes=[4],
        num_epochs=1,
        epsilon=eps,
        dual_learning_rate=eta,
        learning_rate=lr,
        task_type="classification",
    )
    fit = learner.fit(data, generator=make_generator(7), progress=progress)
    # with task_type classification and one class seen, K = 2 needs y = 1 -> 2 logits
    init = make_mlp(2, [4], 2, generator=child_generator(make_generator(7), "init"))
    xt, yt = torch.tensor(X, dtype=torch.float32), torch.tensor(y)
    loss0 = sample_losses(init(xt), yt, "classification")
    lam = max(0.0, eta * (float(loss0.detach()) - eps))
    assert float(fit.info["multipliers"][0]) == pytest.approx(lam, rel=1e-6)
    (lam * loss0.sum()).backward()
    for p0, p1 in zip(init.parameters(), fit.model.parameters(), strict=True):
        g = p0.grad
        expected = p0.detach() - lr * g / (g.abs() + 1e-8)
        assert torch.allclose(p1.detach(), expected, atol=1e-6)


def test_fl_solves_a_separable_feasibility_problem(array_dataset, progress):
    """Fixed seed: on separated blobs FL reaches l_i <= log(1/0.6) for every training sample."""
    data = _blobs(array_dataset, n=60, seed=1)
    fit = FeasibleLearning(
        hidden_sizes=[16],
        num_epochs=150,
        epsilon=epsilon_from_probability(0.6),
        learning_rate=1e-2,
        dual_learning_rate=0.1,
    ).fit(data, generator=make_generator(0), progress=progress)
    assert fit.history["feasible_fraction"][-1] == 1.0
    assert fit.history["train_max_loss"][-1] <= epsilon_from_probability(0.6)


def test_erm_and_fl_share_initialisation_and_budget(array_dataset, progress):
    data = _blobs(array_dataset)
    fl = FeasibleLearning(hidden_sizes=[8], num_epochs=4, batch_size=16, epsilon=50.0).fit(
        data, generator=make_generator(5), progress=progress
    )
    erm = ERM(hidden_sizes=[8], num_epochs=4, batch_size=16).fit(
        data, generator=make_generator(5), progress=progress
    )
    assert fl.info["updates"] == erm.info["updates"] == 4 * 3
    # FL did not move (eps too high), so its weights are ERM's starting point: ERM moved away from it
    moved = [
        not torch.equal(a, b) for a, b in zip(fl.model.parameters(), erm.model.parameters(), strict=True)
    ]
    assert all(moved)


def test_resilient_fl_on_breast_cancer_reports_minimal_norm_slacks(progress):
    """RFL on breast_cancer (569 rows, binary labels detected as classes): u_i = lam_i / alpha."""
    from quadriga_std.tasks.datasets import SklearnDataset

    data = SklearnDataset(name="breast_cancer", train=0.5, calibration=0.1, test=0.4)
    data.prepare(generator=make_generator(0))
    fit = FeasibleLearning(hidden_sizes=[8], num_epochs=3, batch_size=64, resilient=True, alpha=2.0).fit(
        data, generator=make_generator(1), progress=progress
    )
    assert fit.info["task_type"] == "classification" and fit.model[-1].out_features == 2
    assert fit.info["resilient"] is True
    assert torch.equal(fit.info["slacks"], fit.info["multipliers"] / 2.0)
    assert fit.info["multipliers"].shape == (284,) and float(fit.info["multipliers"].max()) > 0
