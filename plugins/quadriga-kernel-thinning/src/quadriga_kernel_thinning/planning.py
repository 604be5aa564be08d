"""Decisions taken before kernel thinning starts: sizes, bandwidth, split kernel, memory.

Everything here is cheap and runs before any O(n^2) work, so that a bad
configuration fails with a :class:`quadriga.errors.ConfigError` at once.
"""

from __future__ import annotations

import math
import os

import numpy as np

from quadriga.errors import ConfigError
from quadriga_kernel_thinning.kernels import Kernel, make_kernel, min_power, power_kernel, sum_kernel

__all__ = [
    "VARIANTS",
    "available_memory_bytes",
    "default_power",
    "kernel_bytes",
    "median_bandwidth",
    "plan_sizes",
    "split_kernel",
]

VARIANTS = ("root", "target", "power", "kt+")

_MEDIAN_POINTS = 1024


def available_memory_bytes() -> int | None:
    """Memory the process can still allocate (bytes): ``MemAvailable`` on Linux, else ``None`` (unknown)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def kernel_bytes(n: int) -> int:
    """Bytes of one dense ``n x n`` float64 kernel matrix: ``8 n^2``."""
    return 8 * n * n


def plan_sizes(n: int, *, compress: bool, halving_rounds: int | None) -> tuple[int, int]:
    """How many input points KT uses and how many halving rounds it runs.

    KT-SPLIT with ``m`` rounds needs ``n`` divisible by ``2^m`` and returns ``n / 2^m`` points;
    Compress++ needs ``n = 4^m``. For any other ``n`` a uniformly random subset of the
    required size is used (so every input point has the same chance to be kept).

    Args:
        n: number of input points.
        compress: Compress++ (needs a power of four) or plain KT.
        halving_rounds: ``m`` for plain KT, or ``None`` for ``round(log2(n) / 2)``
            (output about ``sqrt(n)`` points).

    Returns:
        ``(n_used, m)``: points used and halving rounds; the coreset has ``n_used / 2^m`` points.

    Raises:
        ConfigError: fewer than 4 points, or ``2^halving_rounds > n``.
    """
    if n < 4:
        raise ConfigError(
            f"kernel thinning needs at least 4 input points, got {n}; "
            "give the upstream sampler a larger num_samples.",
            key="target",
        )
    if compress:
        m = (n.bit_length() - 1) // 2
        if halving_rounds is not None and halving_rounds != m:
            raise ConfigError(
                "halving_rounds cannot be set with compress = true (Compress++ always "
                f"returns sqrt(4^m) points, here m = {m}); remove halving_rounds.",
                key="halving_rounds",
            )
        return 4**m, m
    m = round(math.log2(n) / 2) if halving_rounds is None else int(halving_rounds)
    if 2**m > n:
        raise ConfigError(
            f"halving_rounds = {m} needs at least 2^{m} = {2**m} input points, got {n}; "
            f"use halving_rounds <= {n.bit_length() - 1}.",
            key="halving_rounds",
        )
    return (n // 2**m) * 2**m, m


def median_bandwidth(x: np.ndarray) -> float:
    """Median heuristic: the median pairwise distance of up to 1024 evenly spaced rows of ``x[n, d]``.

    Units: those of x.

    Raises:
        ConfigError: when all those points coincide (the heuristic gives 0).
    """
    n = x.shape[0]
    idx = np.linspace(0, n - 1, min(n, _MEDIAN_POINTS)).astype(int)
    y = x[idx]
    sq = np.einsum("ij,ij->i", y, y)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * y @ y.T, 0.0)
    iu = np.triu_indices(len(idx), k=1)
    med = float(np.sqrt(np.median(d2[iu]))) if len(iu[0]) else 0.0
    if not med > 0:
        raise ConfigError(
            "the median-heuristic bandwidth is 0 (the input points coincide); set bandwidth explicitly.",
            key="bandwidth",
        )
    return med


def default_power(kernel: Kernel, dim: int) -> float:
    """Power alpha used when none is given: 1/2 where the square-root kernel exists, else midway
    between the smallest valid power ``d / (2 nu + d)`` and 1 (Matérn/Laplace)."""
    low = min_power(kernel, dim)
    return 0.5 if low < 0.5 else 0.5 * (low + 1.0)


def split_kernel(
    variant: str, kernel_name: str, bandwidth: float, nu: float | None, power: float | None, dim: int
) -> tuple[Kernel, Kernel, float | None]:
    """The KT-SPLIT and KT-SWAP kernels of a variant.

    - ``root``: split with the square-root kernel ``k_rt`` (alpha = 1/2), swap with ``k``
      (Dwivedi & Mackey, Kernel Thinning, Alg. 1);
    - ``target``: split and swap with ``k`` (Generalized KT, ICLR 2022, sec. 3);
    - ``power``: split with ``k_alpha`` (Generalized KT, sec. 4);
    - ``kt+``: split with ``k + k_alpha`` (Generalized KT, sec. 5).

    Args:
        variant: one of :data:`VARIANTS`; kernel_name, bandwidth, nu: see :func:`make_kernel`.
        power: alpha, or ``None`` for :func:`default_power`.
        dim: dimension d.

    Returns:
        ``(split, swap, alpha)`` (``alpha`` is ``None`` for ``target``).

    Raises:
        ConfigError: the power kernel does not exist for this kernel and d (e.g. root KT with
            the Laplace kernel); the message names the variants that work.
    """
    k = make_kernel(kernel_name, bandwidth, nu)
    if variant == "target":
        return k, k, None
    alpha = 0.5 if variant == "root" else (default_power(k, dim) if power is None else float(power))
    try:
        k_alpha = power_kernel(k, alpha, dim)
    except ValueError as exc:
        low = min_power(k, dim)
        hint = (
            f'use variant = "target", or variant = "power"/"kt+" with power in ({low:.3g}, 1]'
            if low < 1
            else 'use variant = "target"'
        )
        raise ConfigError(f"{exc}; {hint}.", key="variant" if variant == "root" else "power") from None
    if variant == "kt+":
        return sum_kernel(k, k_alpha), k, alpha
    return k_alpha, k, alpha
