"""Overhead of the kernel-thinning sampler against calling goodpoints directly, and peak memory.

Same arrays, same run: n = 4096 points of N(0, I_2), Gaussian kernel sigma = 2.
Baselines are goodpoints' documented entry points with numpy kernel functions
(``kt.thin(..., store_K=True)`` for root and target KT, ``compress.compresspp_kt`` for
KT-Compress++). Prints wall-time ratios plugin / goodpoints (target: <= 1.05) and the
peak memory traced by ``tracemalloc`` (numpy reports its buffers to it) with and without ``store_K``.

    .venv/bin/python plugins/quadriga-kernel-thinning/benchmarks/bench_kt_overhead.py [--n 4096] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time
import timeit
import tracemalloc

import numpy as np
import torch
from goodpoints import compress as gp_compress
from goodpoints import kt as gp_kt
from quadriga_kernel_thinning.thinning import KernelThinning

from quadriga.artifacts import Samples


def _gauss(var: float):
    return lambda y, X: np.exp(-np.sum((X - y) ** 2, axis=1) / (2 * var))


def _best(fn, repeats: int) -> float:
    """The shortest of ``repeats`` wall-clock times of ``fn()`` (seconds; garbage collection left on)."""
    return min(timeit.repeat(fn, setup="gc.enable()", number=1, repeat=repeats))


def _peak(fn) -> float:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sigma = 2.0
    m = (args.n.bit_length() - 1) // 2
    x = torch.randn(args.n, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    xn, samples = x.numpy(), Samples(x=x)
    gen = lambda: torch.Generator().manual_seed(1)  # noqa: E731

    cases = {
        "root KT": (
            lambda: gp_kt.thin(xn, m, _gauss(sigma**2 / 2), _gauss(sigma**2), seed=1, store_K=True),
            lambda: KernelThinning(variant="root", bandwidth=sigma).sample(samples, generator=gen()),
        ),
        "target KT": (
            lambda: gp_kt.thin(xn, m, _gauss(sigma**2), _gauss(sigma**2), seed=1, store_K=True),
            lambda: KernelThinning(variant="target", bandwidth=sigma).sample(samples, generator=gen()),
        ),
        "KT-Compress++ (g=4)": (
            lambda: gp_compress.compresspp_kt(
                xn, b"gaussian", k_params=np.array([2 * sigma**2]), g=4, seed=1
            ),
            lambda: KernelThinning(variant="target", compress=True, g=4, bandwidth=sigma).sample(
                samples, generator=gen()
            ),
        ),
    }
    print(f"n = {args.n}, d = 2, best of {args.repeats}")
    print(f"{'method':24s} {'goodpoints s':>13s} {'plugin s':>10s} {'ratio':>7s}")
    for name, (base, plugin) in cases.items():
        base()  # warm-up (imports, page cache)
        plugin()
        tb, tp = _best(base, args.repeats), _best(plugin, args.repeats)
        print(f"{name:24s} {tb:13.3f} {tp:10.3f} {tp / tb:7.3f}")

    print("\npeak traced memory (MiB), root KT")
    rows = [
        (
            "goodpoints kt.thin store_K=True",
            lambda: gp_kt.thin(xn, m, _gauss(sigma**2 / 2), _gauss(sigma**2), seed=1, store_K=True),
        ),
        (
            "plugin store_K=True",
            lambda: KernelThinning(variant="root", bandwidth=sigma, store_K=True).sample(
                samples, generator=gen()
            ),
        ),
        (
            "plugin store_K=False",
            lambda: KernelThinning(variant="root", bandwidth=sigma, store_K=False).sample(
                samples, generator=gen()
            ),
        ),
        (
            "plugin compress=True",
            lambda: KernelThinning(variant="root", bandwidth=sigma, compress=True).sample(
                samples, generator=gen()
            ),
        ),
    ]
    print(f"(one n x n float64 matrix: {8 * args.n**2 / 2**20:.0f} MiB)")
    for name, fn in rows:
        start = time.perf_counter()
        peak = _peak(fn)
        print(f"{name:34s} {peak:9.1f} MiB  ({time.perf_counter() - start:.2f} s under tracemalloc)")


if __name__ == "__main__":
    main()
