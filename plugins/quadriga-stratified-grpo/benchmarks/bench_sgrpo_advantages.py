"""Speed of the vectorised SAN advantage against a per-group, per-stratum Python loop and against
GRPO's global advantage, measured in the same run. Prints ratios (higher = vectorised SAN faster).

Run: ``.venv/bin/python plugins/quadriga-stratified-grpo/benchmarks/bench_sgrpo_advantages.py``
"""

from __future__ import annotations

import functools
import timeit

import torch
from quadriga_stratified_grpo.advantages import global_advantages, stratified_advantages


def loop_san(rewards: torch.Tensor, strata: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Reference: SAN by looping over groups and strata (population std, 0 for constant strata)."""
    out = torch.zeros_like(rewards)
    for p in range(rewards.shape[0]):
        for k in strata[p].unique():
            mask = strata[p] == k
            r = rewards[p][mask]
            std = r.std(unbiased=False)
            out[p][mask] = (r - r.mean()) / (std + eps) if std > 0 else 0.0
    return out


def main() -> None:
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)
    for prompts, size in [(8, 8), (64, 16), (256, 16)]:
        strata = torch.randint(4, (prompts, size), generator=gen)
        rewards = torch.randn(prompts, size, generator=gen) + strata
        assert torch.allclose(loop_san(rewards, strata), stratified_advantages(rewards, strata), atol=1e-5)
        n = 20
        t_loop = min(timeit.repeat(functools.partial(loop_san, rewards, strata), number=n, repeat=3)) / n
        t_san = (
            min(timeit.repeat(functools.partial(stratified_advantages, rewards, strata), number=n, repeat=3))
            / n
        )
        t_glob = min(timeit.repeat(functools.partial(global_advantages, rewards), number=n, repeat=3)) / n
        print(
            f"P={prompts:4d} G={size:3d}: loop {t_loop * 1e3:8.3f} ms, SAN {t_san * 1e3:7.3f} ms, "
            f"global {t_glob * 1e3:7.3f} ms | speed-up vs loop {t_loop / t_san:6.1f}x, "
            f"SAN / global cost {t_san / t_glob:4.1f}x"
        )


if __name__ == "__main__":
    main()
