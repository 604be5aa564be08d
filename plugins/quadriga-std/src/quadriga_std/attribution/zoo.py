"""Subset zoos: models trained on random subsets, their masks and target margins, cached on disk.

A zoo is ``m`` random subsets ``S_i`` of the training set, each of size ``round(alpha n)``
(the datamodels' sampling, Ilyas et al. 2022, arXiv 2202.00622, sec. 2), a model trained on each
by the task's deterministic :class:`~quadriga_std.attribution.training.TrainingMap`, and the
margins of the target examples under each model. ``alpha`` near 1 gives random *removal* sets
(``alpha = 0.99``: remove 1 %), the ground truth of MAGIC's LDS.

The expensive part (training ``m`` models) is paid once: the zoo is stored as ``zoo.npz`` in a
directory named by a hash of everything that determines it (data, model, training settings,
``alpha``, ``m``, seed), and a partly computed zoo resumes where it stopped (margins are saved
after every chunk of models).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from quadriga_std._paths import cache_root

__all__ = ["SubsetZoo", "default_cache_dir", "load_or_build_zoo", "random_masks"]


def default_cache_dir() -> Path:
    """``$QUADRIGA_CACHE_DIR/attribution`` (default ``$XDG_CACHE_HOME/quadriga`` or ``~/.cache/quadriga``)."""
    return cache_root() / "attribution"


def random_masks(n: int, m: int, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """``m`` masks ``bool[m, n]``, each with exactly ``max(1, round(alpha n))`` ones, uniformly at random.

    Raises:
        ValueError: ``alpha`` outside (0, 1].
    """
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    k = max(1, round(alpha * n))
    masks = np.zeros((m, n), dtype=bool)
    for i in range(m):
        masks[i, rng.choice(n, size=k, replace=False)] = True
    return masks


@attrs.frozen
class SubsetZoo:
    """Masks and target margins of ``m`` models trained on random ``alpha``-subsets.

    Attributes:
        masks: ``bool[m, n]``: ``masks[i, j]`` says training point j is in subset i.
        margins: ``float64[m, k]``: margin of target example t under model i.
        alpha: the subset fraction.
        seed: the seed of the masks.
        seconds: wall-clock seconds spent training (summed over resumed parts).
        path: the ``zoo.npz`` file it was read from or written to (``None`` in memory).
    """

    masks: np.ndarray
    margins: np.ndarray
    alpha: float
    seed: int
    seconds: float = 0.0
    path: Path | None = None

    @property
    def m(self) -> int:
        """Number of subset models."""
        return int(self.masks.shape[0])

    def split(self, num_first: int) -> tuple[SubsetZoo, SubsetZoo]:
        """The first ``num_first`` models and the rest (e.g. regression and validation models)."""
        a = attrs.evolve(self, masks=self.masks[:num_first], margins=self.margins[:num_first], path=None)
        b = attrs.evolve(self, masks=self.masks[num_first:], margins=self.margins[num_first:], path=None)
        return a, b


def zoo_key(identity: Mapping[str, Any]) -> str:
    """A 16-hex-digit hash of the JSON of ``identity`` (what determines the zoo)."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:16]


def load_or_build_zoo(
    identity: Mapping[str, Any],
    *,
    n: int,
    m: int,
    alpha: float,
    seed: int,
    retrain: Callable[[np.ndarray], np.ndarray],
    cache_dir: Path | None,
    chunk: int = 256,
) -> SubsetZoo:
    """Read the zoo named by ``identity`` from ``cache_dir``, training whatever is missing.

    Args:
        identity: JSON-ready description of the data, model and training (hashed with
            ``m``, ``alpha`` and ``seed`` into the directory name).
        n: training-set size.
        m: number of subset models.
        alpha: subset fraction in (0, 1].
        seed: seed of the masks (``numpy.random.default_rng(seed)``).
        retrain: ``masks float64[b, n] -> margins float64[b, k]`` (trains ``b`` models).
        cache_dir: where zoos live; ``None`` keeps it in memory only.
        chunk: models trained between two saves (the resume granularity).

    Returns:
        the complete :class:`SubsetZoo`.
    """
    import time

    masks = random_masks(n, m, alpha, np.random.default_rng(seed))
    path = None
    done, margins, seconds = 0, None, 0.0
    if cache_dir is not None:
        key = zoo_key({**identity, "m": m, "alpha": alpha, "seed": seed, "n": n})
        path = Path(cache_dir) / key / "zoo.npz"
        if path.exists():
            with np.load(path) as f:
                if np.array_equal(f["masks"], masks):
                    done, margins, seconds = int(f["done"]), f["margins"], float(f["seconds"])
    while done < m:
        start = time.perf_counter()
        part = np.asarray(retrain(masks[done : done + chunk].astype(np.float64)), dtype=np.float64)
        seconds += time.perf_counter() - start
        if margins is None:
            margins = np.full((m, part.shape[1]), np.nan)
        margins[done : done + len(part)] = part
        done += len(part)
        if path is not None:
            _save(path, masks=masks, margins=margins, done=done, seconds=seconds, identity=identity)
    assert margins is not None
    return SubsetZoo(masks=masks, margins=margins, alpha=alpha, seed=seed, seconds=seconds, path=path)


def _save(path: Path, *, identity: Mapping[str, Any], **arrays: Any) -> None:
    """Write ``zoo.npz`` (and ``identity.json``) atomically: a temp file, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)
    ident = path.with_name("identity.json")
    if not ident.exists():
        ident.write_text(json.dumps(identity, sort_keys=True, default=str, indent=1))
