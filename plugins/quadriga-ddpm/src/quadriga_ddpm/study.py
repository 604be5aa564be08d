"""The error-against-T study of DDPM on sphere mixtures: run the grid, fit slopes, measure collapse.

Rows are plain dicts ``{sigma, K, d, T, schedule, metric, value, floor}``:

* K = 1: ``kl`` and ``tv`` of the exact output law against the target (floor 0), from the
  mean/variance recursion of :mod:`quadriga_ddpm.gaussian_exact`;
* K > 1: the three metrics of :mod:`quadriga_ddpm.metrics` on ``n`` DDPM samples, with
  ``floor`` the same metric on ``n`` exact samples of the target.

Source: test design for Li, Cai & Wei 2025 (research note section c).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import torch

from quadriga.seeding import child_generator
from quadriga_ddpm.gaussian_exact import kl_isotropic, output_law, tv_isotropic
from quadriga_ddpm.metrics import METRICS, loglog_fit, mixture_metrics
from quadriga_ddpm.sampler import DDPM
from quadriga_ddpm.targets import SphereMixture

__all__ = ["GRIDS", "MIN_SLOPE_POINTS", "SCHEDULES", "collapse", "exact_rows", "sampled_rows", "slopes"]

SCHEDULES = ("theory", "linear")
#: fewest T values above twice the floor for a slope to count (see :func:`slopes`).
MIN_SLOPE_POINTS = 4
GRIDS: dict[str, dict[str, Any]] = {
    "smoke": {"sigmas": (2.0,), "ks": (2,), "dims": (2, 16), "steps": (10, 40), "n": 400},
    "default": {"sigmas": (2.0,), "ks": (2, 16), "dims": (2, 128), "steps": (10, 50, 200), "n": 2000},
    "paper": {
        "sigmas": (0.5, 1.0, 2.0),
        "ks": (2, 16),
        "dims": (2, 16, 128, 256),
        "steps": (10, 20, 50, 100, 200, 400),
        "n": 5000,
    },
}


def exact_rows(
    sigmas: Iterable[float],
    dims: Iterable[int],
    steps: Iterable[int],
    *,
    radius: float = 6.0,
    schedules: Iterable[str] = SCHEDULES,
) -> list[dict[str, Any]]:
    """Exact KL (nats) and TV of the DDPM output for K = 1, target N(mu, sigma^2 I), |mu| = radius.

    Returns:
        Rows with metric ``kl`` / ``tv`` and floor 0 (see module docstring).
    """
    rows = []
    for schedule in schedules:
        for T in steps:
            betas = DDPM(num_steps=T, schedule=schedule).betas()
            for sigma in sigmas:
                m, s2 = output_law(betas, sigma * sigma)
                gap = abs(1 - m) * radius
                for d in dims:
                    base = {"sigma": sigma, "K": 1, "d": d, "T": T, "schedule": schedule, "floor": 0.0}
                    rows.append({**base, "metric": "kl", "value": kl_isotropic(gap, s2, sigma * sigma, d)})
                    rows.append({**base, "metric": "tv", "value": tv_isotropic(gap, s2, sigma * sigma, d)})
    return rows


def sampled_rows(
    sigmas: Iterable[float],
    ks: Iterable[int],
    dims: Iterable[int],
    steps: Iterable[int],
    n: int,
    *,
    generator: Any,
    dtype: str = "float32",
    schedules: Iterable[str] = SCHEDULES,
    on_cell: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Run DDPM with the exact score on each (sigma, K, d) mixture and each (schedule, T).

    Args:
        sigmas, ks, dims, steps: the grid; n: samples per cell.
        generator: a ``torch.Generator``; every cell draws from its own named stream of it
            (:func:`quadriga.seeding.child_generator`), so cells do not depend on the order they run
            in. The means depend on (generator seed, d, K) only, so they are shared across sigma.
            (``make_generator(s)`` reproduces the former ``seed = s`` exactly.)
        dtype: the chains' float type.
        on_cell: optional callback with a short description after each cell (progress).

    Returns:
        Rows of the three mixture metrics with their exact-sample floors.
    """
    rows = []
    for k in ks:
        for d in dims:
            for sigma in sigmas:
                target = SphereMixture(dim=d, num_components=k, scale=sigma)
                target.prepare(generator=child_generator(generator, f"means/{d}/{k}"))
                exact = target.sample(n, generator=child_generator(generator, f"exact/{d}/{k}/{sigma}"))
                floor = mixture_metrics(target, exact)
                for schedule in schedules:
                    for T in steps:
                        gen = child_generator(generator, f"ddpm/{d}/{k}/{sigma}/{schedule}/{T}")
                        x = (
                            DDPM(num_steps=T, num_samples=n, schedule=schedule, dtype=dtype)
                            .sample(target, generator=gen)
                            .x
                        )
                        for name, value in mixture_metrics(target, x).items():
                            rows.append(
                                {
                                    "sigma": sigma,
                                    "K": k,
                                    "d": d,
                                    "T": T,
                                    "schedule": schedule,
                                    "metric": name,
                                    "value": value,
                                    "floor": floor[name],
                                }
                            )
                        if on_cell:
                            on_cell(f"K={k} d={d} sigma={sigma} {schedule} T={T}")
    return rows


