"""Run every benchmark of the repository (core and plugins), one after the other.

Each benchmark prints its own ratios against a baseline measured in the same run.
Usage: ``python benchmarks/run_all.py [--only SUBSTRING]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    """Run the benchmarks; return the number that failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run only scripts whose path contains this")
    args = parser.parse_args()
    scripts = sorted(ROOT.glob("benchmarks/bench_*.py")) + sorted(
        ROOT.glob("plugins/*/benchmarks/bench_*.py")
    )
    failed = 0
    for script in scripts:
        if args.only and args.only not in str(script):
            continue
        print(f"\n=== {script.relative_to(ROOT)}", flush=True)
        failed += subprocess.run([sys.executable, str(script)], cwd=ROOT).returncode != 0
    return failed


if __name__ == "__main__":
    sys.exit(main())
