"""The learning-rate search behind the claims' ``Tuning`` records (same budget for both losses).

``python -m quadriga_value_classification.tuning [--frames 3000] [--seeds 1] [--arm ARM] [--out DIR]``
runs the claim's two 128-128 arms on the noisy task (``dqn-mse-noisy``, ``dqn-hlgauss-noisy``)
over :data:`~quadriga_value_classification.claims.LR_GRID` (``matrix = { learning_rate = [...] }``)
with ``--seeds`` replicates at root seed 1000 (seeds disjoint from the claim runs, root seed 0), at
the claims' paper budget, and prints the mean return AUC of every (loss, learning rate) and the best
learning rate of each loss. Both losses get the same number of settings and seeds (tuning parity).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from quadriga.stage_names import parse_stage_name
from quadriga_value_classification.claims import (
    BASELINE,
    LR_GRID,
    METHOD,
    PAPER_ANNEAL,
    PAPER_FRAMES,
    PAPER_STARTS,
    PIPELINE,
)

__all__ = ["tune"]

TUNING_SEED = 1000


def tune(
    frames: int,
    seeds: int,
    out: Path,
    lrs: tuple[float, ...] = LR_GRID,
    arms: tuple[str, ...] = (METHOD, BASELINE),
) -> dict[str, Any]:
    """Run the search for ``arms``; returns ``{arm: {"auc": {lr: [per-seed AUC]}, "best_lr": lr}}``.

    Raises:
        ConfigError: the pipeline lacks one of the arms.
    """
    from quadriga import api
    from quadriga.claims.run import check_names
    from quadriga.pipeline import read_source
    from quadriga.registry import get_registry

    data, file = read_source(PIPELINE, get_registry())
    check_names(data, PIPELINE, file, arms=arms)
    keep = tuple(arms)
    stages = {name: dict(data["stage"][name]) for name in keep}
    for name in keep:
        stages[name].update(
            total_frames=frames,
            learning_starts=PAPER_STARTS,
            eps_anneal_frames=PAPER_ANNEAL,
            repeat=seeds,
            matrix={"learning_rate": list(lrs)},
        )
    stages["return-curve"] = {"use": "return-curve", "inputs": {"subject": [f"{a}[*]" for a in keep]}}
    data["stage"] = stages
    data["task"] = {"env-noisy": data["task"]["env-noisy"]}
    result = api.run(data, seed=TUNING_SEED, out=out)
    values = result.results["stages"]["return-curve"]["values"]
    report: dict[str, Any] = {}
    for arm in keep:
        table: dict[float, list[float]] = {}
        for key, v in values.items():
            subject, _, metric = key.rpartition("/")
            parsed = parse_stage_name(subject) if metric == "auc" and subject else None
            if parsed and parsed.source == arm and parsed.replicate is not None and len(parsed.point) == 1:
                rate = parsed.point_dict().get("learning_rate")
                if rate is not None:
                    table.setdefault(float(rate), []).append(float(v))
        best = max(table, key=lambda lr: math.fsum(table[lr]) / len(table[lr]))
        report[arm] = {"auc": {str(k): table[k] for k in sorted(table)}, "best_lr": best}
    return report


def main() -> None:
    """Command-line entry (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=PAPER_FRAMES)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--arm", action="append", choices=(METHOD, BASELINE), help="default: both")
    parser.add_argument("--out", type=Path, default=Path("runs/value-classification-tuning"))
    args = parser.parse_args()
    arms = tuple(args.arm or (METHOD, BASELINE))
    print(json.dumps(tune(args.frames, args.seeds, args.out, arms=arms), indent=1))


if __name__ == "__main__":
    main()