def slopes(rows: list[dict[str, Any]], *, min_points: int = MIN_SLOPE_POINTS) -> list[dict[str, Any]]:
    """Fitted slope of log(value) against log(T) per (metric, schedule, sigma, K, d).

    Points within twice the Monte-Carlo floor are left out (see :func:`loglog_fit`). A slope is
    *resolved* only when at least ``min_points`` T values remain: a 2-point fit has no residual
    degrees of freedom, so its Monte-Carlo error cannot be estimated and is large (each point
    just above twice the floor carries a relative error of order 1/2, i.e. about 0.4 in log).
    Exact rows (floor 0 at every T, no Monte-Carlo error) need only 2 points.

    Args:
        rows: study rows (module docstring).
        min_points: fewest usable T values for a resolved slope of sampled rows (>= 2).

    Returns:
        Rows ``{metric, schedule, sigma, K, d, slope, slope_se, points, resolved}``; ``slope`` and
        ``slope_se`` are NaN when the slope is not resolved.

    Raises:
        ValueError: ``min_points < 2``.
    """
    if min_points < 2:
        raise ValueError(f"min_points must be >= 2 (a slope needs two points), got {min_points}")
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(r["metric"], r["schedule"], r["sigma"], r["K"], r["d"])].append(r)
    out = []
    for (metric, schedule, sigma, k, d), rs in sorted(groups.items()):
        rs = sorted(rs, key=lambda r: r["T"])
        s, se, used = loglog_fit([r["T"] for r in rs], [r["value"] for r in rs], [r["floor"] for r in rs])
        exact = all(r["floor"] == 0 for r in rs)
        ok = used >= (2 if exact else min_points)
        out.append(
            {
                "metric": metric,
                "schedule": schedule,
                "sigma": sigma,
                "K": k,
                "d": d,
                "slope": s if ok else math.nan,
                "slope_se": se if ok else math.nan,
                "points": used,
                "resolved": ok,
            }
        )
    return out


def collapse(rows: list[dict[str, Any]], slope_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """How far the error-vs-T curves of different d lie apart, per (metric, schedule, sigma, K).

    Returns:
        Rows with ``dims`` (how many d were run), ``resolved_dims`` (how many have a resolved slope),
        ``slope_median`` and ``slope_spread`` (max - min over d of the resolved slopes; NaN when fewer
        than 2 d are resolved: "not enough resolved points"), and ``log10_spread``: the median over T
        of log10(max_d value / min_d value), using only values above twice their floor (NaN when
        fewer than 2 d qualify at every T).
    """
    by_slope: dict[tuple, list[float]] = defaultdict(list)
    n_dims: dict[tuple, int] = defaultdict(int)
    for s in slope_rows:
        key = (s["metric"], s["schedule"], s["sigma"], s["K"])
        n_dims[key] += 1
        if math.isfinite(s["slope"]):
            by_slope[key].append(s["slope"])
    vals: dict[tuple, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r["value"] > 2 * r["floor"] and r["value"] > 0:
            vals[(r["metric"], r["schedule"], r["sigma"], r["K"])][r["T"]].append(r["value"])
    keys = sorted({(r["metric"], r["schedule"], r["sigma"], r["K"]) for r in rows})
    out = []
    for key in keys:
        sl = by_slope.get(key, [])
        spreads = [math.log10(max(v) / min(v)) for v in vals[key].values() if len(v) >= 2]
        out.append(
            {
                "metric": key[0],
                "schedule": key[1],
                "sigma": key[2],
                "K": key[3],
                "dims": n_dims.get(key, 0),
                "resolved_dims": len(sl),
                "slope_median": statistics.median(sl) if sl else math.nan,
                "slope_spread": (max(sl) - min(sl)) if len(sl) >= 2 else math.nan,
                "log10_spread": statistics.median(spreads) if spreads else math.nan,
            }
        )
    return out


def to_tensor_table(rows: list[dict[str, Any]]) -> torch.Tensor:  # pragma: no cover - convenience
    """Values of ``rows`` as a ``Tensor[len(rows)]`` float64 (for quick checks)."""
    return torch.tensor([r["value"] for r in rows], dtype=torch.float64)


_ = METRICS
