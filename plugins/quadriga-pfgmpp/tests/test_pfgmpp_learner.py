"""The PFGM++ learner: a short run learns the exact field of a 2-D mixture at D = 8, and samples from it."""

from __future__ import annotations

import math

import torch
from quadriga_pfgmpp.field import MixtureField
from quadriga_pfgmpp.kernel import perturb
from quadriga_pfgmpp.learner import PFGMPPDenoiser
from quadriga_pfgmpp.sampler import PFGMPP
from quadriga_std.targets.gaussian import GaussianMixture

from quadriga.progress import StageProgress


def test_learned_denoiser_approaches_the_exact_field_and_samples():
    g = GaussianMixture(preset="4-mode-2d")
    learner = PFGMPPDenoiser(
        aug_dim=8.0, hidden_sizes=[64, 64], num_steps=600, batch_size=256, learning_rate=3e-3
    )
    fitted = learner.fit(g, generator=torch.Generator().manual_seed(0), progress=StageProgress())
    assert fitted.info["aug_dim"] == 8.0 and fitted.history["loss"][-1] < fitted.history["loss"][0]
    field = MixtureField.from_target(g)
    gen = torch.Generator().manual_seed(1)
    y = g.sample(2000, generator=gen).to(torch.float64)
    # measured after 600 steps: error / spread about 0.32 at sigma = 3 (the field is subtlest there)
    for sigma, bound in ((0.3, 0.1), (1.0, 0.1), (3.0, 0.5)):
        x = perturb(y, sigma, 8.0, gen, clip=False)
        exact = field.denoise(x, sigma, 8.0)
        with torch.no_grad():
            learned = fitted.model(x, torch.full((2000,), sigma, dtype=torch.float64))
        # the learned field is much closer to the exact one than the data spread (the trivial E[y])
        err = float((learned - exact).pow(2).sum(1).mean())
        spread = float((exact - y.mean(0)).pow(2).sum(1).mean())
        assert err < bound * spread, (sigma, err, spread)
    x = (
        PFGMPP(aug_dim=8.0, num_samples=500, num_steps=12)
        .sample(fitted, generator=torch.Generator().manual_seed(2))
        .x
    )
    assert bool(torch.isfinite(x).all()) and math.isclose(
        float(x.norm(dim=1).median()), float(y.norm(dim=1).median()), rel_tol=0.15
    )
