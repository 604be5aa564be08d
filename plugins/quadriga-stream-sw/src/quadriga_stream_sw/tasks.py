"""A task that yields two streams of batches (source and target), never held in memory.

Batch i of stream s is drawn with its own generator seeded from (task seed, s, i), so a
stream can be replayed identically (for the exact reference) without being stored.

Presets (from the Gaussian and MixtureGaussian experiments of Nguyen 2025, arXiv 2505.06835):
- ``"gaussians"``: source N(-1, I_d), target N(2, I_d) (``dim`` free, 2 in the paper).
- ``"mixtures"``: two 3-component 2-D Gaussian mixtures (isotropic, variance 0.5):
  source weights (0.3, 0.4, 0.3), means (-3,-3), (0,0), (3,3);
  target weights (0.5, 0.25, 0.25), means (-3,3), (2,0), (4,-4).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import torch

from quadriga import param
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset
from quadriga.seeding import derive_seed
from quadriga.validators import positive_int

__all__ = ["MIXTURES", "PRESETS", "TwoSampleStream"]

PRESETS = ("gaussians", "mixtures")
MIXTURES = {
    "source": ((0.3, 0.4, 0.3), ((-3.0, -3.0), (0.0, 0.0), (3.0, 3.0))),
    "target": ((0.5, 0.25, 0.25), ((-3.0, 3.0), (2.0, 0.0), (4.0, -4.0))),
}
_MIX_STD = 0.5**0.5
_STREAMS = ("source", "target")


def _preset(_inst, attribute, value) -> None:
    if value not in PRESETS:
        raise ConfigError(f"unknown preset '{value}'; use one of {', '.join(PRESETS)}.", key="preset")


@attrs.define(kw_only=True)
class TwoSampleStream(Dataset):
    """Two streams of i.i.d. batches, ``num_samples`` points each, in batches of ``batch_size``.

    ``stream("source")`` / ``stream("target")`` yield ``Tensor[b, d]`` (float64, b <= batch_size);
    ``split("source")`` returns ``(Tensor[num_samples, d], None)``: the whole stream, for exact baselines.

    Units: dimensionless coordinates (the presets' means and variances are in the same units);
    ``num_samples`` and ``batch_size`` count points.

    Raises:
        ConfigError: unknown preset, non-positive sizes, ``dim != 2`` for ``"mixtures"``.

    Source: Nguyen 2025, arXiv 2505.06835, Gaussian / MixtureGaussian experiments.
    """

    preset: str = param(
        "gaussians",
        doc="'gaussians' (N(-1,I) vs N(2,I)) or 'mixtures' (two 3-component 2-D GMMs)",
        validator=_preset,
    )
    dim: int = param(2, doc="dimension d of the points ('mixtures' needs 2)", validator=positive_int)
    num_samples: int = param(10_000, doc="points per stream (n)", validator=positive_int)
    batch_size: int = param(1_000, doc="points per batch", validator=positive_int)
    _seed: int = attrs.field(init=False, default=0)

    def __attrs_post_init__(self) -> None:
        if self.preset == "mixtures" and self.dim != 2:
            raise ConfigError(f"the 'mixtures' preset is 2-D; set dim = 2 (got {self.dim}).", key="dim")

    def prepare(self, *, generator: torch.Generator) -> None:
        """Draw the stream seed from the task's generator."""
        self._seed = int(torch.randint(0, 2**62, (1,), generator=generator).item())

    def _draw(self, which: str, size: int, gen: torch.Generator) -> torch.Tensor:
        if self.preset == "gaussians":
            shift = -1.0 if which == "source" else 2.0
            return torch.randn(size, self.dim, generator=gen, dtype=torch.float64) + shift
        weights, means = MIXTURES[which]
        comp = torch.multinomial(
            torch.tensor(weights, dtype=torch.float64), size, replacement=True, generator=gen
        )
        noise = torch.randn(size, 2, generator=gen, dtype=torch.float64) * _MIX_STD
        return torch.tensor(means, dtype=torch.float64)[comp] + noise

    def stream(self, which: str) -> Iterator[torch.Tensor]:
        """Yield the batches ``Tensor[b, d]`` of ``"source"`` or ``"target"`` (replayable).

        Raises:
            KeyError: unknown stream name.
        """
        if which not in _STREAMS:
            raise KeyError(f"unknown stream '{which}'; use 'source' or 'target'")
        for i, start in enumerate(range(0, self.num_samples, self.batch_size)):
            size = min(self.batch_size, self.num_samples - start)
            gen = torch.Generator().manual_seed(derive_seed(self._seed, f"{which}/{i}"))
            yield self._draw(which, size, gen)

    def split(self, name: str) -> tuple[torch.Tensor, None]:
        """The whole ``"source"`` or ``"target"`` stream in memory: ``(Tensor[n, d], None)``.

        Raises:
            KeyError: unknown split name.
        """
        if name not in _STREAMS:
            raise KeyError(f"unknown split '{name}'; use 'source' or 'target'")
        return torch.cat(list(self.stream(name))), None
