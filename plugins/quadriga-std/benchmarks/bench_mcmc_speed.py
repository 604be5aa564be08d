"""MALA per iteration: quadriga-std's kernel against a bare PyTorch loop of the same update.

The bare loop is what a researcher writes by hand: a Gaussian target as one precision matmul
(``r = (x - mu) P``, log density ``-(x - mu) . r / 2``, score ``-r``), the Langevin proposal and the
Metropolis-Hastings test of Roberts & Tweedie 1996, no counters, no checks. The kernel pays for
what it adds (non-finite proposals rejected and counted, chain bookkeeping, progress) and for its
Gaussian's eigenbasis (two d x d products per evaluation instead of one). Used by
``benchmarks/run_all.py``; ``python bench_mcmc_speed.py`` prints the ratios.
"""

from __future__ import annotations

import math
import time

import torch


def bare_mala(
    precision: torch.Tensor, mean: torch.Tensor, h: float, chains: int, steps: int, seed: int
) -> float:
    """CPU seconds per iteration of a hand-written MALA loop on N(mean, precision^-1)."""
    gen = torch.Generator().manual_seed(seed)
    dtype, d = precision.dtype, precision.shape[0]

    def log_prob_and_score(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        r = (x - mean) @ precision
        return -0.5 * ((x - mean) * r).sum(-1), -r

    t0 = time.process_time()
    x = torch.randn(chains, d, generator=gen, dtype=dtype)
    lp, s = log_prob_and_score(x)
    for _ in range(steps):
        y = x + h * s + math.sqrt(2 * h) * torch.randn(x.shape, generator=gen, dtype=dtype)
        lp_y, s_y = log_prob_and_score(y)
        log_ratio = lp_y - lp + (((y - x - h * s) ** 2).sum(-1) - ((x - y - h * s_y) ** 2).sum(-1)) / (4 * h)
        accept = torch.log(torch.rand(chains, generator=gen, dtype=dtype)) < log_ratio
        x = torch.where(accept[:, None], y, x)
        lp = torch.where(accept, lp_y, lp)
        s = torch.where(accept[:, None], s_y, s)
    return (time.process_time() - t0) / steps


def quadriga_mala(d: int, chains: int, steps: int, seed: int, dtype: str = "float64") -> float:
    """CPU seconds per iteration of quadriga-std's MALA on the equicorrelated Gaussian (rho = 0.3)."""
    from quadriga_std.samplers.mcmc import MALA
    from quadriga_std.targets.gaussian import Gaussian

    target = Gaussian(dim=d, equicorrelation=0.3)
    sampler = MALA(step_size=0.01, num_chains=chains, num_samples=steps, burn_in=0, dtype=dtype)
    t0 = time.process_time()
    sampler.sample(target, generator=torch.Generator().manual_seed(seed))
    return (time.process_time() - t0) / steps


def bare_arm(d: int, chains: int, steps: int, seed: int) -> float:
    """:func:`bare_mala` on the same Gaussian as :func:`quadriga_mala` (float64)."""
    cov = 0.7 * torch.eye(d, dtype=torch.float64) + 0.3 * torch.ones(d, d, dtype=torch.float64)
    return bare_mala(torch.linalg.inv(cov), torch.zeros(d, dtype=torch.float64), 0.01, chains, steps, seed)


if __name__ == "__main__":
    torch.set_num_threads(1)
    for d in (10, 100, 1000):
        for c in (1, 64):
            steps = 200 if d < 1000 else 50
            q = min(quadriga_mala(d, c, steps, r) for r in range(3))
            b = min(bare_arm(d, c, steps, r) for r in range(3))
            print(
                f"d={d:5d} chains={c:3d}  quadriga/bare {q / b:.2f}  ({q * 1e6:.0f} vs {b * 1e6:.0f} us/iter)"
            )
    f32 = min(quadriga_mala(1000, 1, 50, r, "float32") for r in range(3))
    f64 = min(quadriga_mala(1000, 1, 50, r, "float64") for r in range(3))
    print(f"float32 / float64, d = 1000, 1 chain: {f32 / f64:.2f}")
