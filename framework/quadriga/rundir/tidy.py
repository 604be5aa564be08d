"""The tidy rows of a run's results: one schema for the notebook's table and the sweep's table.

One row per stage x subject x metric, with the columns :data:`COLUMNS` after the run's own keys
(``pipeline``, ``run_id``, ``seed``, ... given as ``base``)::

    {"pipeline": "p", "run_id": "r0", "seed": 0,
     "stage": "compare", "component": "energy-distance", "type": "Metrics",
     "subject": "mala[0]", "metric": "energy", "value": 0.0123}

The numbers are those each artifact class reads from its own summary
(:meth:`quadriga.artifacts.Artifact.scalars`): an evaluator's ``"mala[0]/energy"`` is subject
``mala[0]``, metric ``energy`` (a subject is one of the run's stages, so a metric holding a
``/`` stays whole: :func:`~quadriga.stage_names.split_subject_key`); every other number (a
sampler's ``acceptance_rate``, an estimate's ``estimate`` and ``estimate_stderr``, a learner's
final ``loss``) has the stage as its subject. :func:`quadriga.notebook.to_pandas` and the sweep table
(:func:`quadriga.summary.rows_from_run`) are both built from :func:`tidy_rows`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from quadriga.artifacts import artifact_class
from quadriga.stage_names import split_subject_key

__all__ = ["COLUMNS", "STAGE_COLUMNS", "tidy_rows"]

#: the columns a row adds to the run's keys, in order
STAGE_COLUMNS = ("stage", "component", "type", "subject", "metric", "value")
#: the columns of a single run's table (``run.to_pandas()``), in order; a sweep adds its grid keys
COLUMNS = ("pipeline", "run_id", "seed", *STAGE_COLUMNS)


def tidy_rows(
    results: Mapping[str, Any],
    base: Mapping[str, Any],
    *,
    keep: Callable[[str, str], bool] | None = None,
) -> list[dict[str, Any]]:
    """The tidy rows of one run's ``results.json`` content.

    Args:
        results: ``{"stages": {stage: summary}}`` as the run writes it (older files read the same).
        base: the run's keys, first in every row (``pipeline``, ``run_id``, ``seed``, grid values).
        keep: ``keep(type, metric) -> bool`` filters rows (the sweep keeps fewer sampler numbers);
            default every row.

    Returns:
        A list of dicts, keys ``*base, *STAGE_COLUMNS``; a non-finite value is ``math.nan``.
    """
    rows = []
    stages = results.get("stages", {})
    for stage, summary in stages.items() if isinstance(stages, Mapping) else ():
        if not isinstance(summary, Mapping):
            continue
        cls = artifact_class(summary)
        kind = summary.get("type")
        for key, value in cls.scalars(summary).items():
            subject, metric = stage, key
            if cls.keyed_by_subject:
                subject, metric = split_subject_key(key, stages)
                subject = subject or stage
            if keep is not None and not keep(str(kind), metric):
                continue
            rows.append(
                {
                    **base,
                    "stage": stage,
                    "component": summary.get("component"),
                    "type": kind,
                    "subject": subject,
                    "metric": metric,
                    "value": value if math.isfinite(value) else math.nan,
                }
            )
    return rows
