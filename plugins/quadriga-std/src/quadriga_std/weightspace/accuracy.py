"""``normalized-accuracy``: how much of each fine-tune's accuracy a merged multi-task model keeps."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Fitted, Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Evaluator, named
from quadriga.params import param
from quadriga.validators import one_of
from quadriga_std.weightspace.merging import CHECK_MERGED, merged_network, trunk
from quadriga_std.weightspace.mlp import accuracy
from quadriga_std.weightspace.zoo import MLPZoo

__all__ = ["NormalizedAccuracy", "task_accuracies"]


def task_accuracies(zoo: MLPZoo, fitted: Any, split: str) -> list[dict[str, Any]]:
    """Per task of a merged model: merged, fine-tuned and base-trunk accuracy on ``split``.

    ``base`` is the base network's trunk under the task's own (fine-tuned) head: the "zero-shot"
    point of the normalized accuracy improvement. Rows hold ``task``, ``merged``, ``finetuned``,
    ``base``, ``normalized = merged / finetuned`` and ``improvement = (merged - base) /
    (finetuned - base)`` (NaN when the fine-tune is no better than the base).

    Raises:
        ConfigError: an artifact without the merged model's ``info`` (seed, width, tasks).

    Source: Ilharco et al. 2023, sec. 4 (normalized accuracy); Marczak et al. 2025, eq. 7 (NAI).
    """
    info = getattr(fitted, "info", {})
    if not {"seed", "width", "tasks"} <= set(info) or "trunk" not in getattr(fitted, "model", {}):
        raise ConfigError("the subject is not a merged model: connect a merging learner.", key="subject")
    suite = zoo.suite(int(info["width"]), int(info["seed"]), list(info["tasks"]))
    base_trunk = trunk(suite.base)
    rows = []
    for task in info["tasks"]:
        x, y = zoo.task_data(task, split)
        merged = accuracy(merged_network(fitted.model, task), x, y)
        finetuned = accuracy(suite.finetuned[task], x, y)
        base = accuracy(merged_network({"trunk": base_trunk, "heads": fitted.model["heads"]}, task), x, y)
        gap = finetuned - base
        rows.append(
            {
                "task": task,
                "merged": merged,
                "finetuned": finetuned,
                "base": base,
                "normalized": merged / finetuned if finetuned > 0 else float("nan"),
                "improvement": (merged - base) / gap if gap > 0 else float("nan"),
            }
        )
    return rows


@attrs.define(kw_only=True)
class NormalizedAccuracy(Evaluator):
    """Mean normalized accuracy (merged / fine-tuned, per task) of merged multi-task models.

    Values per subject: ``"<subject>/normalized_accuracy"`` (mean over its tasks),
    ``"/absolute_accuracy"`` (mean merged accuracy), ``"/finetuned_accuracy"``,
    ``"/normalized_improvement"`` (mean NAI over tasks with a positive gap) and per task
    ``"/normalized_accuracy_<task>"``, ``"/improvement_<task>"``; ``tables["tasks"]``.

    Shapes: reads ``reference.task_data(task, split) -> (Tensor[n, 64], LongTensor[n])``.
    Units: fractions (accuracy ratios).

    Raises:
        ConfigError: no ``mlp-zoo`` reference, a subject that is not a merged model.

    Source: Ilharco et al. 2023, "Editing models with task arithmetic", sec. 4 (normalized accuracy);
    Marczak et al. 2025, "No task left behind: isotropic model merging", eq. 7 (NAI).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Fitted,), "reference": (Dataset,)}
    check_inputs: ClassVar[dict[str, Any]] = CHECK_MERGED

    split: str = param("test", doc="zoo split scored", validator=one_of(("train", "validation", "test")))

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Score every merged subject on every one of its tasks (see the class docstring)."""
        if not isinstance(reference, MLPZoo):
            raise ConfigError("normalized-accuracy needs the mlp-zoo as reference.", key="reference")
        values, table = {}, []
        for name, fitted in named(subject).items():
            rows = task_accuracies(reference, fitted, self.split)
            nai = [r["improvement"] for r in rows if np.isfinite(r["improvement"])]
            values.update(
                {
                    f"{name}/normalized_accuracy": float(np.mean([r["normalized"] for r in rows])),
                    f"{name}/absolute_accuracy": float(np.mean([r["merged"] for r in rows])),
                    f"{name}/finetuned_accuracy": float(np.mean([r["finetuned"] for r in rows])),
                    f"{name}/normalized_improvement": float(np.mean(nai)) if nai else float("nan"),
                }
            )
            for r in rows:
                values[f"{name}/normalized_accuracy_{r['task']}"] = float(r["normalized"])
                values[f"{name}/improvement_{r['task']}"] = float(r["improvement"])
            table += [{"subject": name, **r} for r in rows]
        return Metrics(values=values, tables={"tasks": table}, info={"split": self.split})
