"""Streaming sliced Wasserstein objects: Stream-SW, its one-sided variant, and the subsample baseline.

Usage from Python::

    sw = StreamSW(dim=2, num_projections=100, k=100, generator=torch.Generator().manual_seed(0))
    for xb, yb in zip(source_batches, target_batches):
        sw.update_source(xb)      # Tensor[B, d]
        sw.update_target(yb)
    est = sw.estimate()           # Estimate(value=SW_2, stderr over projections)
    sw.memory_floats()            # retained floats, O(L k) whatever the stream length

Source: Khai Nguyen, "Streaming Sliced Optimal Transport", arXiv 2505.06835
(Stream-SW: one KLL sketch per projection and per distribution; one-sided Stream-SW
for gradient flows keeps the model points exact).
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from quadriga.artifacts import Estimate
from quadriga.errors import ConfigError
from quadriga_stream_sw.sketch import make_sketch
from quadriga_stream_sw.wasserstein import projected_wpp, random_projections, sliced_value

__all__ = ["OneSidedStreamSW", "StreamSW", "SubsampleSW", "as_batch"]


def as_batch(batch: Any, dim: int, dtype: torch.dtype, name: str = "batch") -> torch.Tensor:
    """Convert a batch (tensor, array or nested list) to ``Tensor[B, d]`` of ``dtype``.

    Raises:
        ConfigError: wrong shape or non-finite entries.
    """
    x = torch.as_tensor(batch)
    if x.ndim == 1 and dim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[1] != dim:
        raise ConfigError(
            f"'{name}' must have shape [B, {dim}], got {tuple(x.shape)}; "
            "pass one point per row with the dimension the estimator was built for.",
            key=name,
        )
    if not torch.isfinite(x).all():
        raise ConfigError(f"'{name}' contains NaN or inf.", key=name)
    return x.to(dtype)


class _Projected:
    """Shared set-up: dimension, directions, order, dtype."""

    def __init__(
        self,
        dim: int,
        *,
        num_projections: int,
        p: float,
        generator: torch.Generator | None,
        projections: torch.Tensor | None,
        dtype: torch.dtype,
    ) -> None:
        if dim < 1:
            raise ConfigError(f"dim must be >= 1, got {dim}.", key="dim")
        if num_projections < 1:
            raise ConfigError(f"num_projections must be >= 1, got {num_projections}.", key="num_projections")
        if p < 1:
            raise ConfigError(f"p must be >= 1, got {p}.", key="p")
        self.dim, self.p, self.dtype = int(dim), float(p), dtype
        if projections is None:
            projections = random_projections(dim, num_projections, generator, dtype)
        projections = torch.as_tensor(projections, dtype=dtype)
        if projections.ndim != 2 or projections.shape[1] != dim:
            raise ConfigError(
                f"projections must have shape [L, {dim}], got {tuple(projections.shape)} "
                "(POT's projections are [d, L]: transpose them).",
                key="projections",
            )
        self.theta = projections
        self.num_projections = int(projections.shape[0])

    def new_sketch(self, backend: str, k: int, generator: torch.Generator | None) -> Any:
        """One quantile sketch over all L projections (``ConfigError`` naming ``k`` or ``backend``)."""
        try:
            return make_sketch(backend, self.num_projections, k, generator=generator, dtype=self.dtype)
        except ValueError as exc:
            raise ConfigError(str(exc), key="k" if "k" in str(exc) else "backend") from None

    def project(self, batch: Any, name: str) -> torch.Tensor:
        """``Tensor[B, d] -> Tensor[B, L]`` of the projections theta_l^T x."""
        return as_batch(batch, self.dim, self.dtype, name) @ self.theta.T


class _Sketched(_Projected):
    """Directions and one quantile sketch of all L projections per sketched stream.

    The sketches are made in the order of ``sides`` from ``generator`` (after the directions), so
    a two-sided estimator draws the source's sketch before the target's.
    """

    #: the sketched streams, each an attribute holding its sketch
    sides: ClassVar[tuple[str, ...]] = ("target",)
    source: Any
    target: Any

    def __init__(
        self,
        dim: int,
        *,
        num_projections: int = 100,
        k: int = 200,
        p: float = 2.0,
        generator: torch.Generator | None = None,
        projections: torch.Tensor | None = None,
        backend: str = "torch",
        dtype: torch.dtype = torch.float64,
    ) -> None:
        super().__init__(
            dim,
            num_projections=num_projections,
            p=p,
            generator=generator,
            projections=projections,
            dtype=dtype,
        )
        for side in self.sides:
            setattr(self, side, self.new_sketch(backend, k, generator))
        self.k, self.backend = int(k), backend

    def update_target(self, batch: Any) -> None:
        """Feed a batch ``Tensor[B, d]`` of the target stream (any B >= 0)."""
        self.target.update(self.project(batch, "batch"))


class StreamSW(_Sketched):
    """Two-sided Stream-SW: one KLL sketch per projection for each of the two streams.

    Args:
        dim: d, dimension of the points.
        num_projections: L, the number of random directions (fixed once drawn).
        k: KLL parameter; each sketch retains about 3k + log2(n/k) items.
        p: order of the Wasserstein distance (>= 1).
        generator: ``torch.Generator`` for the directions and the compaction coins.
        projections: optional ``Tensor[L, d]`` unit directions (overrides ``num_projections``).
        backend: ``"torch"`` (vectorised over L, seeded) or ``"datasketches"`` (C++, not seedable).
        dtype: dtype of projections and retained items.

    Raises:
        ConfigError: invalid dimension, order, projections or batches.

    Source: Nguyen 2025, arXiv 2505.06835, Stream-SW (Alg. 1 and Definition of the estimator
    SW_p^p ~ (1/L) sum_l W_p^p(sketch_l(mu), sketch_l(nu))).
    """

    sides: ClassVar[tuple[str, ...]] = ("source", "target")

    def update_source(self, batch: Any) -> None:
        """Feed a batch ``Tensor[B, d]`` of the source stream (any B >= 0)."""
        self.source.update(self.project(batch, "batch"))

    def memory_floats(self) -> int:
        """Floats retained by both sketches (items of all L projections; directions not counted)."""
        return int(self.source.num_retained + self.target.num_retained) * self.num_projections

    def estimate(self) -> Estimate:
        """SW_p between the two streams seen so far.

        Returns:
            ``Estimate(value: float SW_p (units of x), stderr: float, the delta-method standard error
            over the L directions)``; ``info`` has ``wpp`` (list of L per-direction W_p^p),
            ``n_source``, ``n_target``, ``retained_per_projection`` (both streams) and ``memory_floats``.

        Raises:
            ConfigError: a stream is still empty.
        """
        if self.source.n == 0 or self.target.n == 0:
            raise ConfigError(
                "both streams need at least one point before estimate(); "
                "call update_source() and update_target() first."
            )
        u, uw = self.source.atoms()
        v, vw = self.target.atoms()
        wpp = projected_wpp(u, v, uw, vw, self.p)
        value, stderr = sliced_value(wpp, self.p)
        info = {
            "n_source": self.source.n,
            "n_target": self.target.n,
            "k": self.k,
            "backend": self.backend,
            "num_projections": self.num_projections,
            "p": self.p,
            "retained_per_projection": int(self.source.num_retained + self.target.num_retained),
            "memory_floats": self.memory_floats(),
            "wpp": wpp.tolist(),
        }
        return Estimate(value=float(value), stderr=stderr, info=info)


class OneSidedStreamSW(_Sketched):
    """One-sided Stream-SW: only the target stream is sketched; the source stays exact and differentiable.

    Args:
        dim, num_projections, k, p, generator, projections, backend, dtype: as :class:`StreamSW`.

    ``distance(x)`` returns SW_p(x, sketched target) as a 0-d tensor with gradients w.r.t. ``x``
    (for gradient flows that move ``x`` towards the target stream).

    Source: Nguyen 2025, arXiv 2505.06835, one-sided Stream-SW (gradient-flow experiments).
    """

    def memory_floats(self) -> int:
        """Floats retained by the target sketch (the source is the caller's own tensor)."""
        return int(self.target.num_retained) * self.num_projections

    def distance_and_wpp(
        self, source: torch.Tensor, weights: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(SW_p as a 0-d tensor, W_p^p per direction Tensor[L])`` between ``source`` and the sketch.

        Args:
            source: ``Tensor[n, d]`` points (may require grad); cast to the sketch dtype.
            weights: optional probability weights ``Tensor[n]``.

        Raises:
            ConfigError: the target stream is empty, bad shapes or weights.
        """
        if self.target.n == 0:
            raise ConfigError("the target stream is empty: call update_target() before distance().")
        if source.ndim != 2 or source.shape[1] != self.dim:
            raise ConfigError(
                f"source must have shape [n, {self.dim}], got {tuple(source.shape)}.", key="source"
            )
        proj = source.to(self.dtype) @ self.theta.T
        v, vw = self.target.atoms()
        wpp = projected_wpp(proj, v, weights, vw, self.p)
        return sliced_value(wpp, self.p)[0], wpp

    def distance(self, source: torch.Tensor, weights: torch.Tensor | None = None) -> torch.Tensor:
        """SW_p(source, target sketch): a differentiable 0-d tensor (units of x)."""
        return self.distance_and_wpp(source, weights)[0]

    def estimate(self, source: torch.Tensor, weights: torch.Tensor | None = None) -> Estimate:
        """``Estimate(value: 0-d tensor SW_p (keeps the graph), stderr over directions)``."""
        value, wpp = self.distance_and_wpp(source, weights)
        _, stderr = sliced_value(wpp.detach(), self.p)
        info = {
            "n_source": int(source.shape[0]),
            "n_target": self.target.n,
            "k": self.k,
            "retained_per_projection": int(self.target.num_retained),
            "memory_floats": self.memory_floats(),
        }
        return Estimate(value=value, stderr=stderr, info=info)


class SubsampleSW(_Projected):
    """Equal-memory baseline: a uniform random subsample of m points per stream, correctly weighted 1/m.

    Each stream keeps the projections of m points chosen uniformly without replacement
    among all points seen (bottom-m of i.i.d. uniform keys, a reservoir sample), so
    memory is m floats per projection per stream, as a KLL sketch retaining m items.

    Args:
        dim, num_projections, p, generator, projections, dtype: as :class:`StreamSW`.
        num_retained: m >= 1, points kept per stream.

    Source: the random-subsampling baseline of Nguyen 2025 (arXiv 2505.06835, Gaussian
    experiments), with weights 1/m on the m kept points (the reference code passed
    length-n weights 1/n, which scales the result by sqrt(m/n)).
    """

    def __init__(
        self,
        dim: int,
        *,
        num_retained: int,
        num_projections: int = 100,
        p: float = 2.0,
        generator: torch.Generator | None = None,
        projections: torch.Tensor | None = None,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        super().__init__(
            dim,
            num_projections=num_projections,
            p=p,
            generator=generator,
            projections=projections,
            dtype=dtype,
        )
        if num_retained < 1:
            raise ConfigError(f"num_retained must be >= 1, got {num_retained}.", key="num_retained")
        self.m, self.generator = int(num_retained), generator
        empty = (torch.empty(0, self.num_projections, dtype=dtype), torch.empty(0, dtype=torch.float64))
        self._res = {"source": empty, "target": empty}
        self.n = {"source": 0, "target": 0}

    def _update(self, which: str, batch: Any) -> None:
        proj = self.project(batch, "batch")
        keys = torch.rand(proj.shape[0], generator=self.generator, dtype=torch.float64)
        values, old_keys = self._res[which]
        values, keys = torch.cat([values, proj]), torch.cat([old_keys, keys])
        if keys.shape[0] > self.m:
            keep = torch.topk(keys, self.m, largest=False).indices
            values, keys = values[keep], keys[keep]
        self._res[which] = (values, keys)
        self.n[which] += int(proj.shape[0])

    def update_source(self, batch: Any) -> None:
        """Feed a source batch ``Tensor[B, d]``."""
        self._update("source", batch)

    def update_target(self, batch: Any) -> None:
        """Feed a target batch ``Tensor[B, d]``."""
        self._update("target", batch)

    def memory_floats(self) -> int:
        """Retained floats: m projected values per direction per stream."""
        return sum(int(v.shape[0]) for v, _ in self._res.values()) * self.num_projections

    def estimate(self) -> Estimate:
        """SW_p between the two subsamples with weights 1/m each; same return as :meth:`StreamSW.estimate`."""
        if self.n["source"] == 0 or self.n["target"] == 0:
            raise ConfigError("both streams need at least one point before estimate().")
        u, v = self._res["source"][0], self._res["target"][0]
        uw = torch.full((u.shape[0],), 1.0 / u.shape[0], dtype=torch.float64)
        vw = torch.full((v.shape[0],), 1.0 / v.shape[0], dtype=torch.float64)
        wpp = projected_wpp(u, v, uw, vw, self.p)
        value, stderr = sliced_value(wpp, self.p)
        info = {
            "n_source": self.n["source"],
            "n_target": self.n["target"],
            "num_retained": self.m,
            "num_projections": self.num_projections,
            "p": self.p,
            "retained_per_projection": int(u.shape[0] + v.shape[0]),
            "memory_floats": self.memory_floats(),
            "wpp": wpp.tolist(),
        }
        return Estimate(value=float(value), stderr=stderr, info=info)
