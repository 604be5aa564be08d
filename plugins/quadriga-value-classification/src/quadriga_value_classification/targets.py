"""Scalar targets to categorical target distributions over fixed value bins (HL-Gauss, two-hot).

The support is ``num_bins`` bins of equal width ``zeta = (v_max - v_min) / num_bins`` between the
edges ``e_0 = v_min < e_1 < ... < e_m = v_max``, with centres ``c_k = (e_k + e_{k+1}) / 2`` (the
convention of the paper's Appendix A code: ``support = linspace(v_min, v_max, m + 1)``). A
categorical ``p`` over the bins stands for the scalar ``sum_k p_k c_k``.

Source: Farebrother, Orbay, Vuong, Taïga, Chebotar, Xiao, Irpan, Levine, Castro, Faust, Kumar &
Agarwal 2024, "Stop Regressing: Training Value Functions via Classification for Scalable Deep RL"
(ICML, arXiv 2403.03950), the cross-entropy value loss and Appendix A; Imani & White 2018,
"Improving Regression
Performance with Distributional Losses" (ICML), the HL-Gauss histogram loss.
"""

from __future__ import annotations

import math

import torch

from quadriga.errors import ConfigError

__all__ = ["bin_centres", "bin_edges", "clip_to", "expected_value", "hl_gauss", "two_hot"]


def bin_edges(
    v_min: float, v_max: float, num_bins: int, *, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """Edges of ``num_bins`` equal bins on ``[v_min, v_max]``.

    Returns:
        ``Tensor[num_bins + 1]``, ``torch.linspace(v_min, v_max, num_bins + 1)`` (return units).

    Raises:
        ConfigError: ``v_min >= v_max`` (key ``v_max``) or ``num_bins < 2`` (key ``num_bins``).

    Source: Farebrother et al. 2024, Appendix A (``support``).
    """
    if not (math.isfinite(v_min) and math.isfinite(v_max) and v_min < v_max):
        raise ConfigError(
            f"the value support needs finite v_min < v_max, got v_min={v_min}, v_max={v_max}; "
            "choose a range that holds the returns, e.g. [-10, 110] for CartPole-v1 at gamma 0.99.",
            key="v_max",
        )
    if int(num_bins) < 2:
        raise ConfigError(f"num_bins must be at least 2, got {num_bins}.", key="num_bins")
    return torch.linspace(float(v_min), float(v_max), int(num_bins) + 1, dtype=dtype)


def bin_centres(edges: torch.Tensor) -> torch.Tensor:
    """Bin centres ``(e_k + e_{k+1}) / 2``: ``Tensor[m]`` from edges ``Tensor[m + 1]``."""
    return (edges[:-1] + edges[1:]) / 2


def expected_value(probs: torch.Tensor, centres: torch.Tensor) -> torch.Tensor:
    """The scalar a categorical stands for: ``sum_k p_k c_k``.

    Args:
        probs: ``Tensor[..., m]`` probabilities (rows sum to 1).
        centres: ``Tensor[m]``.

    Returns:
        ``Tensor[...]`` (return units).

    Source: Farebrother et al. 2024, the cross-entropy value loss (Q is the predicted categorical's mean).
    """
    return (probs * centres).sum(-1)


def clip_to(y: torch.Tensor, low: float, high: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Clip targets into ``[low, high]`` and count those that were outside.

    Returns:
        ``(y clipped, number clipped)``: ``Tensor`` like ``y`` and an int64 scalar tensor.
    """
    clipped = y.clamp(low, high)
    return clipped, (clipped != y).sum()


def hl_gauss(y: torch.Tensor, edges: torch.Tensor, sigma: float) -> torch.Tensor:
    """The HL-Gauss target histogram of scalar targets ``y``.

    ``p_k(y) = (Phi((e_{k+1} - y) / s) - Phi((e_k - y) / s)) / (Phi((e_m - y) / s) - Phi((e_0 - y) / s))``
    with ``s = sigma``:
    the mass of ``N(y, sigma^2)`` in each bin, renormalised over the support (computed with
    ``erf``, as the paper's code). Its mean is ``y`` up to a truncation bias that is negligible a few
    ``sigma`` inside the support (< 1e-4 with ``sigma = 0.75 zeta`` and ``y`` 4 sigma inside; -0.1 at
    one sigma from an edge, -0.27 at the edge, for 51 bins on [-10, 10]).

    Args:
        y: ``Tensor[B]`` targets, inside ``[e_0, e_m]`` (clip them first: outside, the normaliser
            vanishes and the histogram is 0/0).
        edges: ``Tensor[m + 1]`` from :func:`bin_edges`.
        sigma: the Gaussian's standard deviation (return units, > 0); the paper sets
            ``sigma = 0.75 zeta``.

    Returns:
        ``Tensor[B, m]`` probabilities (rows sum to 1), no gradient needed.

    Raises:
        ConfigError: ``sigma`` not positive (key ``sigma_ratio``).

    Source: Imani & White 2018 (HL-Gauss); Farebrother et al. 2024, the HL-Gauss target and Appendix A
    (``transform_to_probs``; sigma / bin width = 0.75).
    """
    if not sigma > 0:
        raise ConfigError(f"the HL-Gauss sigma must be positive, got {sigma}.", key="sigma_ratio")
    cdf = torch.special.erf((edges - y.unsqueeze(-1)) / (math.sqrt(2.0) * sigma))
    z = cdf[..., -1] - cdf[..., 0]
    return (cdf[..., 1:] - cdf[..., :-1]) / z.unsqueeze(-1)


def two_hot(y: torch.Tensor, centres: torch.Tensor) -> torch.Tensor:
    """The two-hot target of scalar targets ``y``: mass on the two centres around ``y``.

    For ``c_k <= y <= c_{k+1}``: ``p_k = (c_{k+1} - y) / (c_{k+1} - c_k)``, ``p_{k+1} = 1 - p_k``, all
    other bins 0, so that ``sum_k p_k c_k = y`` exactly (linear interpolation); ``y`` outside
    ``[c_0, c_{m-1}]`` is clipped to the nearest end centre first.

    Args:
        y: ``Tensor[B]`` targets (return units).
        centres: ``Tensor[m]`` increasing bin centres.

    Returns:
        ``Tensor[B, m]`` probabilities (rows sum to 1).

    Source: Farebrother et al. 2024, the two-hot target (as in MuZero, Schrittwieser et al. 2020,
    Appendix F).
    """
    m = centres.shape[-1]
    y = y.clamp(centres[0], centres[-1])
    k = (torch.searchsorted(centres, y.contiguous(), right=True) - 1).clamp(0, m - 2)
    lo, hi = centres[k], centres[k + 1]
    upper = (y - lo) / (hi - lo)
    probs = torch.zeros(*y.shape, m, dtype=y.dtype, device=y.device)
    probs.scatter_(-1, k.unsqueeze(-1), (1 - upper).unsqueeze(-1))
    probs.scatter_add_(-1, (k + 1).unsqueeze(-1), upper.unsqueeze(-1))
    return probs
