"""The learning-rate search behind the speed claim's ``Tuning`` records (same grid for both arms).

``python -m quadriga_value_mapping.tuning [--frames 3000] [--seeds 1] [--out DIR]`` runs both arms of
``value-mapping-cartpole-scales`` (``map-dqn``, ``dqn``) on its three reward-scaled tasks over
:data:`~quadriga_value_mapping.claims.LR_GRID` (one more matrix axis, ``learning_rate``) with
``--seeds`` replicates at root seed 1000 (disjoint from the claim runs, root seed 0), at the claim's
paper budget, and prints for each arm the mean over tasks of AUC / reward scale (CartPole steps) per
learning rate and the best one. Both arms get the same settings and seeds (tuning parity).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from quadriga_value_mapping.claims import LR_GRID, PAPER_FRAMES, SCALES_PIPELINE, TASKS

__all__ = ["TUNING_SEED", "tune"]

TUNING_SEED = 1000
_ARMS = ("map-dqn", "dqn")


def tune(frames: int, seeds: int, out: Path, lrs: tuple[float, ...] = LR_GRID) -> dict[str, Any]:
    """Run the search; returns ``{arm: {"score": {lr: mean AUC / scale}, "best_lr": lr}}``.

    Raises:
        ConfigError, StageError: as :func:`quadriga.api.run`.
    """
    from quadriga import api
    from quadriga.pipeline import read_source
    from quadriga.registry import get_registry
    from quadriga.stage_names import parse_stage_name

    data, _ = read_source(SCALES_PIPELINE, get_registry())
    for arm in _ARMS:
        stage = data["stage"][arm]
        stage.update(
            total_frames=frames,
            learning_starts=min(500, frames // 4),
            eps_anneal_frames=frames // 2,
            repeat=seeds,
        )
        stage["matrix"] = {**stage["matrix"], "learning_rate": list(lrs)}
    result = api.run(data, seed=TUNING_SEED, out=out)
    values = result.results["stages"]["return-curve"]["values"]
    scores: dict[str, dict[float, list[float]]] = {arm: {} for arm in _ARMS}
    for key, v in values.items():
        subject, _, metric = key.rpartition("/")
        if metric != "auc":
            continue
        parsed = parse_stage_name(subject)
        point = parsed.point_dict()
        scale = TASKS[point["inputs.task"]]
        scores[parsed.source].setdefault(float(point["learning_rate"]), []).append(float(v) / scale)
    report: dict[str, Any] = {}
    for arm, table in scores.items():
        mean = {lr: math.fsum(vs) / len(vs) for lr, vs in sorted(table.items())}
        best = max(mean, key=lambda lr: mean[lr])
        report[arm] = {"score": {str(k): round(s, 2) for k, s in mean.items()}, "best_lr": best}
    return report


def main() -> None:
    """Command-line entry (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=PAPER_FRAMES)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("runs/value-mapping-tuning"))
    args = parser.parse_args()
    print(json.dumps(tune(args.frames, args.seeds, args.out), indent=1))


if __name__ == "__main__":
    main()
