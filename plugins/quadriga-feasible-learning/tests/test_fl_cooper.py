"""Cross-check of the in-plugin updates against cooper-optim (run only where cooper-optim is installed).

cooper's ``AlternatingDualPrimalOptimizer`` with an ``IndexedMultiplier`` per sample, plain SGD ascent
on the multipliers (``maximize=True``, then projection onto lam >= 0) and Adam on the model is the
official code's FL solver; the ``feasible-learning`` learner must produce the same multipliers and
parameters step by step.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_feasible_learning.feasible import make_mlp, sample_losses
from quadriga_feasible_learning.learners import FeasibleLearning

from quadriga.seeding import child_generator, make_generator

cooper = pytest.importorskip("cooper")


def test_fl_matches_cooper_alternating_dual_primal(array_dataset, progress):
    rng = np.random.default_rng(0)
    n, epochs, batch, eps, eta, lr = 24, 3, 8, 0.3, 0.5, 1e-2
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    data = array_dataset({"train": (X, y)})
    ours = FeasibleLearning(
        hidden_sizes=[6],
        num_epochs=epochs,
        batch_size=batch,
        epsilon=eps,
        dual_learning_rate=eta,
        learning_rate=lr,
    ).fit(data, generator=make_generator(11), progress=progress)

    model = make_mlp(3, [6], 2, generator=child_generator(make_generator(11), "init"))
    Xt, yt = torch.tensor(X, dtype=torch.float32), torch.tensor(y)

    class FL(cooper.ConstrainedMinimizationProblem):
        def __init__(self):
            super().__init__()
            self.multiplier = cooper.multipliers.IndexedMultiplier(num_constraints=n, init=torch.zeros(n))
            self.constraint = cooper.Constraint(
                constraint_type=cooper.ConstraintType.INEQUALITY,
                formulation_type=cooper.formulations.Lagrangian,
                multiplier=self.multiplier,
            )

        def compute_cmp_state(self, idx):
            losses = sample_losses(model(Xt[idx]), yt[idx], "classification")
            state = cooper.ConstraintState(violation=losses - eps, constraint_features=idx)
            return cooper.CMPState(loss=None, observed_constraints={self.constraint: state})

    cmp = FL()
    opt = cooper.optim.AlternatingDualPrimalOptimizer(
        cmp=cmp,
        primal_optimizers=torch.optim.Adam(model.parameters(), lr=lr),
        dual_optimizers=torch.optim.SGD(cmp.dual_parameters(), lr=eta, maximize=True),
    )
    batches = child_generator(make_generator(11), "batches")
    for _ in range(epochs):
        order = torch.randperm(n, generator=batches)
        for start in range(0, n, batch):
            opt.roll(compute_cmp_state_kwargs={"idx": order[start : start + batch]})
    lam_cooper = cmp.multiplier.weight.detach().reshape(-1)
    assert torch.allclose(ours.info["multipliers"], lam_cooper, atol=1e-6)
    assert float(lam_cooper.max()) > 0  # the check is not vacuous
    for a, b in zip(ours.model.parameters(), model.parameters(), strict=True):
        assert torch.allclose(a, b, atol=1e-5)
