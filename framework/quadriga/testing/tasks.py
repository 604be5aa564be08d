"""The built-in small task and sampler the checks fall back on: ``check-gaussian`` and ``check-draws``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import attrs

from quadriga.artifacts import Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Sampler, Target
from quadriga.params import param
from quadriga.validators import int_at_least, positive_int

if TYPE_CHECKING:
    import torch


# ------------------------------------------------------------------ built-in small task
@attrs.define(kw_only=True)
class CheckGaussian(Target):
    """Standard normal N(0, I_d), the check's target when quadriga-std is not installed.

    Shapes: ``log_prob: Tensor[n, d] -> Tensor[n]``, ``score: Tensor[n, d] -> Tensor[n, d]``.
    Units: nats for ``log_prob``.

    Raises:
        ConfigError: ``dimension < 1``.

    Source: the Gaussian density.
    """

    dimension: int = param(2, doc="dimension d", validator=positive_int)

    @property
    def dim(self) -> int:
        """The dimension d."""
        return self.dimension

    @property
    def mean(self) -> torch.Tensor:
        """The exact mean, ``Tensor[d]`` of zeros (float64)."""
        import torch

        return torch.zeros(self.dimension, dtype=torch.float64)

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised log density (nats), ``Tensor[n, d] -> Tensor[n]``."""
        return -0.5 * (x**2).sum(-1) - 0.5 * self.dimension * math.log(2 * math.pi)

    def score(self, x: torch.Tensor) -> torch.Tensor:
        """``-x``, ``Tensor[n, d] -> Tensor[n, d]``."""
        return -x

    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Exact draws ``Tensor[num_samples, d]`` (float64)."""
        import torch

        return torch.randn(num_samples, self.dimension, generator=generator, dtype=torch.float64)


@attrs.define(kw_only=True)
class CheckDraws(Sampler):
    """Exact draws from a target arranged as ``num_chains`` chains (the check's ``Samples`` input).

    Shapes: ``Samples.x: Tensor[num_chains * num_draws, d]`` (chain-major),
    ``Samples.chains: Tensor[num_chains, num_draws, d]``.
    Units: those of the target.

    Raises:
        ConfigError: the target has no exact sampler.

    Source: none (exact sampling).
    """

    num_chains: int = param(4, doc="chains (count)", validator=positive_int)
    num_draws: int = param(64, doc="draws per chain (count)", validator=int_at_least(2))

    def sample(self, target: Target, *, generator: torch.Generator) -> Samples:
        """Draw ``num_chains * num_draws`` exact samples."""
        import torch

        try:
            x = torch.as_tensor(target.sample(self.num_chains * self.num_draws, generator=generator))
        except NotImplementedError:
            raise ConfigError(
                f"{type(target).__name__} has no exact sampler; pass another task=.", key="target"
            ) from None
        return Samples(
            x=x,
            chains=x.reshape(self.num_chains, self.num_draws, -1),
            info={"score_evals": 0, "log_prob_evals": 0},
        )
