"""Cost of the torch targets against inference-gym's own NumPy log density, per target, in one run.

For each target and a batch of c = 4 points (the benchmark's chains): wall time of one torch
``log_prob`` + ``score`` (autograd, one thread) against one inference-gym NumPy ``log_prob``
(no gradient) of the same points. Prints the ratio torch (value + gradient) / NumPy (value only):
below 1 the torch density gives samplers their gradient for less than inference-gym's value costs.

    .venv/bin/python plugins/quadriga-inference-gym/benchmarks/bench_ig_density.py [--repeats 20]
"""

from __future__ import annotations

import argparse
import timeit

import torch
from quadriga_inference_gym import targets as T
from quadriga_inference_gym._gym import reference_log_density

from quadriga.threads import single_thread

TARGETS = [
    T.EightSchools,
    T.NealsFunnel,
    T.Banana,
    T.IllConditionedGaussian,
    T.BrownianMotionMissingMiddle,
    T.StochasticVolatilitySP500Small,
    T.SyntheticItemResponseTheory,
]


def _best(fn, repeats: int) -> float:
    """The shortest of ``repeats`` wall-clock times of ``fn()`` (seconds; garbage collection left on)."""
    return min(timeit.repeat(fn, setup="gc.enable()", number=1, repeat=repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    print(f"{'target':32s} {'torch lp+score (ms)':>20s} {'numpy lp (ms)':>14s} {'ratio':>7s}")
    with single_thread():
        for cls in TARGETS:
            t = cls()
            z = t.warm_start(4, generator=torch.Generator().manual_seed(0))
            zn = z.numpy()

            def ours(t=t, z=z):
                y = z.clone()  # a new tensor each time, as a sampler's proposal
                t.log_prob(y)
                t.score(y)

            ref_repeats = (
                max(1, args.repeats // 10) if cls is T.StochasticVolatilitySP500Small else args.repeats
            )
            a = _best(ours, args.repeats)
            b = _best(lambda t=t, zn=zn: reference_log_density(t.model, zn), ref_repeats)
            print(f"{cls.__name__:32s} {1e3 * a:20.3f} {1e3 * b:14.3f} {a / b:7.3f}")


if __name__ == "__main__":
    main()
