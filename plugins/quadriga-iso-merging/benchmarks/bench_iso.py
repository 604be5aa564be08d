"""Seconds of one Iso-C and one Iso-CTS merge against one task-arithmetic merge and one fine-tune, in one run.

Setting: a zoo suite of width 128 (base MLP 64-128-128-10 and six task fine-tunes of the mlp-zoo
recipe, trained once, no disk cache), one thread. Each method's merged task vector (``update``) is
computed ``--repeats`` times; printed: the best times, the ratios Iso / task arithmetic (a sum: Iso
pays one SVD per layer, Iso-CTS one per layer and task plus two polar factors, so the ratio is in
the hundreds or thousands) and the ratios Iso / one fine-tune of 200 Adam steps, the cost the merge
is spent against (target: Iso-CTS below 0.5 x one fine-tune).

Run: ``.venv/bin/python plugins/quadriga-iso-merging/benchmarks/bench_iso.py [--repeats 5]``
"""

from __future__ import annotations

import argparse
import time

from quadriga_iso_merging.iso import IsoC, IsoCTS
from quadriga_std.weightspace.merging import TaskArithmetic, task_vectors
from quadriga_std.weightspace.mlp import train
from quadriga_std.weightspace.zoo import MLPZoo

from quadriga.seeding import make_generator
from quadriga.threads import single_thread


def main() -> None:
    """Time the three merges' updates and print the ratios."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    zoo = MLPZoo(cache=False, tasks=["parity", "at-least-5", "mod-3", "low-digits", "rotated", "inverted"])
    zoo.prepare(generator=make_generator(0))
    with single_thread():
        suite = zoo.suite(128, 1)
        taus = task_vectors(suite)
        x, y = zoo.task_data("parity", "train")
        t0 = time.perf_counter()
        train(
            suite.finetuned["parity"],
            x,
            y,
            num_steps=200,
            learning_rate=1e-3,
            batch_size=64,
            generator=make_generator(0),
        )
        finetune = time.perf_counter() - t0
        best = {}
        for name, method in (("task-arithmetic", TaskArithmetic()), ("iso-c", IsoC()), ("iso-cts", IsoCTS())):
            times = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                method.update(taus)
                times.append(time.perf_counter() - t0)
            best[name] = min(times)
    base = best["task-arithmetic"]
    print(
        f"task arithmetic {1e3 * base:.2f} ms; iso-c {1e3 * best['iso-c']:.2f} ms "
        f"(ratio {best['iso-c'] / base:.1f}); iso-cts {1e3 * best['iso-cts']:.2f} ms "
        f"(ratio {best['iso-cts'] / base:.1f}); one fine-tune {finetune:.2f} s: iso-c / fine-tune "
        f"{best['iso-c'] / finetune:.3f}, iso-cts / fine-tune {best['iso-cts'] / finetune:.3f}"
    )


if __name__ == "__main__":
    main()
