"""Figures: coresets over the target's density contours, and MMD against n on log-log axes.

Object-oriented matplotlib only (``matplotlib.figure.Figure``, no pyplot state).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

__all__ = ["coreset_figure", "rate_figure"]


def coreset_figure(
    subjects: Mapping[str, Any], target: Any, values: Mapping[str, float] | None = None
) -> Figure:
    """One panel per subject: its points over the contours of ``exp(target.log_prob)`` (d = 2 only).

    Args:
        subjects: ``{name: Samples}`` with ``x: Tensor[n, 2]``.
        target: a 2-D target with ``log_prob(Tensor[m, 2]) -> Tensor[m]``.
        values: optional metrics; ``"<name>/mmd"`` is shown in the panel title.

    Returns:
        A :class:`matplotlib.figure.Figure`.
    """
    import torch

    pts = {
        k: np.asarray(v.x.detach().cpu().double() if hasattr(v.x, "detach") else v.x)
        for k, v in subjects.items()
    }
    allx = np.concatenate(list(pts.values()))
    lo, hi = np.percentile(allx, 0.5, axis=0), np.percentile(allx, 99.5, axis=0)
    pad = 0.15 * (hi - lo) + 1e-9
    gx = np.linspace(lo[0] - pad[0], hi[0] + pad[0], 120)
    gy = np.linspace(lo[1] - pad[1], hi[1] + pad[1], 120)
    xx, yy = np.meshgrid(gx, gy)
    grid = torch.as_tensor(np.stack([xx.ravel(), yy.ravel()], 1))
    with torch.no_grad():
        dens = np.exp(np.asarray(target.log_prob(grid).double()).reshape(xx.shape))
    cols = min(3, len(pts))
    rows = math.ceil(len(pts) / cols)
    fig = Figure(figsize=(4 * cols, 3.6 * rows), layout="constrained")
    for i, (name, x) in enumerate(pts.items()):
        ax = fig.add_subplot(rows, cols, i + 1)
        ax.contour(xx, yy, dens, levels=8, cmap="Blues", linewidths=0.8)
        ax.scatter(
            x[:, 0], x[:, 1], s=8 if len(x) < 500 else 2, c="tab:red", alpha=0.9 if len(x) < 500 else 0.3
        )
        title = f"{name} (coreset of n = {len(x)} points)"
        if values and f"{name}/mmd" in values:
            title += f"\nMMD to the target P = {values[f'{name}/mmd']:.4f}"
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("x1")
        ax.set_ylabel("x2")
        ax.set_aspect("equal", adjustable="box")
    fig.suptitle(
        "Coreset points (red) over the target density (blue contours); one coreset per method",
        fontsize=10,
    )
    return fig


def rate_figure(
    ns: Sequence[int], curves: Mapping[str, Sequence[Sequence[float]]], title: str = ""
) -> Figure:
    """MMD against the input size n on log-log axes: one line (mean, with min-max band) per method.

    Args:
        ns: input sizes n (points before thinning).
        curves: ``{method: [[mmd per replicate] per n]}`` (dimensionless).
        title: axes title.

    Returns:
        A :class:`matplotlib.figure.Figure`.
    """
    fig = Figure(figsize=(5.5, 4.2), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    for method, reps in curves.items():
        arr = np.asarray(reps, dtype=float)
        ax.loglog(ns, arr.mean(axis=1), marker="o", label=method)
        ax.fill_between(ns, arr.min(axis=1), arr.max(axis=1), alpha=0.15)
    ax.set_xscale("log", base=4)
    reps_per_n = sorted({len(r) for reps in curves.values() for r in reps})
    count = "/".join(map(str, reps_per_n)) or "0"
    band = "band: min to max over replicates" if max(reps_per_n, default=0) > 1 else "no band at 1 replicate"
    ax.set_xlabel("input points n (coreset size sqrt(n))")
    ax.set_ylabel("MMD to the target P (dimensionless)")
    ax.set_title(
        f"{title or 'MMD of the coreset against the input size'}\n"
        f"line: mean over {count} replicates per n; {band}",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    return fig
