"""Benchmark: wall time of `quadriga list` against `python -c "import pluggy, importlib.metadata"`.

Both are timed as fresh interpreter processes in the same run, with every plugin of
the repository installed, and the ratio is reported (target: <= 2x). Usage::

    python benchmarks/bench_list.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def wall(cmd: list[str], repeats: int) -> float:
    """Median wall-clock seconds of running ``cmd`` ``repeats`` times (after one warm-up)."""
    subprocess.run(cmd, capture_output=True, check=True)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> dict[str, float]:
    """Run the benchmark and print the ratio; returns the measured numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    baseline = wall([sys.executable, "-c", "import pluggy, importlib.metadata"], args.repeats)
    listing = wall([sys.executable, "-m", "quadriga", "list"], args.repeats)
    imports = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from quadriga.cli import main; main(['list']); print('torch' in sys.modules)",
        ],
        capture_output=True,
        text=True,
    ).stdout.split()[-1]
    result = {"baseline_s": baseline, "list_s": listing, "ratio": listing / baseline}
    print(
        f"python -c 'import pluggy, importlib.metadata': {baseline * 1e3:.0f} ms (median of {args.repeats})"
    )
    print(f"quadriga list:                                {listing * 1e3:.0f} ms")
    print(f"ratio: {result['ratio']:.2f}x (target <= 2x); torch imported by list: {imports}")
    return result


if __name__ == "__main__":
    main()
