"""The validation-split search behind the rotation-augmented CNN's ``Tuning`` record.

``python -m quadriga_nero.tuning [--seeds 3] [--epochs 20] [--out DIR]`` trains the ``cnn-rot`` arm
of ``nero-digits-rotation`` (rotation augmentation) for every ``augment_fraction`` in
:data:`FRACTIONS` on ``--seeds`` fresh splits of ``load_digits`` at root seed 1000 (disjoint from the
claims' runs, root seed 0): 60 % train (the claims' training size), 20 % validation (the task's
``calibration`` split), 20 % test, never read. Each fraction is scored by its mean accuracy on the
upright validation digits (the model's own validation accuracy; neither the test split nor the
claims' paired comparison with the plain CNN enters), and the best is printed. Every fraction sees
the same splits and seeds.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from quadriga.stage_names import parse_stage_name

__all__ = ["FRACTIONS", "TUNING_SEED", "tune"]

#: the augment fractions tried (half of each batch rotated, or all of it)
FRACTIONS = (0.5, 1.0)
TUNING_SEED = 1000


def tune(
    seeds: int, out: Path, *, epochs: int = 20, fractions: tuple[float, ...] = FRACTIONS
) -> dict[str, Any]:
    """Run the search; returns ``{"accuracy": {fraction: [per-seed validation accuracy]}, "best": f}``.

    The validation accuracy is the ``nero`` evaluator's ``accuracy`` (the identity element of the
    orbit: upright digits) on the ``calibration`` split, replicate ``i`` of each fraction scored on
    the split it was trained beside.
    """
    from quadriga import api
    from quadriga.pipeline import read_source
    from quadriga.registry import get_registry

    data, _ = read_source("nero-digits-rotation", get_registry())
    task = dict(data["task"]["digits"])
    task.update(train=0.6, calibration=0.2, test=0.2, repeat=seeds)
    stage = dict(data["stage"]["cnn-rot"])
    stage.pop("augment_fraction", None)
    stage.update(num_epochs=epochs, repeat=seeds, matrix={"augment_fraction": list(fractions)})
    data["task"] = {"digits": task}
    validation = {
        "use": "nero",
        "inputs": {"subject": ["cnn-rot[*]"], "reference": "digits[*]"},
        "group": "rotation",
        "angle_step": 90.0,
        "split": "calibration",
        "figures": False,
    }
    data["stage"] = {"cnn-rot": stage, "validation": validation}
    result = api.run(data, seed=TUNING_SEED, out=out)
    table: dict[float, list[float]] = {}
    for key, value in result.results["stages"]["validation"]["values"].items():
        subject, _, metric = key.rpartition("/")
        parsed = parse_stage_name(subject) if metric == "accuracy" and subject else None
        if parsed is None or parsed.source != "cnn-rot" or parsed.replicate is None:
            continue
        table.setdefault(float(parsed.point_dict()["augment_fraction"]), []).append(float(value))
    best = max(table, key=lambda f: math.fsum(table[f]) / len(table[f]))
    return {"accuracy": {str(f): table[f] for f in sorted(table)}, "best": best}


def main() -> None:
    """Command-line entry (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("runs/nero-tuning"))
    args = parser.parse_args()
    print(json.dumps(tune(args.seeds, args.out, epochs=args.epochs), indent=1))


if __name__ == "__main__":
    main()
