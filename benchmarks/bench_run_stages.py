"""Benchmark: the core's overhead per stage does not grow with the number of stages.

A pipeline of N tiny stages (the toy sampler repeated N times, 2 draws each, so the stage's own
work is negligible) is run through ``quadriga.api.run`` for N = 10 and N = 1000 in the same
process; the wall time per stage is reported for both and their ratio (target: about 1, at most
1.5; a run that rewrote ``status.json`` and ``results.json`` in full after every stage had a
per-stage cost growing linearly with N). Usage::

    python benchmarks/bench_run_stages.py [--small 10] [--large 1000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pipeline(n: int) -> dict:
    """``n`` replicates of one toy sampler stage (2 exact draws each)."""
    return {
        "pipeline": {"name": f"bench-stages-{n}", "seed": 0},
        "task": {"normal": {"use": "toy-normal", "dimension": 2}},
        "stage": {"draw": {"use": "toy-iid", "inputs": {"target": "normal"}, "num_samples": 2, "repeat": n}},
    }


def per_stage(n: int, out: Path) -> float:
    """Wall seconds per stage of one run of :func:`pipeline` ``(n)``."""
    from quadriga.api import run

    start = time.perf_counter()
    result = run(pipeline(n), out=out)
    seconds = time.perf_counter() - start
    assert result.status == "finished" and len(result.results["stages"]) == n
    return seconds / n


def main() -> dict[str, float]:
    """Time both sizes and print the ratio; returns the measured numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=10)
    parser.add_argument("--large", type=int, default=1000)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="quadriga-bench-stages-"))
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "toy"), str(tmp)]
    from qtest_helpers import make_dist

    make_dist(tmp, "quadriga-toy", {"toy": "quadriga_toy.plugin"})
    per_stage(args.small, tmp / "warm")  # imports torch and builds the registry once
    small = min(per_stage(args.small, tmp / f"small{i}") for i in range(3))
    large = per_stage(args.large, tmp / "large")
    ratio = large / small
    print(f"{args.small} stages:   {1e3 * small:.2f} ms per stage (best of 3)")
    print(f"{args.large} stages: {1e3 * large:.2f} ms per stage")
    print(f"ratio: {ratio:.2f} (target about 1, <= 1.5)")
    return {"small_ms": 1e3 * small, "large_ms": 1e3 * large, "ratio": ratio}


if __name__ == "__main__":
    main()
