"""Group actions on square images and the NERO evaluation along orbits ``g . x``.

Three groups act on a batch of single-channel square images ``Tensor[n, H, H]`` (pixel units):

- **rotations** ``SO(2)`` (angles in degrees, counter-clockwise as displayed, about the image
  centre): the quarter-turn part of an angle is :func:`torch.rot90` (an exact permutation of the
  pixels), the remainder in ``[-45, 45)`` degrees is bilinear resampling
  (:func:`torch.nn.functional.grid_sample`, zeros outside the canvas);
- **translations** by integer pixels ``(dx, dy)`` (right, down) with zero fill: exact (slicing);
- **scalings** by ``s > 0`` about the centre (``s > 1`` enlarges), bilinear with zeros outside.

:func:`orbit_predictions` evaluates a model on every element of an orbit in one batched pass
(``n * |G|`` images); :func:`nero_curves` turns the predictions into the per-sample NERO matrix
``N_x(g) = m(f(g . x), y)`` (classification is invariant: ``g . y = y``), its aggregate curve and
the orbit consensus (the label of the orbit-averaged prediction) used as a label substitute.

Source: Zhao, Matsuzawa, Irvine, Maire, Kindlmann 2023, "Evaluating Machine Learning Models with
NERO: Non-Equivariance Revealed on Orbits", arXiv 2305.19889, sec. 3 (orbit evaluation, NERO
plots, consensus).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from quadriga.errors import ConfigError

__all__ = [
    "GROUPS",
    "OrbitCurves",
    "group_elements",
    "nero_curves",
    "orbit_images",
    "orbit_predictions",
    "orbit_predictions_loop",
    "rotate",
    "scale",
    "shift",
    "to_canvas",
    "transform",
]

GROUPS = ("rotation", "shift", "scale")


def to_canvas(X: Any, side: int, canvas: int) -> torch.Tensor:
    """Rows of flattened ``side x side`` images, centred on a zero ``canvas x canvas`` grid.

    Args:
        X: ``ndarray | Tensor[n, side * side]`` (pixel units, e.g. 0-16 for ``load_digits``).
        side: the image side ``s``.
        canvas: the canvas side ``C >= s`` (room for rotated corners and shifts).

    Returns:
        ``Tensor[n, C, C]`` float32 on the CPU.

    Raises:
        ConfigError: ``X`` does not have ``side**2`` columns, or ``canvas < side``.
    """
    x = torch.as_tensor(np.asarray(X.detach().cpu() if hasattr(X, "detach") else X), dtype=torch.float32)
    if x.ndim != 2 or x.shape[1] != side * side:
        raise ConfigError(
            f"expected rows of {side}x{side} = {side * side} pixels, got shape {tuple(x.shape)}.", key="side"
        )
    if canvas < side:
        raise ConfigError(f"canvas ({canvas}) must be at least the image side ({side}).", key="canvas")
    lo = (canvas - side) // 2
    out = torch.zeros(x.shape[0], canvas, canvas)
    out[:, lo : lo + side, lo : lo + side] = x.reshape(-1, side, side)
    return out


def _grid_rotate(images: torch.Tensor, degrees: torch.Tensor) -> torch.Tensor:
    """Bilinear rotation of ``images[n, H, W]`` by ``degrees[n]`` (counter-clockwise as displayed)."""
    t = torch.deg2rad(degrees.to(images.dtype))
    c, s = torch.cos(t), torch.sin(t)
    z = torch.zeros_like(c)
    # output pixel at normalised (x right, y down) samples the input at R(-theta) (x, y) in display
    # coordinates; with y pointing down a counter-clockwise turn by theta reads (c x - s y, s x + c y).
    theta = torch.stack([torch.stack([c, -s, z], -1), torch.stack([s, c, z], -1)], -2)
    grid = F.affine_grid(theta, [images.shape[0], 1, *images.shape[-2:]], align_corners=False)
    return F.grid_sample(images[:, None], grid, mode="bilinear", padding_mode="zeros", align_corners=False)[
        :, 0
    ]


def rotate(images: torch.Tensor, degrees: Any) -> torch.Tensor:
    """Rotate every image by its angle: exact quarter turns, then bilinear for the remainder.

    Args:
        images: ``Tensor[n, H, H]`` (square).
        degrees: a number or ``Tensor[n]``, degrees counter-clockwise as displayed.

    Returns:
        ``Tensor[n, H, H]``. Multiples of 90 degrees are exact pixel permutations
        (``rotate(x, 90)`` equals ``torch.rot90(x, 1, (-2, -1))`` bit for bit); 0 is the identity.

    Raises:
        ConfigError: images that are not square.
    """
    if images.shape[-1] != images.shape[-2]:
        raise ConfigError(f"rotations need square images, got {tuple(images.shape[-2:])}.", key="images")
    deg = torch.as_tensor(degrees, dtype=torch.float64).reshape(-1).expand(images.shape[0])
    quarter = torch.round(deg / 90.0)
    rest = deg - 90.0 * quarter
    k = torch.remainder(quarter, 4).to(torch.int64)
    out = images.clone()
    for q in range(1, 4):
        mask = k == q
        if mask.any():
            out[mask] = torch.rot90(images[mask], q, dims=(-2, -1))
    frac = rest.abs() > 1e-9
    if frac.any():
        out[frac] = _grid_rotate(out[frac], rest[frac])
    return out


def shift(images: torch.Tensor, offsets: Any) -> torch.Tensor:
    """Translate every image by integer pixels with zero fill (exact).

    Args:
        images: ``Tensor[n, H, W]``.
        offsets: ``(dx, dy)`` or ``Tensor[n, 2]`` of integers: ``dx`` columns to the right, ``dy`` rows down.

    Returns:
        ``Tensor[n, H, W]``; pixels moved past the edge are lost, entering pixels are 0.

    Raises:
        ConfigError: non-integer offsets.
    """
    off = torch.as_tensor(offsets, dtype=torch.float64).reshape(-1, 2).expand(images.shape[0], 2)
    if not torch.equal(off, torch.round(off)):
        raise ConfigError("shifts must be whole pixels (integers dx, dy).", key="offsets")
    off = off.to(torch.int64)
    h, w = images.shape[-2:]
    out = torch.zeros_like(images)
    for dx, dy in torch.unique(off, dim=0).tolist():
        mask = (off[:, 0] == dx) & (off[:, 1] == dy)
        if abs(dx) >= w or abs(dy) >= h:
            continue
        src = images[mask][:, max(-dy, 0) : h - max(dy, 0), max(-dx, 0) : w - max(dx, 0)]
        block = torch.zeros((int(mask.sum()), h, w), dtype=images.dtype)
        block[:, max(dy, 0) : h - max(-dy, 0), max(dx, 0) : w - max(-dx, 0)] = src
        out[mask] = block
    return out


def scale(images: torch.Tensor, factors: Any) -> torch.Tensor:
    """Scale every image about its centre by ``s`` (bilinear, zeros outside).

    Args:
        images: ``Tensor[n, H, W]``.
        factors: a number or ``Tensor[n]`` of positive factors (``s > 1`` enlarges).

    Returns:
        ``Tensor[n, H, W]``; ``s = 1`` returns the images unchanged.

    Raises:
        ConfigError: a factor that is not positive.
    """
    s = torch.as_tensor(factors, dtype=images.dtype).reshape(-1).expand(images.shape[0])
    if not bool((s > 0).all()):
        raise ConfigError("scale factors must be positive.", key="factors")
    out = images.clone()
    m = (s - 1).abs() > 1e-9
    if m.any():
        inv = 1.0 / s[m]
        z = torch.zeros_like(inv)
        theta = torch.stack([torch.stack([inv, z, z], -1), torch.stack([z, inv, z], -1)], -2)
        grid = F.affine_grid(theta, [int(m.sum()), 1, *images.shape[-2:]], align_corners=False)
        out[m] = F.grid_sample(images[m][:, None], grid, mode="bilinear", align_corners=False)[:, 0]
    return out


_ACTIONS: dict[str, Callable[[torch.Tensor, Any], torch.Tensor]] = {
    "rotation": rotate,
    "shift": shift,
    "scale": scale,
}


def transform(group: str, images: torch.Tensor, elements: Any) -> torch.Tensor:
    """Apply ``group``'s action: ``elements`` are degrees, ``(dx, dy)`` pairs or scale factors.

    Raises:
        ConfigError: unknown group.
    """
    if group not in _ACTIONS:
        raise ConfigError(f"unknown group '{group}'; use one of {', '.join(GROUPS)}.", key="group")
    return _ACTIONS[group](images, elements)


def group_elements(
    group: str, *, angle_step: float = 15.0, max_shift: int = 3, scales: Sequence[float] = ()
) -> list[Any]:
    """The sampled group elements of one orbit, identity first.

    Args:
        group: ``"rotation"``: ``0, step, 2 step, ... < 360`` degrees; ``"shift"``: every
            ``(dx, dy)`` with ``|dx|, |dy| <= max_shift`` (``(2 max_shift + 1)**2`` elements, row-major
            in ``dy`` then ``dx``, identity moved first); ``"scale"``: ``scales`` (1.0 added first
            when missing).

    Returns:
        a list of floats (rotation, scale) or ``(dx, dy)`` tuples (shift).

    Raises:
        ConfigError: unknown group, a step outside (0, 360], a negative ``max_shift``, empty or
            non-positive scales.
    """
    if group == "rotation":
        if not 0 < angle_step <= 360:
            raise ConfigError(f"angle_step must be in (0, 360] degrees, got {angle_step}.", key="angle_step")
        return [float(a) for a in np.arange(0.0, 360.0 - 1e-9, float(angle_step))]
    if group == "shift":
        if not isinstance(max_shift, int) or max_shift < 0:
            raise ConfigError(f"max_shift must be an integer >= 0, got {max_shift!r}.", key="max_shift")
        r = range(-max_shift, max_shift + 1)
        grid = [(dx, dy) for dy in r for dx in r]
        grid.remove((0, 0))
        return [(0, 0), *grid]
    if group == "scale":
        vals = [float(s) for s in scales]
        if not vals or any(not s > 0 for s in vals):
            raise ConfigError(
                f"scales must be a non-empty list of positive factors, got {scales!r}.", key="scales"
            )
        rest = [s for s in vals if abs(s - 1.0) > 1e-12]
        return [1.0, *rest]
    raise ConfigError(f"unknown group '{group}'; use one of {', '.join(GROUPS)}.", key="group")


def orbit_images(group: str, images: torch.Tensor, elements: Sequence[Any]) -> torch.Tensor:
    """Every image under every element: ``Tensor[|G|, n, H, W]`` (element-major)."""
    n = images.shape[0]
    tiled = images.repeat(len(elements), 1, 1)
    if group == "shift":
        el = torch.as_tensor([list(e) for e in elements], dtype=torch.float64).repeat_interleave(n, 0)
    else:
        el = torch.as_tensor([float(e) for e in elements], dtype=torch.float64).repeat_interleave(n)
    return transform(group, tiled, el).reshape(len(elements), n, *images.shape[-2:])


def orbit_predictions(
    predict: Callable[[torch.Tensor], torch.Tensor],
    group: str,
    images: torch.Tensor,
    elements: Sequence[Any],
    *,
    batch_size: int = 8192,
) -> torch.Tensor:
    """Class probabilities of every orbit element, computed as one batch of ``n |G|`` images.

    Args:
        predict: ``Tensor[m, H, W] -> Tensor[m, K]`` class probabilities.
        group: one of :data:`GROUPS`.
        images: ``Tensor[n, H, W]``.
        elements: from :func:`group_elements`.
        batch_size: images per call of ``predict``.

    Returns:
        ``Tensor[|G|, n, K]``.
    """
    orbit = orbit_images(group, images, elements).reshape(-1, *images.shape[-2:])
    with torch.no_grad():
        probs = torch.cat([predict(orbit[i : i + batch_size]) for i in range(0, orbit.shape[0], batch_size)])
    return probs.reshape(len(elements), images.shape[0], -1)


def orbit_predictions_loop(
    predict: Callable[[torch.Tensor], torch.Tensor], group: str, images: torch.Tensor, elements: Sequence[Any]
) -> torch.Tensor:
    """The plain loop over orbit elements (one transform and one ``predict`` call per element and sample).

    The baseline of the benchmark: the same numbers as :func:`orbit_predictions`, ``Tensor[|G|, n, K]``.
    """
    rows = []
    with torch.no_grad():
        for e in elements:
            rows.append(
                torch.cat([predict(transform(group, images[i : i + 1], e)) for i in range(images.shape[0])])
            )
    return torch.stack(rows)


class OrbitCurves:
    """The NERO quantities of one model on one data set.

    Attributes:
        accuracy: ``ndarray[|G|, n]``, ``1[argmax f(g . x) = y]``.
        confidence: ``ndarray[|G|, n]``, ``f(g . x)_y`` (probability of the true class).
        consensus: ``ndarray[n]``, ``argmax_k mean_g f(g . x)_k`` (the orbit consensus label).
        agreement: ``ndarray[|G|, n]``, ``1[argmax f(g . x) = consensus(x)]`` (the consensus-based
            NERO matrix, computable without labels).
        model_consensus: ``ndarray[|G|, n]``, ``argmax_k q(g . x)_k`` for the consensus probabilities
            ``q`` of several models at each transformed input (the model itself when none are given).
        model_agreement: ``ndarray[|G|, n]``, ``1[argmax f(g . x) = model_consensus]``.
        labels: ``ndarray[n]`` true labels.
    """

    def __init__(self, probs: torch.Tensor, labels: Any, model_consensus: torch.Tensor | None = None) -> None:
        p = np.asarray(probs.detach().cpu(), dtype=np.float64)
        y = np.asarray(labels).astype(np.int64)
        pred = p.argmax(-1)
        self.labels = y
        self.accuracy = (pred == y[None]).astype(np.float64)
        self.confidence = np.take_along_axis(p, y[None, :, None], -1)[..., 0]
        self.consensus = p.mean(0).argmax(-1)
        self.agreement = (pred == self.consensus[None]).astype(np.float64)
        q = p if model_consensus is None else np.asarray(model_consensus.detach().cpu(), dtype=np.float64)
        if q.shape != p.shape:
            raise ConfigError(
                f"consensus probabilities have shape {q.shape}, expected {p.shape}.", key="model_consensus"
            )
        self.model_consensus = q.argmax(-1)
        self.model_agreement = (pred == self.model_consensus).astype(np.float64)

    def curve(self, which: str = "accuracy", cls: int | None = None) -> np.ndarray:
        """The aggregate NERO curve ``mean_x N_x(g)``, ``ndarray[|G|]``, over all samples or one class."""
        m = getattr(self, which)
        if cls is not None:
            m = m[:, self.labels == cls]
        return m.mean(1) if m.shape[1] else np.full(m.shape[0], math.nan)


def nero_curves(probs: torch.Tensor, labels: Any, model_consensus: torch.Tensor | None = None) -> OrbitCurves:
    """:class:`OrbitCurves` from ``probs: Tensor[|G|, n, K]``, ``labels: [n]`` and optionally the
    consensus probabilities ``Tensor[|G|, n, K]`` of several models (NERO, sec. 3)."""
    return OrbitCurves(probs, labels, model_consensus)
