"""Benchmark: FKC against naive score mixing in the same run, on the product of two 2-D mixtures.

Reports, for K in {64, 256, 1024, 4096} and 200 steps: score evaluations per particle-step of both
samplers (equal by construction), wall seconds per particle-step, the ratio FKC / naive of the
wall time, and the energy distance to 2000 exact draws of the product. One CPU thread.

Run: ``nice -n 10 .venv/bin/python plugins/quadriga-fk-correctors/benchmarks/bench_fkc.py``.
"""

from __future__ import annotations

import time

import torch
from quadriga_fk_correctors.samplers import FKCorrector, NaiveScoreMixing
from quadriga_fk_correctors.targets import ComposedTarget
from quadriga_std.evaluators.distances import EnergyDistance

EXPERTS = [{"preset": "4-mode-2d", "radius": 1.5, "scale": 0.5}, {"means": [[0.75, 0.75]], "scale": 1.0}]


def main() -> None:
    """Print one markdown row per K."""
    target = ComposedTarget(composition="product", experts=EXPERTS)
    energy = EnergyDistance(num_reference_samples=2000)
    print(
        "| K | score evals / particle-step (fkc, naive) | us / particle-step fkc | naive | ratio | "
        "energy fkc | energy naive |"
    )
    print("|---|---|---|---|---|---|---|")
    for k in (64, 256, 1024, 4096):
        row = {}
        for name, cls in (("fkc", FKCorrector), ("naive", NaiveScoreMixing)):
            t0 = time.perf_counter()
            s = cls(num_particles=k, num_steps=200).sample(target, generator=torch.Generator().manual_seed(0))
            sec = time.perf_counter() - t0
            e = energy.evaluate(s, target, generator=torch.Generator().manual_seed(1)).values
            row[name] = (
                s.info["score_evals"] / (k * 200),
                1e6 * sec / (k * 200),
                next(v for key, v in e.items() if key.endswith("/energy_distance")),
            )
        f, n = row["fkc"], row["naive"]
        print(
            f"| {k} | {f[0]:g}, {n[0]:g} | {f[1]:.2f} | {n[1]:.2f} | {f[1] / n[1]:.2f} "
            f"| {f[2]:.4f} | {n[2]:.4f} |"
        )


if __name__ == "__main__":
    main()
