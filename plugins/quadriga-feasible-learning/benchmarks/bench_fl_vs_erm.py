"""Seconds per epoch of ``feasible-learning`` against ``erm`` (same MLP, Adam, batches) in one run.

Setting: scikit-learn digits (898 train rows, 64 features), MLP 64-64, batch 64, 20 epochs,
one thread. The extra cost of FL is the dual step (an index-gathered clamp-add on the batch's
multipliers) and the weighted sum; the ratio FL / ERM per epoch is printed with the best and
median of ``--repeats`` interleaved fits (target: at most 1.3).

Run: ``.venv/bin/python plugins/quadriga-feasible-learning/benchmarks/bench_fl_vs_erm.py [--repeats 5]``
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from quadriga_feasible_learning.learners import ERM, FeasibleLearning
from quadriga_std.tasks.datasets import SklearnDataset

from quadriga.progress import StageProgress
from quadriga.seeding import make_generator
from quadriga.threads import single_thread


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=20)
    args = parser.parse_args()
    data = SklearnDataset(name="digits", train=0.5, calibration=0.1, test=0.4)
    data.prepare(generator=make_generator(0))
    common = dict(hidden_sizes=[64, 64], num_epochs=args.epochs, batch_size=64, log_every=args.epochs)
    arms = {"erm": ERM(**common), "feasible-learning": FeasibleLearning(**common)}
    times: dict[str, list[float]] = {k: [] for k in arms}
    with single_thread():
        for rep in range(args.repeats + 1):  # the first round warms up and is dropped
            for name, learner in arms.items():
                t0 = time.perf_counter()
                learner.fit(data, generator=make_generator(rep), progress=StageProgress())
                if rep:
                    times[name].append((time.perf_counter() - t0) / args.epochs)
    for name, ts in times.items():
        print(
            f"{name:18s} best {1e3 * min(ts):7.2f} ms/epoch, "
            f"median {1e3 * statistics.median(ts):7.2f} ms/epoch"
        )
    best = min(times["feasible-learning"]) / min(times["erm"])
    med = statistics.median(times["feasible-learning"]) / statistics.median(times["erm"])
    print(
        f"ratio FL / ERM per epoch: best {best:.3f}, median {med:.3f} (n = {args.repeats} fits each, torch "
        f"{torch.__version__})"
    )


if __name__ == "__main__":
    main()
