"""Seconds per training step of target score matching (TSM, mixture) against DSM, with the error ratios.

Setting: the claims' test bed (1-D mixture 0.5 N(-2, 0.25) + 0.5 N(2, 0.25)), quadriga-ddpm's
``score-network`` MLP (2 x 64), batch 256, 10k draws, ``--steps`` Adam steps, one seed shared by the
three learners (same draws, initial weights, z and sigma). Prints the seconds per step of each
learner (best of ``--repeats``, interleaved), the overhead ratio TSM / DSM per step (TSM reads the
precomputed clean score of the minibatch: one gather and one division more; the clean scores of the
training set are computed once, timed apart), and each network's score MSE to the exact noised score
at sigma = 0.01, 0.1 and 0.9 with the ratios to DSM's.

Run: ``.venv/bin/python plugins/quadriga-target-score-matching/benchmarks/bench_tsm_training.py``
"""

from __future__ import annotations

import argparse
import time

import torch
from quadriga_ddpm.score_error import ScoreError
from quadriga_ddpm.score_learner import ScoreNetwork
from quadriga_std.targets.gaussian import GaussianMixture
from quadriga_target_score_matching.tsm import TargetScoreMatching


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    gmm = GaussianMixture(means=[[-2.0], [2.0]], scale=0.5)
    learners = {
        "dsm": ScoreNetwork(num_steps=args.steps),
        "tsm": TargetScoreMatching(target="tsm", num_steps=args.steps),
        "mixture": TargetScoreMatching(target="mixture", num_steps=args.steps),
    }
    t0 = time.perf_counter()
    gmm.score(gmm.sample(10000, generator=torch.Generator().manual_seed(0)))
    t_score = time.perf_counter() - t0
    best: dict[str, float] = {k: float("inf") for k in learners}
    fitted = {}
    for _ in range(args.repeats):
        for name, learner in learners.items():
            t0 = time.perf_counter()
            fitted[name] = learner.fit(gmm, generator=torch.Generator().manual_seed(args.seed))
            best[name] = min(best[name], time.perf_counter() - t0)
    sigmas = [0.01, 0.1, 0.9]
    mse = (
        ScoreError(sigmas=sigmas, num_samples=4000)
        .evaluate(fitted, gmm, generator=torch.Generator().manual_seed(100))
        .values
    )
    print(
        f"{args.steps} steps, batch 256, MLP 2 x 64; clean scores of 10k draws: {t_score * 1e3:.1f} ms once"
    )
    for name in learners:
        per = best[name] / args.steps * 1e3
        line = f"{name:8s} {per:.3f} ms/step (x{best[name] / best['dsm']:.3f} of DSM)"
        for s in sigmas:
            m, d = mse[f"{name}/score_mse@sigma={s:g}"], mse[f"dsm/score_mse@sigma={s:g}"]
            line += f" | MSE@{s:g} {m:.4g} (x{m / d:.3g})"
        print(line)


if __name__ == "__main__":
    main()
