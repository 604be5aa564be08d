"""Samples per second of the ``ddpm`` sampler against a direct torch loop of the same update.

Setting: sphere mixture d = 256, K = 16, sigma = 1, T = 200 (theory schedule), n = 5000, float32.
The baseline is the DDPM update Y <- (Y + beta_t s_t(Y)) / sqrt(alpha_t) + sqrt(beta_t) Z with the
isotropic mixture score written inline as tensor operations (no component, no adapter, no
progress). Prints both rates and the overhead ratio (target: <= 5 %).

Run: ``.venv/bin/python plugins/quadriga-ddpm/benchmarks/bench_ddpm_speed.py [--repeats 3]``
"""

from __future__ import annotations

import argparse
import time

import torch
from quadriga_ddpm.sampler import DDPM
from quadriga_ddpm.schedules import alpha_bars, theory_betas
from quadriga_ddpm.targets import SphereMixture


def direct_loop(
    mu: torch.Tensor, sigma: float, betas: torch.Tensor, n: int, gen: torch.Generator
) -> torch.Tensor:
    """The same chain as ``DDPM(schedule='theory', variance='beta')`` written as one plain loop."""
    mu = mu.float()
    logw = torch.full((mu.shape[0],), -torch.log(torch.tensor(float(mu.shape[0]))).item())
    mu_sq = (mu * mu).sum(-1)
    ab = alpha_bars(betas).tolist()
    b = betas.tolist()
    x = torch.randn(n, mu.shape[1], generator=gen)
    for t in range(len(b) - 1, -1, -1):
        a = ab[t]
        v = a * sigma**2 + 1 - a
        sq = (x * x).sum(-1, keepdim=True) - 2 * a**0.5 * (x @ mu.T) + a * mu_sq
        r = torch.softmax(logw - 0.5 * sq / v, -1)
        s = (a**0.5 * (r @ mu) - x) / v
        x = (x + b[t] * s) / (1 - b[t]) ** 0.5 + b[t] ** 0.5 * torch.randn(x.shape, generator=gen)
    return x


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--components", type=int, default=16)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--samples", type=int, default=5000)
    args = parser.parse_args()
    target = SphereMixture(dim=args.dim, num_components=args.components, scale=1.0)
    target.prepare(generator=torch.Generator().manual_seed(0))
    sampler = DDPM(num_steps=args.steps, num_samples=args.samples, dtype="float32")
    betas = theory_betas(args.steps)
    t_fw, t_direct = [], []
    for rep in range(args.repeats):  # interleaved, best of each
        t0 = time.perf_counter()
        direct_loop(target.component_means, 1.0, betas, args.samples, torch.Generator().manual_seed(rep))
        t_direct.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        sampler.sample(target, generator=torch.Generator().manual_seed(rep))
        t_fw.append(time.perf_counter() - t0)
    fw, direct = min(t_fw), min(t_direct)
    print(
        f"d={args.dim} K={args.components} T={args.steps} n={args.samples} "
        f"torch threads={torch.get_num_threads()}"
    )
    print(f"direct loop : {args.samples / direct:10.1f} samples/s ({direct:.2f} s)")
    print(f"ddpm sampler: {args.samples / fw:10.1f} samples/s ({fw:.2f} s)")
    print(f"overhead    : {100 * (fw / direct - 1):+.1f} % (target <= 5 %)")


if __name__ == "__main__":
    main()
