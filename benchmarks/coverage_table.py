"""Coverage table of quadriga's interval methods: the chosen method beside the old BCa bootstrap.

Usage::

    python benchmarks/coverage_table.py [--reps 4000] [--bca-reps 1000] [--write]

For every design of :mod:`quadriga.stats.coverage` (mean, paired difference, unpaired difference,
paired ratio, IQM difference, log-log slopes), distribution (normal, lognormal sigma 0.5, t3,
lognormal sigma 1) and
n in {3, 5, 10, 20, 50}, prints the simulated coverage of the nominal 95% interval that
:func:`quadriga.stats.interval` chooses ("new"), the BCa bootstrap that the claims, the sweep
summary and the report used before (999 resamples here, 2000-9999 there: BCa coverage barely
changes beyond a few hundred resamples; for replicated log-log slopes
the replicate percentile bootstrap), and the alternatives that were measured for the choice
(log-scale t for the ratio, bootstrap-t for the IQM difference). Fixed seeds: the table is
reproducible. ``--write`` replaces the table in ``docs/concepts/intervals.md`` (between the
``coverage-table`` markers). About 15 minutes of one CPU core at the default sizes.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from pathlib import Path

from quadriga.stats.coverage import DISTRIBUTIONS, coverage

NS = (3, 5, 10, 20, 50)
ROWS = (
    ("mean", "auto", "Student t"),
    ("mean", "BCa", "old: BCa"),
    ("difference", "auto", "Student t (paired)"),
    ("difference", "BCa", "old: BCa"),
    ("unpaired difference", "auto", "Welch t"),
    ("unpaired difference", "BCa", "old: BCa"),
    ("ratio", "auto", "Fieller"),
    ("ratio", "log-t", "alt.: log-scale t"),
    ("ratio", "BCa", "old: BCa"),
    ("iqm-difference", "auto", "Yuen trimmed t"),
    ("iqm-difference", "bootstrap-t", "alt.: bootstrap-t"),
    ("iqm-difference", "BCa", "old: BCa"),
    ("loglog slope", "auto", "delta-method t"),
    ("loglog slope", "BCa", "old: percentile bootstrap"),
    ("loglog slope (k)", "auto", "Student t (LS slope)"),
)


def main(argv: list[str] | None = None) -> int:
    """Print (and with ``--write`` store) the coverage table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=4000, help="data sets per cell, closed-form methods")
    ap.add_argument("--bca-reps", type=int, default=1000, help="data sets per cell, bootstrap methods")
    ap.add_argument("--write", action="store_true", help="replace the table in docs/concepts/intervals.md")
    args = ap.parse_args(argv)
    lines = [
        "| statistic | method | data | " + " | ".join(f"n={n}" for n in NS) + " |",
        "|---|---|---|" + "---:|" * len(NS),
    ]
    start = time.time()
    for design, method, label in ROWS:
        boot = method in ("BCa", "bootstrap-t")
        reps = args.bca_reps if boot else args.reps
        for dist in DISTRIBUTIONS:
            cells = []
            for n in NS:
                if design == "loglog slope (k)" and n < 3:
                    cells.append("-")
                    continue
                c = coverage(
                    design,
                    dist,
                    n,
                    reps=reps,
                    seed=n,
                    method=method,
                    resamples=999,
                )
                cells.append(_cell(c, reps))
            lines.append(f"| {design} | {label} | {dist} | " + " | ".join(cells) + " |")
            print(lines[-1], file=sys.stderr, flush=True)
    se_new = math.sqrt(0.95 * 0.05 / args.reps)
    se_boot = math.sqrt(0.95 * 0.05 / args.bca_reps)
    lines.append("")
    lines.append(
        f"Monte-Carlo s.e. at 0.95: {se_new:.4f} ({args.reps} data sets per cell, closed-form methods), "
        f"{se_boot:.4f} ({args.bca_reps}, bootstrap methods). Cells outside 0.925-0.975 are in bold."
    )
    print(f"{time.time() - start:.0f} s", file=sys.stderr)
    table = "\n".join(lines)
    print(table)
    if args.write:
        write_docs(table)
    return 0


def write_docs(table: str) -> None:
    """Replace the text between the ``coverage-table`` markers of docs/concepts/intervals.md."""
    path = Path(__file__).resolve().parents[1] / "docs" / "concepts" / "intervals.md"
    new = re.sub(
        r"(<!-- coverage-table -->\n).*?(<!-- /coverage-table -->)",
        lambda m: m.group(1) + table + "\n" + m.group(2),
        path.read_text(),
        flags=re.S,
    )
    path.write_text(new)


def _cell(c: float, reps: int) -> str:
    text = f"{c:.3f}"
    return f"**{text}**" if abs(c - 0.95) > 0.025 else text


if __name__ == "__main__":
    raise SystemExit(main())
