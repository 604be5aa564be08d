"""Seconds of weight matching and activation matching against training one of the two networks, in one run.

Setting: MLPs 64-h-h-10 on scikit-learn digits (1078 train rows), h in {128, 512}, Adam 1e-3, batch
64, 30 epochs (the ``mlp-zoo`` recipe, no disk cache), one thread. For each width: train two
members, then time :func:`weight_matching` and :func:`activation_matching` on them. Printed: the
best of ``--repeats`` times and the ratios matching / training (target: weight matching below 0.5 x
one training at h = 512, i.e. aligning costs less than half of what one of the networks cost).

Run: ``.venv/bin/python plugins/quadriga-git-rebasin/benchmarks/bench_rebasin.py [--repeats 3]``
"""

from __future__ import annotations

import argparse
import time

from quadriga_git_rebasin.matching import activation_matching, weight_matching
from quadriga_std.weightspace.zoo import MLPZoo

from quadriga.seeding import make_generator
from quadriga.threads import single_thread


def main() -> None:
    """Time training, weight matching and activation matching; print the ratios."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    zoo = MLPZoo(cache=False)
    zoo.prepare(generator=make_generator(0))
    x, _ = zoo.data("train")
    with single_thread():
        for width in (128, 512):
            t0 = time.perf_counter()
            a = zoo.member(width, 1)
            train_s = time.perf_counter() - t0
            b = zoo.member(width, 2)
            wm, am = [], []
            for rep in range(args.repeats):
                t0 = time.perf_counter()
                weight_matching(a, b, generator=make_generator(rep))
                wm.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                activation_matching(a, b, x)
                am.append(time.perf_counter() - t0)
            print(
                f"h = {width:4d}: training {train_s:6.2f} s, weight matching {min(wm):6.3f} s "
                f"(ratio {min(wm) / train_s:.3f}), activation matching {min(am):6.3f} s "
                f"(ratio {min(am) / train_s:.3f})"
            )


if __name__ == "__main__":
    main()
