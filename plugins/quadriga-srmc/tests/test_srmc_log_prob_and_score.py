"""The surrogate's shared log-density-and-score path gives the chains of separate calls."""

from __future__ import annotations

import torch
from quadriga_srmc.sampler import SRMC
from quadriga_std.samplers.mcmc import MALA
from quadriga_std.targets.gaussian import Gaussian


class _Separate:
    """The same Gaussian without ``log_prob_and_score`` (log_prob and score called apart)."""

    def __init__(self, target: Gaussian) -> None:
        self.target, self.dim = target, target.dim

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        return self.target.log_prob(x)

    def score(self, x: torch.Tensor) -> torch.Tensor:
        return self.target.score(x)

    def sample(self, n: int, *, generator: torch.Generator) -> torch.Tensor:
        return self.target.sample(n, generator=generator)


def test_gaussian_log_prob_and_score_equal_the_separate_calls():
    t = Gaussian(dim=7, equicorrelation=0.6)
    x = 2 * torch.randn(50, 7, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    lp, s = t.log_prob_and_score(x)
    assert torch.allclose(lp, t.log_prob(x), rtol=0, atol=1e-12)
    assert torch.allclose(s, t.score(x), rtol=0, atol=1e-12)


def test_sr_mala_chains_and_counts_equal_with_and_without_the_shared_path():
    t = Gaussian(dim=20, equicorrelation=0.9)
    for drift in ("shifted", "exact"):
        sr = SRMC(
            base_kernel=MALA(step_size=0.05, init="target"),
            alpha=1.0,
            drift=drift,
            num_chains=8,
            num_steps=60,
            burn_in=5,
        )
        a = sr.sample(t, generator=torch.Generator().manual_seed(2))
        b = sr.sample(_Separate(t), generator=torch.Generator().manual_seed(2))
        assert (a.x - b.x).abs().max() <= 1e-12
        for key in ("score_evals", "log_prob_evals", "acceptance_rate"):
            assert a.info[key] == b.info[key], key
