"""Benchmark: a sweep's scheduling overhead.

40 runs of a pipeline that takes about one second (the core's toy sampler sleeping
``--seconds``) on 2 local workers, against the same 40 runs executed one after the
other in this process through ``quadriga.api.run``. Both are timed in the same run;
the ratio sweep / sequential is reported (target <= 0.55, never above 1; the 2x parallel limit being 0.5).
Usage::

    python benchmarks/bench_sweep.py [--runs 40] [--seconds 1.0] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> dict[str, float]:
    """Time both ways and print the ratio; returns the measured numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="quadriga-bench-sweep-"))
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "toy"), str(tmp)]
    from qtest_helpers import make_dist

    make_dist(tmp, "quadriga-toy", {"toy": "quadriga_toy.plugin"})
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "tests" / "toy"), str(tmp), os.environ.get("PYTHONPATH", "")]
    )
    from quadriga.api import run
    from quadriga.sweep import run_sweep

    fixed = [f"stage.draw.sleep={args.seconds}"]
    run("toy-pipeline", overrides=fixed, out=tmp / "warm")  # imports torch once, as a warm worker would
    start = time.perf_counter()
    for seed in range(args.runs):
        run("toy-pipeline", overrides=fixed, seed=seed, out=tmp / "seq" / str(seed))
    sequential = time.perf_counter() - start
    start = time.perf_counter()
    result = run_sweep(
        "toy-pipeline", seeds=range(args.runs), fixed=fixed, workers=args.workers, out=tmp / "sweep"
    )
    swept = time.perf_counter() - start
    assert all(r["status"] == "finished" for r in result.runs)
    ratio = swept / sequential
    print(f"{args.runs} sequential direct runs: {sequential:.1f} s")
    print(f"sweep on {args.workers} workers:      {swept:.1f} s (worker start-up included)")
    print(f"ratio: {ratio:.2f} (target <= 0.55; ideal {1 / args.workers:.2f})")
    return {"sequential_s": sequential, "sweep_s": swept, "ratio": ratio}


if __name__ == "__main__":
    main()
