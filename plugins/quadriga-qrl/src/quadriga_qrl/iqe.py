"""Interval quasimetric embeddings (IQE): a quasimetric head on latent vectors.

A latent ``u in R^(k m)`` is read as ``k`` components of ``m`` coordinates. Component ``i`` of the
distance from ``u`` to ``v`` is the length (Lebesgue measure) of the union of the intervals
``[u_ij, max(u_ij, v_ij)]`` over ``j = 1..m``::

    d_i(u, v) = | U_j [u_ij, max(u_ij, v_ij)] |

and the distance is their "maxmean" reduction ``d(u, v) = alpha max_i d_i + (1 - alpha) mean_i d_i``
with a learned ``alpha = sigmoid(raw_alpha) in (0, 1)``. Each ``d_i`` is a quasimetric: ``d_i(u, u)
= 0``, ``d_i >= 0``, ``d_i(u, w) <= d_i(u, v) + d_i(v, w)`` and in general ``d_i(u, v) != d_i(v, u)``;
max and convex combinations keep these properties, so ``d`` is a quasimetric for every network
that produces ``u`` and ``v``.

The union length is computed exactly by sorting the intervals by their start ``s`` and summing
what each adds beyond the running maximum end ``M`` of those before it::

    |U_j [s_j, e_j]| = sum_j max(0, e_j - max(s_j, M_(j-1))),   M_(j-1) = max_(l<j) e_l.

Source: Wang & Isola 2022, "Improved Representation of Asymmetrical Distances with Interval
Quasimetric Embeddings" (NeurIPS workshop, arXiv 2211.15120), Section 3 (the IQE definition and
the maxmean reduction); used as the critic head of Wang et al. 2023 (QRL, ICML).
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["IQE", "interval_union_length", "iqe_components"]


def interval_union_length(start: torch.Tensor, end: torch.Tensor) -> torch.Tensor:
    """Length of the union of the intervals ``[start_j, end_j]`` along the last axis.

    Args:
        start: ``Tensor[..., m]`` interval starts.
        end: ``Tensor[..., m]`` interval ends, ``end >= start`` elementwise.

    Returns:
        ``Tensor[...]``: ``| U_j [start_j, end_j] |`` (the units of the inputs); differentiable
        almost everywhere (through the sort's permutation).
    """
    order = start.argsort(dim=-1)
    s, e = start.gather(-1, order), end.gather(-1, order)
    prev_max = torch.cummax(e, dim=-1).values
    prev_max = torch.cat([torch.full_like(prev_max[..., :1], -torch.inf), prev_max[..., :-1]], dim=-1)
    return (e - torch.maximum(s, prev_max)).clamp_min(0).sum(-1)


def iqe_components(u: torch.Tensor, v: torch.Tensor, num_components: int) -> torch.Tensor:
    """The ``k`` component distances ``d_i(u, v)`` of IQE.

    Args:
        u: ``Tensor[..., k m]`` latents of the sources.
        v: ``Tensor[..., k m]`` latents of the targets (broadcast with ``u``).
        num_components: ``k`` (must divide the last dimension).

    Returns:
        ``Tensor[..., k]`` non-negative component distances.

    Raises:
        ValueError: ``num_components`` does not divide the latent size.
    """
    size = u.shape[-1]
    if size % num_components:
        raise ValueError(f"num_components = {num_components} must divide the latent size {size}")
    u, v = torch.broadcast_tensors(u, v)
    shape = (*u.shape[:-1], num_components, size // num_components)
    u, v = u.reshape(shape), v.reshape(shape)
    return interval_union_length(u, torch.maximum(u, v))


class IQE(nn.Module):
    """The IQE distance with the maxmean reduction and a learned mixing weight ``alpha``.

    Args:
        num_components: ``k`` components.

    Shapes:
        ``forward(u Tensor[..., k m], v Tensor[..., k m]) -> Tensor[...]`` (broadcasting).

    Source: Wang & Isola 2022 (arXiv 2211.15120), Section 3, IQE with maxmean reduction.
    """

    def __init__(self, num_components: int) -> None:
        super().__init__()
        self.num_components = int(num_components)
        self.raw_alpha = nn.Parameter(torch.zeros(()))

    def forward(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """``alpha max_i d_i(u, v) + (1 - alpha) mean_i d_i(u, v)``."""
        d = iqe_components(u, v, self.num_components)
        alpha = torch.sigmoid(self.raw_alpha)
        return alpha * d.max(-1).values + (1 - alpha) * d.mean(-1)
