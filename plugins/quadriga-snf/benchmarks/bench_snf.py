"""Seconds per training step, SNF (4 couplings, 5 Metropolis steps each) vs the pure flow (same run).

Usage: ``nice -n 10 python plugins/quadriga-snf/benchmarks/bench_snf.py`` (prints one line per model).
"""

from __future__ import annotations

import time

import torch
from quadriga_snf.components import NF, SNF
from quadriga_std.targets.analytic import DoubleWell


def main(steps: int = 20) -> None:
    """Train each model for ``steps`` Adam steps on the double well and print seconds per step."""
    target = DoubleWell()
    times = {}
    for cls in (NF, SNF):
        t0 = time.perf_counter()
        cls(num_steps=steps).fit(target, generator=torch.Generator().manual_seed(0))
        times[cls.__name__] = (time.perf_counter() - t0) / steps
        print(f"{cls.__name__}: {times[cls.__name__]:.4f} s/step")
    print(f"SNF / NF: {times['SNF'] / times['NF']:.2f}")


if __name__ == "__main__":
    main()
