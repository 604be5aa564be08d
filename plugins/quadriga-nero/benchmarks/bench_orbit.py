"""Benchmark: NERO's batched orbit evaluation against a plain loop over orbit elements and samples.

Both compute the same ``Tensor[|G|, n, K]`` of class probabilities for a trained CNN on the
load_digits test images (rotations 0-345 degrees in 15-degree steps, 24 elements). The batched
path transforms all ``n |G|`` images at once (exact quarter turns, then one bilinear resampling)
and calls the model on large batches; the loop transforms and predicts one image and one element
at a time. Both run in this process, one thread each; the ratio is loop / batched wall time.

Run: ``nice -n 10 .venv/bin/python plugins/quadriga-nero/benchmarks/bench_orbit.py [--n 200]``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from quadriga_nero.learner import OrbitClassifier
from quadriga_nero.orbits import group_elements, orbit_predictions, orbit_predictions_loop, to_canvas
from sklearn.datasets import load_digits

from quadriga.progress import StageProgress
from quadriga.threads import single_thread


class _Digits:
    def __init__(self):
        d = load_digits()
        perm = np.random.default_rng(0).permutation(len(d.target))
        self.idx = {"train": perm[:1078], "test": perm[1078:]}
        self.X, self.y = d.data, d.target

    def split(self, name):
        return self.X[self.idx[name]], self.y[self.idx[name]]


def main() -> None:
    """Time both paths, check they agree, print a JSON line with the ratio."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200, help="test images in the orbit")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    data = _Digits()
    fit = OrbitClassifier(architecture="cnn", num_epochs=5).fit(
        data, generator=torch.Generator().manual_seed(0), progress=StageProgress()
    )
    X, _ = data.split("test")
    images = to_canvas(X[: args.n], 8, 12)
    elements = group_elements("rotation", angle_step=15.0)
    with single_thread():
        times = {"batched": [], "loop": []}
        for _ in range(args.repeats):
            t = time.perf_counter()
            fast = orbit_predictions(fit.predict, "rotation", images, elements)
            times["batched"].append(time.perf_counter() - t)
            t = time.perf_counter()
            slow = orbit_predictions_loop(fit.predict, "rotation", images, elements)
            times["loop"].append(time.perf_counter() - t)
    diff = float((fast - slow).abs().max())
    med = {k: float(np.median(v)) for k, v in times.items()}
    print(
        json.dumps(
            {
                "images": args.n,
                "elements": len(elements),
                "batched_s": med["batched"],
                "loop_s": med["loop"],
                "ratio_loop_over_batched": med["loop"] / med["batched"],
                "max_abs_difference": diff,
                "repeats": args.repeats,
            }
        )
    )


if __name__ == "__main__":
    main()
