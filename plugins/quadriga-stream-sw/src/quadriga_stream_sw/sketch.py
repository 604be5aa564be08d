"""A KLL quantile sketch vectorised over L projections at once, in torch.

Every projection of a stream receives the same number of items, so the shape of
the sketch (how many items each compactor level holds) is the same for all L
projections and depends only on the stream length and the batch sizes. Each level
is therefore one ``Tensor[L, m_h]`` and a compaction is one sort and one gather
over all projections. Only the random offsets of the compactions differ per
projection. An item at level h stands for 2^h stream items, so the total weight is
always exactly the stream length n.

Source: Karnin, Lang & Liberty, "Optimal quantile approximation in streams",
FOCS 2016 (KLL, lazy compactors with capacities k c^(H-h-1), c = 2/3); used per
projection by Nguyen, "Streaming Sliced Optimal Transport", arXiv 2505.06835, Alg. 1.
"""

from __future__ import annotations

import math
from typing import Any

import torch

__all__ = ["BACKENDS", "BatchedKLL", "DataSketchesKLL", "make_sketch"]

BACKENDS = ("torch", "datasketches")


class BatchedKLL:
    """L parallel KLL sketches fed with the same number of items.

    Args:
        num_projections: L, the number of parallel sketches (>= 1).
        k: capacity of the top compactor (items); memory is about 3k + log2(n/k) items per sketch.
        c: capacity decay between levels, in (0.5, 1) (KLL's 2/3 by default).
        generator: ``torch.Generator`` for the compaction coin flips (the only randomness).
        dtype: storage dtype of the retained items (float64 by default).

    Raises:
        ValueError: ``k < 2``, ``c`` outside (0.5, 1) or ``num_projections < 1``.

    Source: KLL (Karnin, Lang, Liberty 2016), lazy variant: each level draws a fresh random offset
    every second compaction and uses its complement in the compaction after it.
    """

    def __init__(
        self,
        num_projections: int,
        k: int,
        *,
        c: float = 2.0 / 3.0,
        generator: torch.Generator | None = None,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        if num_projections < 1:
            raise ValueError(f"num_projections must be >= 1, got {num_projections}")
        if k < 2:
            raise ValueError(f"k must be >= 2, got {k}")
        if not 0.5 < c < 1.0:
            raise ValueError(f"c must lie in (0.5, 1), got {c}")
        self.num_projections, self.k, self.c = int(num_projections), int(k), float(c)
        self.generator, self.dtype = generator, dtype
        self.levels: list[torch.Tensor] = [torch.empty(self.num_projections, 0, dtype=dtype)]
        self._coins: list[torch.Tensor | None] = [None]
        self.n = 0
        self.compactions = 0

    # ------------------------------------------------------------------ structure
    def capacity(self, h: int) -> int:
        """Capacity (items) of level ``h`` given the current number of levels H: max(2, ceil(k c^(H-h-1)))."""
        depth = len(self.levels) - h - 1
        return max(2, math.ceil(self.k * self.c**depth))

    @property
    def num_retained(self) -> int:
        """Items retained per projection (the same for every projection)."""
        return sum(int(level.shape[1]) for level in self.levels)

    def _max_size(self) -> int:
        return sum(self.capacity(h) for h in range(len(self.levels)))

    # ------------------------------------------------------------------ updates
    def update(self, values: torch.Tensor) -> None:
        """Insert a batch: ``values`` is ``Tensor[B, L]`` (column l goes to sketch l).

        The caller checks finiteness (``StreamSW`` does, on the un-projected batch).

        Raises:
            ValueError: wrong shape.
        """
        if values.ndim != 2 or values.shape[1] != self.num_projections:
            raise ValueError(f"values must have shape [B, {self.num_projections}], got {tuple(values.shape)}")
        if values.shape[0] == 0:
            return
        self.levels[0] = torch.cat([self.levels[0], values.detach().to(self.dtype).T], dim=1)
        self.n += int(values.shape[0])
        self._compress()

    def _compress(self) -> None:
        while self.num_retained > self._max_size():
            for h in range(len(self.levels)):
                if self.levels[h].shape[1] >= self.capacity(h):
                    self._compact(h)
                    break

    def _coin(self, h: int) -> torch.Tensor:
        """Offset of the next compaction of level ``h``: a fresh coin every second compaction and
        its complement in between (KLL's pairing of compactions, so each pair is unbiased)."""
        coin = self._coins[h]
        if coin is None:
            coin = torch.randint(0, 2, (self.num_projections, 1), generator=self.generator)
            self._coins[h] = coin
            return coin
        self._coins[h] = None
        return 1 - coin

    def _compact(self, h: int) -> None:
        if h + 1 == len(self.levels):
            self.levels.append(torch.empty(self.num_projections, 0, dtype=self.dtype))
            self._coins.append(None)
        level = torch.sort(self.levels[h], dim=1).values
        m = level.shape[1]
        even = m - (m % 2)  # an odd item (the largest) stays at level h with its weight
        pairs = level[:, :even].reshape(self.num_projections, even // 2, 2)
        index = self._coin(h).unsqueeze(-1).expand(-1, even // 2, 1)
        promoted = torch.gather(pairs, 2, index).squeeze(-1)
        self.levels[h] = level[:, even:]
        self.levels[h + 1] = torch.cat([self.levels[h + 1], promoted], dim=1)
        self.compactions += 1

    # ------------------------------------------------------------------ queries
    def atoms(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The weighted support of every sketch.

        Returns:
            ``(values, weights)``: ``values`` is ``Tensor[M, L]`` (M = ``num_retained``),
            ``weights`` is ``Tensor[M]`` (float64), non-negative, summing to 1: an item
            at level h has weight 2^h / n.

        Raises:
            ValueError: the sketch is empty.
        """
        if self.n == 0:
            raise ValueError("the sketch is empty: update it with at least one batch first")
        values = torch.cat(self.levels, dim=1).T
        weights = torch.cat(
            [
                torch.full((int(lv.shape[1]),), float(2**h), dtype=torch.float64)
                for h, lv in enumerate(self.levels)
            ]
        )
        return values, weights / float(self.n)


class DataSketchesKLL:
    """The same interface over L ``datasketches.kll_doubles_sketch`` objects (Apache DataSketches, C++).

    Args:
        num_projections: L.
        k: DataSketches' ``k`` (>= 8; its top capacity, c = 2/3, minimum level width 8).
        generator: unused: DataSketches draws its compaction coins from its own internal
            random engine, which cannot be seeded from Python, so estimates are not
            bit-reproducible with this backend.
        dtype: dtype of the returned atoms.

    Raises:
        ValueError: ``k`` outside [8, 65535].

    Source: Apache DataSketches KLL (Karnin, Lang, Liberty 2016).
    """

    def __init__(
        self,
        num_projections: int,
        k: int,
        *,
        c: float = 2.0 / 3.0,
        generator: Any = None,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        import datasketches

        if not 8 <= k <= 65535:
            raise ValueError(f"datasketches' KLL needs 8 <= k <= 65535, got {k}")
        self.num_projections, self.k, self.dtype = int(num_projections), int(k), dtype
        self.sketches = [datasketches.kll_doubles_sketch(self.k) for _ in range(self.num_projections)]
        self.n = 0

    @property
    def num_retained(self) -> int:
        """Largest number of items retained by one of the L sketches."""
        return max(s.num_retained for s in self.sketches)

    def update(self, values: torch.Tensor) -> None:
        """Insert a batch ``Tensor[B, L]`` (column l goes to sketch l)."""
        if values.ndim != 2 or values.shape[1] != self.num_projections:
            raise ValueError(f"values must have shape [B, {self.num_projections}], got {tuple(values.shape)}")
        cols = values.detach().to(torch.float64).T.contiguous().numpy()
        for sketch, col in zip(self.sketches, cols, strict=False):
            sketch.update(col)
        self.n += int(values.shape[0])

    def atoms(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(values Tensor[M, L], weights Tensor[M, L])``, zero-padded to the largest sketch.

        Each row of weights sums to 1.
        """
        if self.n == 0:
            raise ValueError("the sketch is empty: update it with at least one batch first")
        size = self.num_retained
        values = torch.zeros(size, self.num_projections, dtype=self.dtype)
        weights = torch.zeros(size, self.num_projections, dtype=torch.float64)
        for j, sketch in enumerate(self.sketches):
            pairs = list(sketch)
            values[: len(pairs), j] = torch.tensor([v for v, _ in pairs], dtype=self.dtype)
            weights[: len(pairs), j] = torch.tensor([w for _, w in pairs], dtype=torch.float64)
        return values, weights / float(self.n)


def make_sketch(
    backend: str, num_projections: int, k: int, *, generator: Any = None, dtype: torch.dtype = torch.float64
) -> BatchedKLL | DataSketchesKLL:
    """Build the sketch of ``backend`` (``"torch"`` or ``"datasketches"``).

    Raises:
        ValueError: unknown backend.
    """
    if backend == "torch":
        return BatchedKLL(num_projections, k, generator=generator, dtype=dtype)
    if backend == "datasketches":
        return DataSketchesKLL(num_projections, k, generator=generator, dtype=dtype)
    raise ValueError(f"unknown sketch backend '{backend}'; use one of {BACKENDS}")
