"""The ``kernel-thinning`` Sampler: KT, target KT, power KT, KT+ and KT-Compress++ via goodpoints.

The algorithms themselves are goodpoints' (``kt.split_K``, ``kt.swap_K``, ``kt.thin``,
``kt.thin_K``, ``compress.compresspp``); this module chooses the sizes, kernels,
memory mode and seeds, and turns indices back into a :class:`quadriga.Samples`.
"""

from __future__ import annotations

import math
import time
from typing import ClassVar

import attrs
import numpy as np
import torch
from goodpoints import compress as gp_compress
from goodpoints import kt as gp_kt

from quadriga.artifacts import Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Sampler
from quadriga.params import param
from quadriga.seeding import numpy_rng
from quadriga.validators import in_range, non_negative_int, one_of, optional, positive
from quadriga_kernel_thinning.kernels import KERNEL_NAMES, Kernel
from quadriga_kernel_thinning.planning import (
    VARIANTS,
    available_memory_bytes,
    kernel_bytes,
    median_bandwidth,
    plan_sizes,
    split_kernel,
)

__all__ = ["KernelThinning", "compress_pp"]

_GIB = 1024**3


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**31 - 1))


def compress_pp(
    x: np.ndarray, split: Kernel, swap: Kernel, *, g: int, delta: float, rng: np.random.Generator
) -> np.ndarray:
    """KT-Compress++: goodpoints' ``compress.compresspp`` with symmetrized KT halving and KT thinning.

    Args:
        x: ``[n, d]`` float64 with ``n = 4^m``.
        split, swap: the KT-SPLIT and KT-SWAP kernels.
        g: oversampling parameter (Compress keeps ``2^g sqrt(n)`` points before the final KT).
        delta: total failure probability, divided between the Compress halvings and the final
            thinning as in goodpoints' ``compresspp_kt`` (Shetty, Dwivedi & Mackey, ICLR 2022, Thm. 4).
        rng: source of the goodpoints seeds and the symmetrization coins.

    Returns:
        ``[sqrt(n)]`` int64 row indices into ``x``.

    Source: Shetty, Dwivedi & Mackey, Distribution Compression in Near-linear Time (ICLR 2022), Alg. 1-2.
    """
    n = x.shape[0]
    log2_sqrtn = (n.bit_length() - 1) // 2
    size = 2**log2_sqrtn
    levels = max(0, log2_sqrtn - g)  # depth of the Compress recursion
    num_halves = max(1, (4**levels - 1) // 3)
    thin_frac = 1.0 if levels == 0 else g / (g + 2**g * levels) if g > 0 else 0.5
    halve_delta = delta * (1 - thin_frac) / num_halves if levels else delta
    thin_delta = delta * thin_frac
    same = split == swap

    def _matrices(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k_split = split.matrix(y)
        return k_split, (k_split if same else swap.matrix(y))

    def halve(y: np.ndarray) -> np.ndarray:
        k_split, k_swap = _matrices(y)
        kept = gp_kt.thin_K(k_split, k_swap, 1, delta=halve_delta, seed=_seed(rng), unique=True)
        if rng.random() < 0.5:  # symmetrize: the complement is an equally good halving
            mask = np.ones(y.shape[0], dtype=bool)
            mask[kept] = False
            return np.flatnonzero(mask)
        return np.sort(kept)

    def thin(y: np.ndarray) -> np.ndarray:
        m = round(math.log2(y.shape[0] / size))
        if m == 0:
            return np.arange(y.shape[0])
        k_split, k_swap = _matrices(y)
        return gp_kt.thin_K(k_split, k_swap, m, delta=thin_delta, seed=_seed(rng))

    return np.asarray(gp_compress.compresspp(x, halve, thin, g), dtype=np.int64)


@attrs.define(kw_only=True)
class KernelThinning(Sampler):
    """Kernel thinning of a ``Samples`` artifact to about ``sqrt(n)`` points.

    Input: ``target`` is a :class:`quadriga.Samples` with ``x: Tensor[n, d]`` (typically an MCMC
    output, equally weighted). Output: ``Samples`` with ``x: Tensor[s, d]`` (same dtype and units),
    ``s = n_used / 2^m`` (``sqrt(n)`` for ``n = 4^m``); ``info`` holds ``indices`` (rows of the input),
    ``input_size``, ``used_size``, ``halving_rounds``, ``bandwidth``, ``store_K``, ``kernel_matrix_bytes``,
    ``seconds``, and the input's cost counters ``score_evals``/``log_prob_evals``. For ``n`` not of the
    required form (``2^m`` divides it for KT, ``4^m`` for Compress++)
    a uniformly random subset of the right size (order kept) is thinned, so every input point has the
    same chance to be kept.

    Raises:
        ConfigError: weighted input, fewer than 4 points, a power kernel that does not exist
            (e.g. root KT with the Laplace kernel), or ``store_K = true`` with an ``8 n^2``-byte
            kernel matrix that does not fit in the available memory; all before the O(n^2) work.

    Source: Dwivedi & Mackey, Kernel Thinning (JMLR 2024, Alg. 1); Dwivedi & Mackey, Generalized
    Kernel Thinning (ICLR 2022: target KT, power KT, KT+); Shetty, Dwivedi & Mackey, Distribution
    Compression in Near-linear Time (ICLR 2022: Compress++). Implementation: goodpoints (Microsoft).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"target": (Samples,)}

    variant: str = param(
        "root",
        doc="'root' (square-root split kernel), 'target', 'power' or 'kt+'",
        validator=one_of(VARIANTS),
    )
    kernel: str = param(
        "gaussian",
        doc="'gaussian' exp(-r^2/(2 sigma^2)), 'imq' (1+r^2/sigma^2)^-nu, "
        "'laplace' exp(-r/sigma) or 'matern' (scikit-learn convention)",
        validator=one_of(KERNEL_NAMES),
    )
    bandwidth: float | None = param(
        None,
        doc="kernel bandwidth sigma (units of x); None: median pairwise distance of up to 1024 input points",
        validator=optional(positive),
    )
    nu: float | None = param(
        None,
        doc="imq exponent (default 0.5) or Matérn smoothness (default 1.5)",
        validator=optional(positive),
    )
    power: float | None = param(
        None,
        doc="alpha in (0, 1] of the 'power'/'kt+' split kernel; None: 0.5 where "
        "it exists, else midway between d/(2 nu + d) and 1",
        validator=optional(in_range(0, 1, low_open=True)),
    )
    delta: float = param(
        0.5,
        doc="KT failure probability delta in (0, 1)",
        validator=in_range(0, 1, low_open=True, high_open=True),
    )
    compress: bool = param(False, doc="run KT-Compress++ (near-linear time, O(4^g n) memory)")
    g: int = param(4, doc="Compress++ oversampling parameter g (>= 0)", validator=non_negative_int)
    halving_rounds: int | None = param(
        None,
        doc="KT halving rounds m (output n / 2^m points); None: round(log2(n) / 2), about sqrt(n) points",
    )
    store_K: bool | None = param(
        None,
        doc="keep the n x n kernel matrix (8 n^2 bytes, fast) or not (O(n d) "
        "memory, slow); None: store it when it fits under kernel_memory_limit",
    )
    kernel_memory_limit: float = param(
        4.0, doc="largest kernel matrix store_K = None may allocate (GiB)", validator=positive
    )

    def __attrs_post_init__(self) -> None:
        if self.nu is not None and self.kernel in ("gaussian", "laplace"):
            raise ConfigError(
                f"nu has no meaning for the {self.kernel} kernel; remove it or use "
                'kernel = "imq" or "matern".',
                key="nu",
            )
        if self.power is not None and self.variant in ("root", "target"):
            raise ConfigError(
                f'power is used by variant "power" and "kt+" only, not "{self.variant}"; '
                "remove it or change the variant.",
                key="power",
            )
        if self.halving_rounds is not None and self.halving_rounds < 0:
            raise ConfigError(
                f"halving_rounds must be >= 0, got {self.halving_rounds}.", key="halving_rounds"
            )

    def _store_k(self, n_used: int) -> bool:
        need = kernel_bytes(n_used)
        avail = available_memory_bytes()
        if self.store_K is None:
            cap = self.kernel_memory_limit * _GIB
            return need <= (cap if avail is None else min(cap, 0.5 * avail))
        if self.store_K and avail is not None and need > 0.9 * avail:
            raise ConfigError(
                f"store_K = true needs an {n_used} x {n_used} kernel matrix of {need / _GIB:.2f} GiB "
                f"but only {avail / _GIB:.2f} GiB of memory is available; set store_K = false "
                "(O(n d) memory, slower), "
                "or compress = true, or thin fewer points.",
                key="store_K",
            )
        return bool(self.store_K)

    def _check_compress_memory(self, largest: int) -> None:
        need, avail = 2 * kernel_bytes(largest), available_memory_bytes()
        if avail is not None and need > 0.9 * avail:
            raise ConfigError(
                f"Compress++ with g = {self.g} thins {largest} points at once, whose two kernel matrices "
                "need "
                f"{need / _GIB:.2f} GiB but only {avail / _GIB:.2f} GiB is available; lower g.",
                key="g",
            )

    def sample(self, target: Samples, *, generator: torch.Generator) -> Samples:
        """Thin ``target.x: Tensor[n, d]`` to a coreset ``Tensor[s, d]`` (see the class docstring).

        Args:
            target: the ``Samples`` to thin (``log_weights`` must be ``None``).
            generator: ``torch.Generator``; the subsample, goodpoints' seeds and the Compress++ coins
                are all derived from it.

        Returns:
            :class:`quadriga.Samples` (``info['indices']`` are row indices into ``target.x``).

        Raises:
            ConfigError: see the class docstring.
        """
        start = time.perf_counter()
        if not isinstance(target, Samples):
            raise ConfigError(
                f"kernel-thinning thins a Samples artifact, got {type(target).__name__}; "
                'feed it the output of a sampler stage (inputs = { target = "mala" }).',
                key="target",
            )
        if target.log_weights is not None:
            raise ConfigError(
                "kernel-thinning needs equally weighted samples but the input has log_weights; "
                "resample it first.",
                key="target",
            )
        x_in = target.x
        x = (
            x_in.detach().cpu().to(torch.float64).numpy()
            if torch.is_tensor(x_in)
            else np.asarray(x_in, float)
        )
        if x.ndim != 2:
            raise ConfigError(f"Samples.x must have shape [n, d], got {tuple(x.shape)}.", key="target")
        if not np.isfinite(x).all():
            raise ConfigError("the input samples contain NaN or inf; fix the upstream sampler.", key="target")
        n, dim = x.shape
        n_used, m = plan_sizes(n, compress=self.compress, halving_rounds=self.halving_rounds)
        rng = numpy_rng(generator)
        rows = np.sort(rng.choice(n, size=n_used, replace=False)) if n_used < n else np.arange(n)
        xs = np.ascontiguousarray(x[rows])
        bandwidth = float(self.bandwidth) if self.bandwidth is not None else median_bandwidth(xs)
        split, swap, alpha = split_kernel(self.variant, self.kernel, bandwidth, self.nu, self.power, dim)
        if self.compress:
            self._check_compress_memory(min(n_used, 2**self.g * 2**m))
        store = True if self.compress else self._store_k(n_used)
        seed = _seed(rng)
        if self.compress:
            idx = compress_pp(xs, split, swap, g=self.g, delta=self.delta, rng=rng)
        elif store:
            k = split.matrix(xs)
            coresets = gp_kt.split_K(k, m, delta=self.delta, seed=seed)
            if split != swap:
                swap.matrix(xs, out=k)  # reuse the buffer: peak memory stays one n x n matrix
            idx = gp_kt.swap_K(k, coresets)
            del k
        else:
            idx = gp_kt.thin(
                xs,
                m,
                split.rows,
                swap.rows,
                delta=self.delta,
                seed=seed,
                store_K=False,
                meanK=swap.row_means(xs),
            )
        chosen = rows[np.asarray(idx, dtype=np.int64)]
        out = x_in[torch.as_tensor(chosen)] if torch.is_tensor(x_in) else torch.as_tensor(x[chosen])
        carried = {k: v for k, v in target.info.items() if k in ("score_evals", "log_prob_evals")}
        info = {
            **carried,
            "indices": chosen.tolist(),
            "input_size": n,
            "used_size": n_used,
            "halving_rounds": m,
            "coreset_size": len(chosen),
            "bandwidth": bandwidth,
            "store_K": bool(store),
            "kernel_matrix_bytes": kernel_bytes(n_used) if store and not self.compress else 0,
            "variant": self.variant,
            "compress": bool(self.compress),
            "seconds": time.perf_counter() - start,
        }
        if alpha is not None:
            info["power"] = alpha
        return Samples(x=out, info=info)
