"""The softmax logits of SphereMixture drop only terms constant in k: same posteriors, same chains."""

from __future__ import annotations

import torch
from quadriga_ddpm.sampler import DDPM
from quadriga_ddpm.targets import SphereMixture


def _full_score(target: SphereMixture, x: torch.Tensor, alpha_bar) -> torch.Tensor:
    """The noised score from the whole joint log density (normaliser and |x|^2 included)."""
    joint, sa, v = target._joint(x, alpha_bar)
    mu = target._params(x.dtype)[0]
    return (sa * (torch.softmax(joint, -1) @ mu) - x) / v


class _FullJoint:
    """The target as seen before: its noised score computed from the whole joint."""

    def __init__(self, target: SphereMixture) -> None:
        self.target, self.dim = target, target.dim

    def noised_score(self, x: torch.Tensor, alpha_bar) -> torch.Tensor:
        return _full_score(self.target, x, alpha_bar)


def _target() -> SphereMixture:
    t = SphereMixture(dim=16, num_components=4, scale=0.7)
    t.prepare(generator=torch.Generator().manual_seed(0))
    return t


def test_posteriors_and_scores_match_the_full_joint():
    t = _target()
    x = 3 * torch.randn(64, 16, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    per_row = torch.linspace(0.05, 1.0, 64, dtype=torch.float64)
    for ab in (None, 1.0, 0.4, 0.01, per_row):
        full = torch.softmax(t._joint(x, ab)[0], -1)
        assert torch.allclose(t.responsibilities(x, ab), full, rtol=0, atol=1e-12)
        assert torch.allclose(t.noised_score(x, ab), _full_score(t, x, ab), rtol=0, atol=1e-12)


def test_ddpm_samples_equal_those_from_the_full_joint_on_a_fixed_seed():
    t = _target()
    sampler = DDPM(num_steps=50, num_samples=200)
    new = sampler.sample(t, generator=torch.Generator().manual_seed(3)).x
    old = sampler.sample(_FullJoint(t), generator=torch.Generator().manual_seed(3)).x
    assert new.dtype == torch.float64
    assert (new - old).abs().max() <= 1e-12
