"""Top Hessian eigenvalue by power iteration on Hessian-vector products (torch autograd)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from quadriga.errors import ConfigError

__all__ = ["top_hessian_eigenvalue"]


def top_hessian_eigenvalue(
    loss: Callable[[Any], Any],
    params: Any,
    *,
    generator: Any,
    num_iterations: int = 100,
    tolerance: float = 1e-10,
) -> tuple[float, Any]:
    """Largest-magnitude eigenvalue of the Hessian of ``loss`` at ``params`` (the sharpness).

    Power iteration ``v <- H v / |H v|`` with ``H v`` from double back-propagation
    (``torch.autograd.functional.hvp``); the Rayleigh quotient ``v' H v`` is returned once two
    successive quotients differ by less than ``tolerance`` (relative) or after ``num_iterations``.
    At a minimum the Hessian is positive semi-definite, so this is the top eigenvalue.

    Shapes:
        ``params``: ``Tensor[p]`` (flat, float64 recommended); ``loss(params)`` a scalar tensor;
        returns ``(float, Tensor[p])``, the eigenvalue and a unit eigenvector.

    Units:
        the eigenvalue is in loss units per squared parameter unit (the curvature).

    Raises:
        ConfigError: ``params`` not one-dimensional, ``num_iterations < 1`` or ``tolerance <= 0``.

    Source: power iteration (Golub & Van Loan 2013, sec. 8.2.1) on Pearlmutter's (1994)
    Hessian-vector products, as used for the sharpness in Cohen et al. 2021 (ICLR, sec. 3) and
    Kreisler et al. 2023 (ICML, sec. 5).
    """
    import torch

    if params.ndim != 1:
        raise ConfigError(f"params must be a flat tensor, got shape {tuple(params.shape)}.", key="params")
    if num_iterations < 1:
        raise ConfigError(f"num_iterations must be >= 1, got {num_iterations}.", key="num_iterations")
    if not tolerance > 0:
        raise ConfigError(f"tolerance must be > 0, got {tolerance}.", key="tolerance")
    x = params.detach()
    v = torch.randn(x.shape, generator=generator, dtype=x.dtype, device=generator.device).to(x.device)
    v = v / v.norm()
    previous = None
    value = 0.0
    for _ in range(num_iterations):
        _, hv = torch.autograd.functional.hvp(loss, x, v)
        value = float(torch.dot(v, hv))
        norm = hv.norm()
        if float(norm) == 0.0:
            return 0.0, v
        v = hv / norm
        if previous is not None and abs(value - previous) <= tolerance * max(abs(value), 1e-300):
            break
        previous = value
    return value, v
