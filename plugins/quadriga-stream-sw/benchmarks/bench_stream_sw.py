"""Benchmark: Stream-SW on a stream of 10^6 points per distribution against POT's exact SW in memory.

Setting (the plugin's performance target): d = 10, L = 100, k = 200, batches of 10^4 points,
source N(-1, I), target N(2, I). Each method runs in its own subprocess so that its peak
resident memory (``ru_maxrss``, minus the process's resident memory after imports) is its own.
Prints the time ratio and peak-memory ratio (POT / Stream-SW), the relative error of Stream-SW,
and the update throughput (points x projections per second) of both sketch backends
(the vectorised torch KLL and Apache DataSketches' ``kll_doubles_sketch``) on the same batches.

Usage: ``python plugins/quadriga-stream-sw/benchmarks/bench_stream_sw.py [--n 1000000]``
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

D, L, K, BATCH = 10, 100, 200, 10_000


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _batches(n: int, which: str):
    import torch

    gen = torch.Generator().manual_seed(0 if which == "source" else 1)
    shift = -1.0 if which == "source" else 2.0
    for start in range(0, n, BATCH):
        yield torch.randn(min(BATCH, n - start), D, generator=gen, dtype=torch.float64) + shift


def _child(method: str, n: int) -> dict:
    import ot  # noqa: F401 - imported before the baseline RSS is read
    import torch
    from quadriga_stream_sw.stream import StreamSW
    from quadriga_stream_sw.wasserstein import exact_sliced, random_projections

    theta = random_projections(D, L, torch.Generator().manual_seed(123))
    base = _rss_mb()
    start = time.perf_counter()
    if method == "exact":
        xs = torch.cat(list(_batches(n, "source")))
        xt = torch.cat(list(_batches(n, "target")))
        value = exact_sliced(xs, xt, theta)
    else:
        sw = StreamSW(D, k=K, projections=theta, generator=torch.Generator().manual_seed(0), backend=method)
        for xb, yb in zip(_batches(n, "source"), _batches(n, "target"), strict=False):
            sw.update_source(xb)
            sw.update_target(yb)
        value = sw.estimate().value
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"method": method, "seconds": seconds, "peak_mb": peak - base, "value": value}


def _throughput(backend: str, n: int) -> float:
    """Sketch updates only (projection excluded): points x projections per second."""
    import torch
    from quadriga_stream_sw.sketch import make_sketch

    sketch = make_sketch(backend, L, K, generator=torch.Generator().manual_seed(0))
    proj = [
        torch.randn(BATCH, L, generator=torch.Generator().manual_seed(i), dtype=torch.float64)
        for i in range(10)
    ]
    start = time.perf_counter()
    for i in range(n // BATCH):
        sketch.update(proj[i % 10])
    return (n // BATCH) * BATCH * L / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="points per stream")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.n)))
        return
    runs = {}
    for method in ("torch", "exact"):
        out = subprocess.run(
            [sys.executable, __file__, "--n", str(args.n), "--child", method],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        runs[method] = json.loads(out.strip().splitlines()[-1])
    st, ex = runs["torch"], runs["exact"]
    print(f"n = {args.n} points per stream, d = {D}, L = {L}, k = {K}, batches of {BATCH}")
    print(
        f"Stream-SW (torch KLL): {st['seconds']:.2f} s, peak +{st['peak_mb']:.0f} MB, SW = {st['value']:.6f}"
    )
    print(
        f"POT exact in memory:   {ex['seconds']:.2f} s, peak +{ex['peak_mb']:.0f} MB, SW = {ex['value']:.6f}"
    )
    print(f"time ratio (Stream-SW / POT): {st['seconds'] / ex['seconds']:.3f}")
    print(f"peak memory ratio (POT / Stream-SW): {ex['peak_mb'] / max(st['peak_mb'], 1.0):.1f}")
    print(f"relative error of Stream-SW: {abs(st['value'] - ex['value']) / ex['value']:.2e}")
    n_thr = min(args.n, 300_000)
    thr_t, thr_d = _throughput("torch", n_thr), _throughput("datasketches", n_thr)
    print(
        f"sketch update throughput (points x projections / s): torch {thr_t:.3g}, "
        f"datasketches {thr_d:.3g}, ratio torch / datasketches {thr_t / thr_d:.2f}"
    )


if __name__ == "__main__":
    main()
