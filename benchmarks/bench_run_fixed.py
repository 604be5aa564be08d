"""Benchmark: the fixed cost of ``quadriga.api.run`` on a 1-stage pipeline, in process.

One toy task and one toy sampler stage drawing 2 points (their own work is negligible) are run
through ``quadriga.api.run`` ``--repeats`` times after two warm-up runs (imports, registry); the
CPU seconds of each run (``time.process_time``) are reported as median and range (target
<= 5 ms). ``--profile`` also runs them under ``cProfile`` and prints the functions with the most
cumulative time. Usage::

    python benchmarks/bench_run_fixed.py [--repeats 25] [--profile]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PIPELINE = {
    "pipeline": {"name": "bench-fixed", "seed": 0},
    "task": {"normal": {"use": "toy-normal", "dimension": 2}},
    "stage": {"draw": {"use": "toy-iid", "inputs": {"target": "normal"}, "num_samples": 2}},
}


def one_run(out: Path) -> float:
    """CPU seconds of one ``api.run`` of :data:`PIPELINE` into ``out``."""
    from quadriga.api import run

    start = time.process_time()
    result = run(PIPELINE, out=out)
    seconds = time.process_time() - start
    assert result.status == "finished"
    return seconds


def main() -> list[float]:
    """Time the runs, print median and range (ms); returns the CPU seconds of each run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=25)
    parser.add_argument("--profile", action="store_true", help="also profile the runs (cProfile)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="quadriga-bench-fixed-"))
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "toy"), str(tmp)]
    from qtest_helpers import make_dist

    make_dist(tmp, "quadriga-toy", {"toy": "quadriga_toy.plugin"})
    for i in range(2):
        one_run(tmp / f"warm{i}")
    times = [one_run(tmp / f"run{i}") for i in range(args.repeats)]
    ms = [1e3 * t for t in times]
    print(
        f"api.run, 1 stage: median {statistics.median(ms):.2f} ms CPU, range "
        f"[{min(ms):.2f}, {max(ms):.2f}], n = {len(ms)} (target <= 5 ms)"
    )
    if args.profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.enable()
        for i in range(args.repeats):
            one_run(tmp / f"prof{i}")
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(45)
    return times


if __name__ == "__main__":
    main()
