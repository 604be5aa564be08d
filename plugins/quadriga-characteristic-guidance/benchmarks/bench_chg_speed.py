"""Seconds per sample set of characteristic guidance against plain CFG at equal DDIM steps (a ratio).

Setting: the 2-D ``3-class-2d`` conditional mixture (class 0), DDIM (eta = 0), cosine schedule,
25 steps, n = 1000 samples, w = 3 and 7 (the claim's test bed). Prints, per w, the seconds of each
sampler (best of ``--repeats``, interleaved, one thread), the time ratio CHG / CFG, the ratio of
model evaluations (rows evaluated by either model: the correction's iterations) and the histogram
TV of each to the exact guided law.

Run: ``.venv/bin/python plugins/quadriga-characteristic-guidance/benchmarks/bench_chg_speed.py``
"""

from __future__ import annotations

import argparse
import time

import torch
from quadriga_characteristic_guidance.sampler import CharacteristicDDIM
from quadriga_ddpm.conditional import ConditionalGaussianMixture
from quadriga_ddpm.guided_distance import histogram_tv
from quadriga_ddpm.sampler import DDIM


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=25)
    args = parser.parse_args()
    torch.set_num_threads(1)
    target = ConditionalGaussianMixture(preset="3-class-2d")
    kw = {"num_steps": args.steps, "num_samples": args.samples, "schedule": "cosine"}
    for w in (3.0, 7.0):
        arms = {"cfg": DDIM(guidance=w, **kw), "chg": CharacteristicDDIM(guidance=w, **kw)}
        secs: dict[str, list[float]] = {k: [] for k in arms}
        out = {}
        for _ in range(args.repeats):
            for name, sampler in arms.items():
                t0 = time.perf_counter()
                out[name] = sampler.sample(target, generator=torch.Generator().manual_seed(0))
                secs[name].append(time.perf_counter() - t0)
        grid = target.guided_grid(w)
        for name in arms:
            tv = histogram_tv(out[name].x, grid, 20)
            evals = out[name].info["score_evals"]
            print(f"w={w:g} {name}: {min(secs[name]):.3f} s, {evals} evals, TV {tv:.4f}")
        print(
            f"w={w:g} ratio chg / cfg: time {min(secs['chg']) / min(secs['cfg']):.2f}, "
            f"evals {out['chg'].info['score_evals'] / out['cfg'].info['score_evals']:.2f}"
        )


if __name__ == "__main__":
    main()
