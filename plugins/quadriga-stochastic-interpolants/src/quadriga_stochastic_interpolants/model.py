"""The learned fields: a velocity network b^(t, x) and a denoiser network eta^(t, x) for one interpolant."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from quadriga_stochastic_interpolants.interpolants import Interpolant

__all__ = ["InterpolantModel", "mlp"]


def mlp(dim_in: int, dim_out: int, hidden: list[int]) -> nn.Sequential:
    """``Linear -> SiLU`` blocks and a linear read-out: ``Tensor[n, dim_in] -> Tensor[n, dim_out]``."""
    layers: list[nn.Module] = []
    width = dim_in
    for h in hidden:
        layers += [nn.Linear(width, h), nn.SiLU()]
        width = h
    layers.append(nn.Linear(width, dim_out))
    return nn.Sequential(*layers)


class InterpolantModel(nn.Module):
    """b^(t, x) and (optionally) eta^(t, x) as MLPs on the input ``[x, t]``.

    Args:
        interpolant: the :class:`Interpolant` the fields belong to (kept with the model so that a
            sampler needs nothing else).
        dim: d, the dimension of x.
        hidden: hidden widths of each MLP.
        learn_score: also build the denoiser network (needed for SDE sampling, epsilon > 0).

    Shapes: ``velocity``, ``denoiser``, ``score``: ``(t, x: Tensor[n, d]) -> Tensor[n, d]``
    (t a float or ``Tensor[n, 1]``).
    Units: velocity in x per unit time, score in 1 / x, denoiser dimensionless (or units of x0).

    Source: Albergo, Boffi & Vanden-Eijnden 2023 (arXiv 2303.08797), Sec. 2.2; s = -eta / gamma.
    """

    def __init__(self, interpolant: Interpolant, dim: int, hidden: list[int], learn_score: bool) -> None:
        super().__init__()
        self.interpolant = interpolant
        self.dim = int(dim)
        self.velocity_net = mlp(dim + 1, dim, hidden)
        self.denoiser_net = mlp(dim + 1, dim, hidden) if learn_score else None

    @property
    def dtype(self) -> torch.dtype:
        """Parameter dtype (float32)."""
        return next(self.parameters()).dtype

    @property
    def has_score(self) -> bool:
        """True when the denoiser was learned and the interpolant has a score."""
        return self.denoiser_net is not None and self.interpolant.has_score

    @staticmethod
    def _input(t: Any, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        t = torch.as_tensor(t, dtype=x.dtype, device=x.device)
        t = t.reshape(1, 1).expand(x.shape[0], 1) if t.numel() == 1 else t.reshape(-1, 1)
        return t, torch.cat([x, t], dim=-1)

    def velocity(self, t: Any, x: torch.Tensor) -> torch.Tensor:
        """b^(t, x)."""
        return self.velocity_net(self._input(t, x)[1])

    def denoiser(self, t: Any, x: torch.Tensor) -> torch.Tensor:
        """eta^(t, x) ~ E[z | x_t = x] (one-sided: E[x0 | x_t = x])."""
        if self.denoiser_net is None:
            raise RuntimeError("this model was trained without a denoiser (learn_score = false)")
        return self.denoiser_net(self._input(t, x)[1])

    def score(self, t: Any, x: torch.Tensor) -> torch.Tensor:
        """s^(t, x) = -eta^ / gamma (one-sided: -eta^ / alpha)."""
        tt, inp = self._input(t, x)
        if self.denoiser_net is None:
            raise RuntimeError("this model was trained without a denoiser (learn_score = false)")
        return self.interpolant.score_from_denoiser(tt, self.denoiser_net(inp))

    def forward(self, t: Any, x: torch.Tensor) -> torch.Tensor:
        """The velocity (so that the module is itself the probability-flow field)."""
        return self.velocity(t, x)
