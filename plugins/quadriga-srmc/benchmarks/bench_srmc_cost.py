"""Per-iteration cost of SR-MALA relative to MALA (same run), and peak memory against chain length.

Prints, for d = 20 and d = 1000, the wall-clock time per transition of quadriga-std's MALA and of
SR-MALA with the shifted and the exact drift (interleaved repeats, median), and their ratios. Then
runs SR-MALA with ``store = "running-mean"`` for 1e3, 1e4 and 4e4 transitions in fresh processes and
prints the peak resident memory of each (it should not grow with the number of steps).

Usage: python plugins/quadriga-srmc/benchmarks/bench_srmc_cost.py [--quick]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def _time_per_step(sampler, target, steps: int, seed: int) -> float:
    import torch

    gen = torch.Generator().manual_seed(seed)
    t0 = time.perf_counter()
    sampler.sample(target, generator=gen)
    return (time.perf_counter() - t0) / steps


def cost(dims=(20, 1000), chains: int = 16, steps: int = 400, repeats: int = 3) -> None:
    """Print seconds per transition and ratios to MALA for each dimension."""
    from quadriga_srmc.sampler import SRMC
    from quadriga_std.samplers.mcmc import MALA
    from quadriga_std.targets.gaussian import Gaussian

    print(f"{'d':>6} {'MALA ms/step':>13} {'SR shifted':>11} {'ratio':>6} {'SR exact':>9} {'ratio':>6}")
    for d in dims:
        target = Gaussian(dim=d, equicorrelation=0.9)
        h = 0.05 if d <= 20 else 0.01
        runs = {
            "mala": MALA(step_size=h, num_chains=chains, num_samples=steps, burn_in=0, init="target"),
            "shifted": SRMC(
                base_kernel=MALA(step_size=h, init="target"),
                alpha=1.0,
                drift="shifted",
                num_chains=chains,
                num_steps=steps,
                burn_in=0,
            ),
            "exact": SRMC(
                base_kernel=MALA(step_size=h, init="target"),
                alpha=1.0,
                drift="exact",
                num_chains=chains,
                num_steps=steps,
                burn_in=0,
            ),
        }
        times = {k: [] for k in runs}
        for r in range(repeats):
            for k, s in runs.items():
                times[k].append(_time_per_step(s, target, steps, r))
        med = {k: statistics.median(v) for k, v in times.items()}
        print(
            f"{d:>6} {1e3 * med['mala']:>13.3f} {1e3 * med['shifted']:>11.3f} "
            f"{med['shifted'] / med['mala']:>6.2f} {1e3 * med['exact']:>9.3f} "
            f"{med['exact'] / med['mala']:>6.2f}"
        )


_CHILD = """
import resource, torch
from quadriga_std.samplers.mcmc import MALA
from quadriga_std.targets.gaussian import Gaussian
from quadriga_srmc.sampler import SRMC
t = Gaussian(dim=100, equicorrelation=0.9)
SRMC(base_kernel=MALA(step_size=0.01, init="target"), alpha=1.0, num_chains=16, num_steps={steps}, burn_in=0,
     store="running-mean").sample(t, generator=torch.Generator().manual_seed(0))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def memory(step_counts=(1000, 10000, 40000)) -> None:
    """Print the peak RSS (MiB) of a fresh process per chain length, store = 'running-mean'."""
    base = None
    for steps in step_counts:
        out = subprocess.run(
            [sys.executable, "-c", _CHILD.format(steps=steps)], capture_output=True, text=True, check=True
        )
        rss = int(out.stdout.strip().splitlines()[-1]) / 1024
        base = base or rss
        print(
            f"steps {steps:>6}: peak RSS {rss:8.1f} MiB  (ratio to {step_counts[0]} steps: {rss / base:.3f})"
        )


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    cost(steps=100 if quick else 400, repeats=1 if quick else 3)
    memory((500, 2000) if quick else (1000, 10000, 40000))
