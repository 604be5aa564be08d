"""MALA and HMC per iteration: quadriga-std's kernels against bare PyTorch loops of the same update.

The bare loops are what a researcher writes by hand: a Gaussian target as one precision matmul
(``r = (x - mu) P``, log density ``-(x - mu) . r / 2``, score ``-r``), then the Langevin proposal
and Metropolis-Hastings test of Roberts & Tweedie 1996 (MALA), or a full momentum refresh, L
leapfrog steps (the last position's log density and score from one matmul) and the
Metropolis-Hastings test of Neal 2011 (HMC); no counters, no checks, no stored draws. The kernels
pay for what they add (non-finite proposals rejected and counted, the draws kept, chain
bookkeeping, progress); std's Gaussian evaluates a dense covariance through its precision too (one
d x d product per call, formed once when the target is built). Used by
``benchmarks/run_all.py``; ``python bench_mcmc_speed.py`` prints the ratios.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import torch


def _gaussian(
    precision: torch.Tensor, mean: torch.Tensor
) -> Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    """``x -> (log density up to a constant Tensor[c], score Tensor[c, d])`` of N(mean, precision^-1),
    from one precision product, as a hand-written loop has it."""

    def log_prob_and_score(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        r = (x - mean) @ precision
        return -0.5 * ((x - mean) * r).sum(-1), -r

    return log_prob_and_score


def bare_mala(
    precision: torch.Tensor, mean: torch.Tensor, h: float, chains: int, steps: int, seed: int
) -> float:
    """CPU seconds per iteration of a hand-written MALA loop on N(mean, precision^-1)."""
    gen = torch.Generator().manual_seed(seed)
    dtype, d = precision.dtype, precision.shape[0]

    log_prob_and_score = _gaussian(precision, mean)
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


def bare_hmc(
    precision: torch.Tensor,
    mean: torch.Tensor,
    eps: float,
    num_leapfrog: int,
    chains: int,
    steps: int,
    seed: int,
) -> float:
    """CPU seconds per iteration of a hand-written HMC loop (unit mass) on N(mean, precision^-1)."""
    gen = torch.Generator().manual_seed(seed)
    dtype, d = precision.dtype, precision.shape[0]

    log_prob_and_score = _gaussian(precision, mean)

    def score(x: torch.Tensor) -> torch.Tensor:
        return -((x - mean) @ precision)

    t0 = time.process_time()
    x = torch.randn(chains, d, generator=gen, dtype=dtype)
    lp, s = log_prob_and_score(x)
    for _ in range(steps):
        p0 = torch.randn(x.shape, generator=gen, dtype=dtype)
        q, p = x, p0 + 0.5 * eps * s
        for _ in range(num_leapfrog - 1):
            q = q + eps * p
            p = p + eps * score(q)
        q = q + eps * p
        lp_q, s_q = log_prob_and_score(q)
        p = p + 0.5 * eps * s_q
        log_ratio = lp_q - lp - 0.5 * (p * p).sum(-1) + 0.5 * (p0 * p0).sum(-1)
        accept = torch.log(torch.rand(chains, generator=gen, dtype=dtype)) < log_ratio
        x = torch.where(accept[:, None], q, x)
        lp = torch.where(accept, lp_q, lp)
        s = torch.where(accept[:, None], s_q, s)
    return (time.process_time() - t0) / steps


def quadriga_hmc(d: int, chains: int, steps: int, seed: int, dtype: str = "float64") -> float:
    """CPU seconds per iteration of quadriga-std's HMC (10 leapfrog steps of 0.05) on the
    equicorrelated Gaussian (rho = 0.3)."""
    from quadriga_std.samplers.mcmc import HMC
    from quadriga_std.targets.gaussian import Gaussian

    target = Gaussian(dim=d, equicorrelation=0.3)
    sampler = HMC(
        step_size=0.05, num_leapfrog_steps=10, num_chains=chains, num_samples=steps, burn_in=0, dtype=dtype
    )
    t0 = time.process_time()
    sampler.sample(target, generator=torch.Generator().manual_seed(seed))
    return (time.process_time() - t0) / steps


def bare_hmc_arm(d: int, chains: int, steps: int, seed: int) -> float:
    """:func:`bare_hmc` on the same Gaussian and settings as :func:`quadriga_hmc` (float64)."""
    cov = 0.7 * torch.eye(d, dtype=torch.float64) + 0.3 * torch.ones(d, d, dtype=torch.float64)
    return bare_hmc(torch.linalg.inv(cov), torch.zeros(d, dtype=torch.float64), 0.05, 10, chains, steps, seed)


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
    for name, quad, bare in (("MALA", quadriga_mala, bare_arm), ("HMC", quadriga_hmc, bare_hmc_arm)):
        for d in (10, 100, 1000):
            for c in (1, 64):
                steps = (200 if d < 1000 else 50) // (5 if name == "HMC" else 1)
                q = min(quad(d, c, steps, r) for r in range(3))
                b = min(bare(d, c, steps, r) for r in range(3))
                print(
                    f"{name} d={d:5d} chains={c:3d}  quadriga/bare {q / b:.2f}  "
                    f"({q * 1e6:.0f} vs {b * 1e6:.0f} us/iter)"
                )
    f32 = min(quadriga_mala(1000, 1, 50, r, "float32") for r in range(3))
    f64 = min(quadriga_mala(1000, 1, 50, r, "float64") for r in range(3))
    print(f"float32 / float64, d = 1000, 1 chain: {f32 / f64:.2f}")
