"""CPU seconds to fit and calibrate ``st-dqr`` against ``ellipsoid-conformal`` (its cost over the baseline).

Usage: ``python plugins/quadriga-mv-conformal/benchmarks/bench_stdqr_speed.py [--repeats 3]``

Both fit and calibrate on the same banana data (``mv-synthetic``, 2000 train and 1000 calibration
rows), ST-DQR with its defaults (CVAE 64-64, 150 epochs), the ellipsoid with a kNN mean regressor;
then each scores membership of 100 000 (x, y) pairs (what the Monte-Carlo area needs). Repeats
alternate the order of the arms; the ratios ST-DQR / ellipsoid of CPU seconds
(``time.process_time``, one thread) for fitting and for membership are printed per repeat and
as their medians. The price of the learned representation is the fitting ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    """Run the benchmark and print one line per repeat and the median ratios."""
    import numpy as np
    import torch
    from quadriga_mv_conformal.stdqr import STDQR
    from quadriga_std.estimators.regions import EllipsoidConformal
    from quadriga_std.tasks.multivariate import MultivariateResponse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    data = MultivariateResponse(shape="banana")
    data.prepare(generator=torch.Generator().manual_seed(0))
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 2.0, (100_000, 1))
    Y = rng.uniform(-3, 3, (100_000, 2))
    arms = {"stdqr": STDQR(), "ellipsoid": EllipsoidConformal(regressor="knn")}
    fit_ratios, member_ratios = [], []
    for r in range(args.repeats):
        fit, member = {}, {}
        for name in list(arms) if r % 2 == 0 else list(arms)[::-1]:
            start = time.process_time()
            est = arms[name].estimate(data, generator=torch.Generator().manual_seed(r))
            fit[name] = time.process_time() - start
            start = time.process_time()
            est.predict.contains(X, Y)
            member[name] = time.process_time() - start
        fit_ratios.append(fit["stdqr"] / fit["ellipsoid"])
        member_ratios.append(member["stdqr"] / member["ellipsoid"])
        print(
            f"repeat {r}: fit stdqr {fit['stdqr']:.2f} s, ellipsoid {fit['ellipsoid']:.3f} s (ratio "
            f"{fit_ratios[-1]:.0f}); membership of 1e5 pairs ratio {member_ratios[-1]:.1f}"
        )
    print(
        f"median ratios stdqr/ellipsoid over {args.repeats} repeats: "
        f"fit {statistics.median(fit_ratios):.0f}, "
        f"membership {statistics.median(member_ratios):.1f}"
    )


if __name__ == "__main__":
    main()
