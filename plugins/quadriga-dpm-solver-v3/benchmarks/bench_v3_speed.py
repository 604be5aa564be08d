"""Seconds per solve of DPM-Solver-v3 against DPM-Solver++ (2M) at equal NFE, with the error ratio.

Setting: random 16-D Gaussian mixture (8 components, radius 6, seed 0), VP linear schedule,
n = 1000 trajectories, NFE = 8; the statistics (EMS: 256 calibration draws, 120 lambda intervals)
are computed once, as in a deployment, and timed apart. Prints the seconds of each solve (best of
``--repeats``, interleaved), the overhead ratio v3 / DPM-Solver++ per solve (the v3 step adds the
per-step quadrature of the statistics: a small constant per step, independent of n), the one-off
EMS seconds, and the RMS error ratio to the reference solve from the same x_T.

Run: ``.venv/bin/python plugins/quadriga-dpm-solver-v3/benchmarks/bench_v3_speed.py [--repeats 3]``
"""

from __future__ import annotations

import argparse
import time

import torch
from quadriga_ddpm.noise_schedule import NoiseSchedule
from quadriga_ddpm.probability_flow import draw_x_T, reference_solve
from quadriga_ddpm.score_models import as_score_model
from quadriga_ddpm.solvers import dpm_solver_pp
from quadriga_dpm_solver_v3.ems import compute_ems
from quadriga_dpm_solver_v3.solver import dpm_solver_v3
from quadriga_std.targets.gaussian import GaussianMixture


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--nfe", type=int, default=8)
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    target = GaussianMixture(preset="random", dim=16)
    target.prepare(generator=torch.Generator().manual_seed(0))
    model, sched = as_score_model(target), NoiseSchedule()
    t0 = time.perf_counter()
    ems, evals = compute_ems(
        model, sched, draw_x_T(sched, 256, 16, torch.Generator().manual_seed(1)), sched.lambda_steps(120)
    )
    t_ems = time.perf_counter() - t0
    x_T = draw_x_T(sched, args.samples, 16, torch.Generator().manual_seed(2))
    lam = sched.lambda_steps(args.nfe)
    t_v3, t_pp = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        x_pp = dpm_solver_pp(model, sched, x_T, lam, order=2)
        t_pp.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        x_v3 = dpm_solver_v3(model, sched, ems, x_T, lam, order=2)
        t_v3.append(time.perf_counter() - t0)
    ref = reference_solve(model, sched, x_T, torch.stack([lam[0], lam[-1]]))[0][-1]

    def rms(x: torch.Tensor) -> float:
        return float((x - ref).square().sum(-1).mean().sqrt())

    print(f"NFE {args.nfe}, n {args.samples}, d 16")
    print(f"DPM-Solver++ 2M: {min(t_pp):.4f} s per solve, RMS error {rms(x_pp):.4f}")
    print(f"DPM-Solver-v3:   {min(t_v3):.4f} s per solve, RMS error {rms(x_v3):.4f}")
    print(f"time ratio v3 / DPM-Solver++: {min(t_v3) / min(t_pp):.2f}")
    print(f"error ratio v3 / DPM-Solver++: {rms(x_v3) / rms(x_pp):.3f}")
    print(f"one-off EMS: {t_ems:.1f} s ({evals} batched model evaluations of 256 points)")


if __name__ == "__main__":
    main()
