"""Seconds per sampling run of PFGM++ (finite D) against EDM's Heun sampler (D = inf), same grid and z.

Setting: random 8-D Gaussian mixture (4 components, std 0.5, radius 6, seed 0), exact fields, EDM grid
of 18 sigma points (NFE 35), n = 2000 trajectories. The EDM arm is quadriga-ddpm's ``edm-heun`` on
the mixture's noised score; the PFGM++ arms run the same Heun steps on the exact D-field (quadrature
over log W with 512 nodes, so its cost per call is about 512 x that of the Gaussian posterior per
component). Prints the best of ``--repeats`` (interleaved) per arm and the ratio PFGM++ / EDM, plus
the energy distance of each arm to 2000 exact draws.

Run: ``.venv/bin/python plugins/quadriga-pfgmpp/benchmarks/bench_pfgmpp_speed.py [--repeats 3]``
"""

from __future__ import annotations

import argparse
import time

import torch
from quadriga_ddpm.edm_heun import EDMHeun
from quadriga_pfgmpp.sampler import PFGMPP
from quadriga_std.evaluators.distances import EnergyDistance
from quadriga_std.targets.gaussian import GaussianMixture

from quadriga.artifacts import Samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--aug-dims", type=float, nargs="+", default=[8.0, 128.0])
    args = parser.parse_args()
    torch.set_num_threads(1)
    target = GaussianMixture(preset="random", dim=8, num_components=4, scale=0.5)
    target.prepare(generator=torch.Generator().manual_seed(0))
    ref = Samples(x=target.sample(2000, generator=torch.Generator().manual_seed(9)))
    arms = {"EDM (edm-heun)": EDMHeun(num_samples=args.samples)}
    arms.update({f"PFGM++ D={d:g}": PFGMPP(aug_dim=d, num_samples=args.samples) for d in args.aug_dims})
    best: dict[str, float] = {}
    energy: dict[str, float] = {}
    for _ in range(args.repeats):
        for name, sampler in arms.items():
            t0 = time.perf_counter()
            x = sampler.sample(target, generator=torch.Generator().manual_seed(1))
            best[name] = min(best.get(name, float("inf")), time.perf_counter() - t0)
            values = EnergyDistance().evaluate(x, ref, generator=torch.Generator().manual_seed(0)).values
            energy[name] = next(v for k, v in values.items() if k.endswith("/energy_distance"))
    base = best["EDM (edm-heun)"]
    print(f"n {args.samples}, N 8, NFE 35 (18 sigma points)")
    for name in arms:
        ratio = best[name] / base
        print(f"{name:18s} {best[name]:.3f} s  ratio {ratio:.2f}  energy distance {energy[name]:.4f}")


if __name__ == "__main__":
    main()
