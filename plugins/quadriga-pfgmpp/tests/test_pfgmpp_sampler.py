"""The PFGM++ sampler: D = inf is EDM's sampler, D -> inf converges to it, and finite D samples the data.

Tolerances. At D = inf both samplers run the same Heun steps from the same z, with two independent
implementations of the denoiser (the field's Gaussian branch, std's noised_score through Tweedie), so
they agree to rounding (1e-9). At finite D the prior radius differs by sqrt(D / W) - 1 ~ N(0, 1 / (2 D))
and the field by O(1 / D), so endpoints differ by O(D^(-1/2)): measured RMS 0.017 at D = 1e4 and
0.0016 at D = 1e6 on this mixture (3e-13 at D = inf); the test asks for < 1e-2 and a 100-fold D
giving a 5- to 20-fold smaller gap (10 expected).
"""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_ddpm.edm_heun import EDMHeun, karras_sigmas
from quadriga_ddpm.ode_samplers import ReferenceODE
from quadriga_pfgmpp.sampler import PFGMPP
from quadriga_std.targets.gaussian import GaussianMixture

from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError


@pytest.fixture(scope="module")
def mixture():
    g = GaussianMixture(preset="random", dim=4, num_components=3, scale=0.5)
    g.prepare(generator=torch.Generator().manual_seed(0))
    return g


def _run(sampler, target, seed=1):
    return sampler.sample(target, generator=torch.Generator().manual_seed(seed)).x


def test_infinite_d_is_the_edm_sampler_of_the_kit(mixture):
    ours = _run(PFGMPP(aug_dim=math.inf, num_samples=300, num_steps=12), mixture)
    edm = _run(EDMHeun(num_samples=300, num_steps=12), mixture)
    assert float((ours - edm).abs().max()) < 1e-9


def test_large_d_converges_to_the_diffusion_sampler(mixture):
    edm = _run(EDMHeun(num_samples=300, num_steps=12), mixture)
    rms = {}
    for d in (1e4, 1e6):
        x = _run(PFGMPP(aug_dim=d, num_samples=300, num_steps=12), mixture)
        rms[d] = float((x - edm).pow(2).sum(1).mean().sqrt())
    assert rms[1e6] < 1e-2
    assert 5 < rms[1e4] / rms[1e6] < 20


def test_edm_heun_is_close_to_the_reference_flow_solve(mixture):
    # the kit's Heun sampler against DOP853 on the EDM schedule, same z: second-order discretization error
    ref = ReferenceODE(num_samples=200, schedule="edm", rtol=1e-8)
    x_ref = _run(ref, mixture)
    errs = [
        float((_run(EDMHeun(num_samples=200, num_steps=m), mixture) - x_ref).pow(2).sum(1).mean().sqrt())
        for m in (18, 36)
    ]
    assert errs[1] < 0.05 and errs[1] < errs[0]


def test_karras_grid_closed_form():
    s = karras_sigmas(3, 0.002, 80.0, 7.0)
    mid = ((80.0 ** (1 / 7) + 0.002 ** (1 / 7)) / 2) ** 7
    assert torch.allclose(s, torch.tensor([80.0, mid, 0.002, 0.0], dtype=torch.float64), rtol=1e-12)


@pytest.mark.parametrize("aug_dim", [8.0, 128.0])
def test_finite_d_samples_the_mixture(mixture, aug_dim):
    # exact field, no injected error: mean and component weights within statistical bounds (n = 2000)
    x = _run(PFGMPP(aug_dim=aug_dim, num_samples=2000, num_steps=18), mixture, seed=2)
    n = x.shape[0]
    sd = torch.diagonal(mixture.covariance).sqrt()
    assert bool(((x.mean(0) - mixture.mean).abs() < 4 * sd / math.sqrt(n)).all())
    resp = torch.softmax(mixture.component_log_probs(x), dim=1).mean(0)
    w = mixture.mixture_weights
    assert bool(((resp - w).abs() < 4 * (w * (1 - w) / n).sqrt()).all())


def test_field_error_is_paired_across_d_and_zero_error_is_exact(mixture):
    clean = _run(PFGMPP(aug_dim=8.0, num_samples=100, num_steps=6), mixture)
    again = _run(PFGMPP(aug_dim=8.0, num_samples=100, num_steps=6, field_error=0.0), mixture)
    noisy = _run(PFGMPP(aug_dim=8.0, num_samples=100, num_steps=6, field_error=0.5), mixture)
    assert torch.equal(clean, again) and float((noisy - clean).abs().max()) > 1e-3


def test_network_trained_at_another_d_is_refused():
    fitted = Fitted(model=torch.nn.Identity(), history={}, info={"dim": 2, "aug_dim": 8.0})
    with pytest.raises(ConfigError, match="aug_dim"):
        PFGMPP(aug_dim=64.0, num_samples=4, num_steps=3).sample(fitted, generator=torch.Generator())


def test_bad_aug_dim_is_a_config_error():
    with pytest.raises(ConfigError, match="aug_dim"):
        PFGMPP(aug_dim=0.5)
