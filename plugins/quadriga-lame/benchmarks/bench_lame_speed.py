"""Seconds per test batch of ``lame`` against ``tent`` (the paper's 'faster, no backprop' claim).

Usage: ``python plugins/quadriga-lame/benchmarks/bench_lame_speed.py [--repeats 5]``

Both adapt the same source MLP (``mlp-classifier``, 64-128(BN)-64(BN)-10 trained on half of
load_digits) on the same class-sorted stream of noisy test images in batches of 64: LAME with a
kNN affinity (k = 5, up to 100 fixed-point steps per batch), TENT with one Adam step on the
BatchNorm affine parameters per batch. Repeats alternate the order of the two arms (A B, B A, ...)
so that other load hits both; the ratio TENT / LAME of CPU seconds per batch
(``time.process_time``, one thread) is reported per repeat and as their median. The paper
reports LAME faster than TENT (no backward pass); a ratio above 1 agrees.

Source: Boudiaf et al. 2022, CVPR, sec. 5 (run time of test-time adaptation methods).
"""

from __future__ import annotations

import argparse
import statistics
import time

from quadriga.progress import StageProgress


def main() -> None:
    """Run the benchmark and print one line per repeat and the median ratio."""
    import torch
    from quadriga_lame.baselines import Tent
    from quadriga_lame.lame import LAME
    from quadriga_std.shift.classifier import MLPClassifier
    from quadriga_std.shift.digits import ShiftedDigits

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    torch.set_num_threads(1)
    data = ShiftedDigits(scenarios=["class-sorted"], stream_corruption="noise")
    data.prepare(generator=torch.Generator().manual_seed(0))
    source = MLPClassifier().fit(data, generator=torch.Generator().manual_seed(1), progress=StageProgress())
    arms = {
        "lame": LAME(knn=5).fit(data, source, generator=None, progress=None),
        "tent": Tent(learning_rate=1e-3).fit(data, source, generator=None, progress=None),
    }
    X, _ = data.split("class-sorted")
    batches = data.batches("class-sorted")
    ratios = []
    for r in range(args.repeats):
        order = ["lame", "tent"] if r % 2 == 0 else ["tent", "lame"]
        per_batch = {}
        for name in order:
            start = time.process_time()
            arms[name].predict(X, batches)
            per_batch[name] = (time.process_time() - start) / len(batches)
        ratios.append(per_batch["tent"] / per_batch["lame"])
        print(
            f"repeat {r}: lame {1e3 * per_batch['lame']:.2f} ms/batch, tent {1e3 * per_batch['tent']:.2f} "
            f"ms/batch, ratio tent/lame {ratios[-1]:.2f}"
        )
    print(f"median ratio tent/lame over {len(ratios)} repeats: {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
