"""Per-iteration cost of SR-MALA relative to MALA (same run), and peak memory against chain length.

For d = 20 and d = 1000 (the equicorrelated Gaussian, rho = 0.9, 16 chains), times quadriga-std's
MALA and SR-MALA with the shifted drift (and, without ``--no-exact``, the exact drift) in CPU
seconds of this process (``time.process_time``, torch on one thread), ``repeats`` times with the
arms' order rotated each repeat (SR MALA, MALA SR, ...), and prints the median ratio SR / MALA per
iteration with its range over the repeats and n. It also times the target calls alone that one
transition of each arm makes (SR-MALA shifted: ``score`` on c rows at x - alpha theta, then
``log_prob_and_score`` on the 2c stacked rows [y; y - alpha theta]; MALA: ``log_prob_and_score``
on c rows). SR-MALA's floor is MALA's time per transition plus the difference of the two: what
SR-MALA would cost if its loop added nothing to MALA's but its extra target calls
(:func:`floor_per_step`).
Then runs SR-MALA with ``store = "running-mean"`` for 1e3, 1e4 and 4e4 transitions in fresh
processes and prints the peak resident memory of each (it should not grow with the number of steps).

Usage: python plugins/quadriga-srmc/benchmarks/bench_srmc_cost.py [--quick] [--no-exact] [--no-memory]
    [--repeats N]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def _cpu_per_step(sampler, target, steps: int, seed: int) -> float:
    import torch

    gen = torch.Generator().manual_seed(seed)
    t0 = time.process_time()
    sampler.sample(target, generator=gen)
    return (time.process_time() - t0) / steps


def _calls_per_step(target, chains: int, reps: int) -> tuple[float, float]:
    """CPU seconds of the target calls of one transition: (SR-MALA shifted, MALA).

    SR-MALA (shifted drift): ``score`` on c rows, then ``log_prob_and_score`` on the 2c stacked
    rows; MALA: ``log_prob_and_score`` on c rows (quadriga-std's fused call, as its kernel makes).
    """
    import torch
    from quadriga_std.samplers.mcmc import log_prob_and_score

    gen = torch.Generator().manual_seed(0)
    x = target.sample(chains, generator=gen)
    y = target.sample(2 * chains, generator=gen)

    def sr():
        target.score(x)
        log_prob_and_score(target, y)

    def mala():
        log_prob_and_score(target, x)

    out = {}
    for name, fn in (("sr", sr), ("mala", mala)):
        fn()
        t0 = time.process_time()
        for _ in range(reps):
            fn()
        out[name] = (time.process_time() - t0) / reps
    return out["sr"], out["mala"]


def floor_per_step(mala, target, steps: int, seed: int, chains: int) -> float:
    """SR-MALA's floor in CPU seconds per transition: MALA's time plus SR-MALA's extra target calls.

    ``mala``'s own time per transition (its loop and its one fused target call on c rows) plus
    (SR-MALA's target calls of one transition - MALA's), each timed alone in a loop of ``steps``
    calls. SR-MALA / floor is then the cost of SR-MALA's loop over MALA's, which is 1 for a loop
    that adds nothing around its extra score evaluations.
    """
    per_step = _cpu_per_step(mala, target, steps, seed)
    sr_calls, mala_calls = _calls_per_step(target, chains, steps)
    return per_step + sr_calls - mala_calls


def _summary(ratios: list[float]) -> str:
    return f"{statistics.median(ratios):.3f} [{min(ratios):.3f}, {max(ratios):.3f}] n={len(ratios)}"


def cost(dims=(20, 1000), chains: int = 16, steps: int = 400, repeats: int = 7, exact: bool = True) -> None:
    """Print CPU ms per transition, the SR / MALA ratios (median [range] n) and the target-call floor."""
    import torch
    from quadriga_srmc.sampler import SRMC
    from quadriga_std.samplers.mcmc import MALA
    from quadriga_std.targets.gaussian import Gaussian

    torch.set_num_threads(1)
    for d in dims:
        target = Gaussian(dim=d, equicorrelation=0.9)
        h = 0.05 if d <= 20 else 0.01
        sr = dict(alpha=1.0, num_chains=chains, num_steps=steps, burn_in=0)
        runs = {
            "shifted": SRMC(base_kernel=MALA(step_size=h, init="target"), drift="shifted", **sr),
            "mala": MALA(step_size=h, num_chains=chains, num_samples=steps, burn_in=0, init="target"),
        }
        if exact:
            runs["exact"] = SRMC(base_kernel=MALA(step_size=h, init="target"), drift="exact", **sr)
        for s in runs.values():  # warm-up
            _cpu_per_step(s, target, steps, 0)
        times = {k: [] for k in runs}
        names = list(runs)
        for r in range(repeats):
            order = names[r % len(names) :] + names[: r % len(names)]
            if r % 2:
                order.reverse()
            for k in order:
                times[k].append(_cpu_per_step(runs[k], target, steps, r))
        med = {k: statistics.median(v) for k, v in times.items()}

        def ratios(arm: str, times: dict = times) -> str:
            return _summary([a / b for a, b in zip(times[arm], times["mala"], strict=True)])

        line = (
            f"d = {d:>4}: MALA {1e3 * med['mala']:.3f} ms/step, "
            f"SR shifted {1e3 * med['shifted']:.3f} ms/step, ratio {ratios('shifted')}"
        )
        if exact:
            line += f"; SR exact {1e3 * med['exact']:.3f} ms/step, ratio {ratios('exact')}"
        print(line, flush=True)
        floor = [_calls_per_step(target, chains, 200 if d <= 20 else 20) for _ in range(repeats)]
        sr_ms, mala_ms = (1e3 * statistics.median(f[i] for f in floor) for i in (0, 1))
        print(
            f"           target calls alone per transition: SR {sr_ms:.3f} ms, MALA {mala_ms:.3f} ms, "
            f"floor ratio "
            f"{_summary([a / b for a, b in floor])}",
            flush=True,
        )


_CHILD = """
import resource, torch
torch.set_num_threads(1)
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
    n = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else (3 if quick else 7)
    cost(steps=100 if quick else 400, repeats=n, exact="--no-exact" not in sys.argv)
    if "--no-memory" not in sys.argv:
        memory((500, 2000) if quick else (1000, 10000, 40000))
