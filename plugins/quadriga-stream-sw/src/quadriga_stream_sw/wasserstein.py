"""One-dimensional and sliced Wasserstein pieces shared by the estimators (POT underneath).

Convention (the same as POT's ``ot.sliced_wasserstein_distance``):
SW_p = ( (1/L) sum_l W_p^p(theta_l # mu, theta_l # nu) )^(1/p).

Source: Bonneel, Rabin, Peyre & Pfister, "Sliced and Radon Wasserstein barycenters of
measures", JMIV 2015 (eq. 3); the 1-D distance is the quantile formula
W_p^p = int_0^1 |F_mu^-1(u) - F_nu^-1(u)|^p du (Peyre & Cuturi 2019, Remark 2.30).
"""

from __future__ import annotations

import math
from typing import Any

import torch

from quadriga.errors import ConfigError

__all__ = ["check_weights", "exact_sliced", "projected_wpp", "random_projections", "sliced_value"]


def random_projections(
    dim: int, num_projections: int, generator: torch.Generator | None, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """L directions drawn uniformly on the sphere S^{d-1} (normalised Gaussians).

    Args:
        dim: d >= 1.
        num_projections: L >= 1.
        generator: ``torch.Generator``; the same seed gives the same directions.

    Returns:
        ``Tensor[L, d]`` with unit rows (POT's ``projections`` argument is its transpose, ``[d, L]``).
    """
    theta = torch.randn(num_projections, dim, generator=generator, dtype=torch.float64)
    return (theta / theta.norm(dim=1, keepdim=True)).to(dtype)


def check_weights(weights: torch.Tensor | None, num_atoms: int, name: str, *, atol: float = 1e-9) -> None:
    """Check that atom weights match their atoms and form a probability vector.

    Args:
        weights: ``Tensor[M]`` or ``Tensor[M, L]`` (one column per projection), or ``None`` (uniform).
        num_atoms: M, the number of atoms they weight.
        name: the argument name used in the message.
        atol: tolerance on the sum (per column).

    Raises:
        ConfigError: wrong length, negative or non-finite entries, or a sum different from 1
            (a subsample passed with the full sample's weights 1/n sums to m/n and scales
            W_p^p by m/n: the pitfall of the reference code's baseline).
    """
    if weights is None:
        return
    if weights.shape[0] != num_atoms:
        raise ConfigError(
            f"'{name}' has {weights.shape[0]} entries for {num_atoms} atoms; "
            "give one weight per atom (for a subsample of m points use weights of length m).",
            key=name,
        )
    if not torch.isfinite(weights).all() or (weights < 0).any():
        raise ConfigError(f"'{name}' must be finite and non-negative.", key=name)
    total = weights.sum(dim=0)
    if not torch.allclose(total, torch.ones_like(total), rtol=0.0, atol=atol):
        worst = float(total.flatten()[(total - 1).abs().flatten().argmax()])
        raise ConfigError(
            f"'{name}' sums to {worst:.6g}, not 1; normalise the weights "
            "(e.g. 1/m for m equally weighted points).",
            key=name,
        )


def projected_wpp(
    u_values: torch.Tensor,
    v_values: torch.Tensor,
    u_weights: torch.Tensor | None = None,
    v_weights: torch.Tensor | None = None,
    p: float = 2.0,
) -> torch.Tensor:
    """W_p^p between weighted 1-D distributions, one per column (``ot.wasserstein_1d``).

    Args:
        u_values: ``Tensor[n, L]`` atoms of the first distributions (column l = projection l).
        v_values: ``Tensor[m, L]``.
        u_weights, v_weights: ``Tensor[n]`` / ``Tensor[n, L]`` probability weights, or ``None`` (uniform).
        p: order, >= 1.

    Returns:
        ``Tensor[L]``: W_p^p per column (units of x to the power p); differentiable in the
        values when they require grad.

    Raises:
        ConfigError: invalid weights (see :func:`check_weights`), or ``p < 1``.
    """
    import ot

    if p < 1:
        raise ConfigError(f"p must be >= 1, got {p}.", key="p")
    check_weights(u_weights, u_values.shape[0], "u_weights")
    check_weights(v_weights, v_values.shape[0], "v_weights")
    if u_weights is not None:
        u_weights = u_weights.to(u_values.dtype)
    if v_weights is not None:
        v_weights = v_weights.to(v_values.dtype)
    return ot.wasserstein_1d(u_values, v_values, u_weights, v_weights, p=p)


def sliced_value(wpp: torch.Tensor, p: float) -> tuple[Any, float]:
    """SW_p and its standard error over projections from per-projection W_p^p.

    Args:
        wpp: ``Tensor[L]`` of W_p^p values.
        p: the order.

    Returns:
        ``(value, stderr)``: value = (mean wpp)^(1/p) (a 0-d tensor, differentiable); stderr is
        the delta-method standard error (1/p) m^(1/p-1) sd(wpp)/sqrt(L) of the Monte Carlo
        average over the L random directions (0 when L = 1).
    """
    mean = wpp.mean()
    value = mean.clamp_min(0.0) ** (1.0 / p)
    num = wpp.shape[0]
    if num < 2:
        return value, 0.0
    m = float(mean.detach())
    sd = float(wpp.detach().std(unbiased=True))
    stderr = 0.0 if m <= 0 else (1.0 / p) * m ** (1.0 / p - 1.0) * sd / math.sqrt(num)
    return value, stderr


def exact_sliced(
    x_source: torch.Tensor,
    x_target: torch.Tensor,
    theta: torch.Tensor,
    p: float = 2.0,
    a: torch.Tensor | None = None,
    b: torch.Tensor | None = None,
    *,
    return_wpp: bool = False,
) -> Any:
    """Exact SW_p between two sample sets held in memory: ``ot.sliced_wasserstein_distance``.

    Args:
        x_source: ``Tensor[n, d]``; x_target: ``Tensor[m, d]``.
        theta: ``Tensor[L, d]`` directions (passed to POT transposed, as ``[d, L]``).
        p: order; a, b: optional probability weights ``Tensor[n]``, ``Tensor[m]``.

    Returns:
        SW_p as a float (units of x); with ``return_wpp``, ``(SW_p, Tensor[L] of W_p^p per direction)``.

    Raises:
        ConfigError: invalid weights.
    """
    import ot

    check_weights(a, x_source.shape[0], "a")
    check_weights(b, x_target.shape[0], "b")
    dt = theta.dtype
    value = ot.sliced_wasserstein_distance(
        x_source.detach().to(dt).numpy(),
        x_target.detach().to(dt).numpy(),
        a=None if a is None else a.to(dt).numpy(),
        b=None if b is None else b.to(dt).numpy(),
        projections=theta.T.contiguous().numpy(),
        p=p,
        log=True,
    )
    value, log = value
    if return_wpp:
        return float(value), torch.as_tensor(log["projected_emds"])
    return float(value)
