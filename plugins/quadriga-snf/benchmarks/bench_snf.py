"""Seconds per training step and per 1000 draws, SNF (4 couplings, 5 Metropolis steps each) vs the pure
flow (the same couplings), best of 3 in one run after a warm-up fit.

Usage: ``nice -n 10 python plugins/quadriga-snf/benchmarks/bench_snf.py`` (one line per model, then the
ratios). Both fits run on one intra-op thread (the learners set it themselves).
"""

from __future__ import annotations

import timeit

import torch
from quadriga_snf.components import NF, SNF, SNFSample
from quadriga_std.targets.analytic import DoubleWell


def _best(fn, repeats: int = 3) -> float:
    """The shortest of ``repeats`` wall-clock times of ``fn()`` (seconds; garbage collection left on)."""
    return min(timeit.repeat(fn, setup="gc.enable()", number=1, repeat=repeats))


def main(steps: int = 50, draws: int = 4000) -> None:
    """Time ``steps`` Adam steps (batch 128) and ``draws`` weighted draws of each model on the double well."""
    target = DoubleWell()
    NF(num_steps=5).fit(target, generator=torch.Generator().manual_seed(0))  # warm-up (imports, allocator)
    fit_s, draw_s = {}, {}
    for cls in (NF, SNF):
        name = cls.__name__
        fit_s[name] = _best(
            lambda c=cls: c(num_steps=steps).fit(target, generator=torch.Generator().manual_seed(0))
        )
        fit_s[name] /= steps
        fitted = cls(num_steps=1).fit(target, generator=torch.Generator().manual_seed(0))
        sampler = SNFSample(num_samples=draws)
        draw_s[name] = _best(lambda s=sampler, f=fitted: s.sample(target, f, generator=torch.Generator()))
        draw_s[name] *= 1000 / draws
        print(f"{name}: {fit_s[name]:.4f} s/step, {draw_s[name]:.4f} s per 1000 draws")
    print(f"SNF / NF: training {fit_s['SNF'] / fit_s['NF']:.2f}, sampling {draw_s['SNF'] / draw_s['NF']:.2f}")


if __name__ == "__main__":
    main()
