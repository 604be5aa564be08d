"""Bad configuration fails early with ConfigError; non-finite moves are rejected, not crashes."""

import pytest
import torch
from quadriga_srmc.sampler import SRMC
from quadriga_std.samplers.gibbs import Gibbs
from quadriga_std.samplers.mcmc import MALA, RWM
from quadriga_std.targets.gaussian import Gaussian
from quadriga_std.targets.ising import Ising

from quadriga.errors import ConfigError


def test_bad_parameters_raise_config_error():
    with pytest.raises(ConfigError, match="rho"):
        SRMC(rho=0.5)
    with pytest.raises(ConfigError, match="alpha must be a finite number >= 0") as bad:
        SRMC(alpha=-1.0)
    assert bad.value.key == "alpha"
    with pytest.raises(ConfigError, match="alpha_schedule must be one of") as bad:
        SRMC(alpha_schedule="cosine")
    assert bad.value.key == "alpha_schedule"
    with pytest.raises(ConfigError, match="mala"):
        SRMC(base_kernel="malaa")
    built = SRMC(base_kernel={"use": "hmc", "step_size": 0.1})
    assert type(built.base_kernel).__name__ == "HMC" and built.base_kernel.step_size == 0.1


def test_kernel_target_mismatch_is_reported():
    gen = torch.Generator().manual_seed(0)
    with pytest.raises(ConfigError, match="gibbs"):
        SRMC(base_kernel=MALA(), num_steps=2, burn_in=0).sample(Ising(size=2), generator=gen)
    with pytest.raises(ConfigError, match="spin target"):
        SRMC(base_kernel=Gibbs(), num_steps=2, burn_in=0).sample(Gaussian(dim=2), generator=gen)
    with pytest.raises(ConfigError, match="base_kernel must be a registered Sampler name") as bad:
        SRMC(base_kernel=object(), num_steps=2)  # refused when built, before any sampling
    assert bad.value.key == "base_kernel"


class _Cliff:
    """N(0, I_2) whose log density is NaN for x_0 > 1.5 (an overflowing target)."""

    dim = 2

    def log_prob(self, x):
        lp = -0.5 * (x * x).sum(-1)
        return torch.where(x[:, 0] > 1.5, torch.full_like(lp, float("nan")), lp)

    def score(self, x):
        return torch.where(x[:, :1] > 1.5, torch.full_like(x, float("inf")), -x)


def test_nonfinite_log_ratios_are_rejected_and_counted():
    for kernel in (MALA(step_size=0.5), RWM(step_size=1.5)):
        out = SRMC(base_kernel=kernel, alpha=1.0, num_chains=8, num_steps=300, burn_in=0).sample(
            _Cliff(), generator=torch.Generator().manual_seed(2)
        )
        assert torch.isfinite(out.chains).all()
        assert (out.chains[..., 0] <= 1.5).all()
        assert out.info["rejected_nonfinite"] > 0
        assert torch.isfinite(torch.tensor(out.info["theta_norm"]))
