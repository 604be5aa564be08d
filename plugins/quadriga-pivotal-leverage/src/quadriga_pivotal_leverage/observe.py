"""Per-replicate observations for the claims, read from ``excess-risk`` values.

The evaluator writes ``"<subject>/<metric>"`` where a subject of a repeated, matrixed stage is
named ``<arm>[<matrix point>][<i>]``. These helpers parse such names (the arm is the name before
the first ``[``, the replicate the last ``[i]``) and read ``num_features`` and ``budget`` from the
values themselves, so they do not depend on how matrix points are spelled.

Every function returns ``{arm: [one float per replicate]}``, aligned by replicate index over the
replicates every arm has (paired, common random numbers).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from quadriga_pivotal_leverage.evaluators import replicate_index

__all__ = [
    "CENSOR_FACTOR",
    "log_risk_at",
    "observer",
    "risk_table",
    "samples_to_target",
    "samples_to_target_slope",
]

#: a replicate that misses the target at every budget counts as this many times the largest budget
CENSOR_FACTOR = 1.5


def risk_table(
    values: Mapping[str, float], arms: Sequence[str]
) -> dict[str, dict[int, dict[int, dict[int, float]]]]:
    """``{arm: {replicate: {d: {budget k: risk_ratio}}}}`` from ``excess-risk`` values.

    Shapes:
        ``values``: ``{"<subject>/<metric>": float}``; scalars throughout.

    Units:
        ``d`` and ``k`` are counts; ``risk_ratio`` is dimensionless.

    Raises:
        KeyError: a subject with ``risk_ratio`` but no ``num_features`` or ``budget``.

    Source: the ``excess-risk`` evaluator of this package.
    """
    table: dict[str, dict[int, dict[int, dict[int, float]]]] = {arm: {} for arm in arms}
    for key, value in values.items():
        subject, _, metric = key.rpartition("/")
        if metric != "risk_ratio":
            continue
        arm = subject.split("[", 1)[0]
        i = replicate_index(subject)
        if arm not in table or i is None:
            continue
        d = int(values[f"{subject}/num_features"])
        k = int(values[f"{subject}/budget"])
        table[arm].setdefault(i, {}).setdefault(d, {})[k] = float(value)
    return table


def _paired(table: Mapping[str, Mapping[int, Any]]) -> list[int]:
    common = set.intersection(*(set(t) for t in table.values())) if table else set()
    return sorted(common)


def log_risk_at(
    values: Mapping[str, float], arms: Sequence[str], multiple: float = 2.0
) -> dict[str, list[float]]:
    """Per replicate: the mean over d of ``log(risk_ratio)`` at the budget ``k = round(multiple * d)``.

    A difference of two arms' means is the log of their geometric-mean risk-ratio ratio.

    Shapes:
        returns ``{arm: list[float]}`` with one entry per paired replicate.

    Units:
        nats (natural log of a dimensionless ratio).

    Raises:
        ValueError: a replicate without the budget ``round(multiple * d)`` for some d.

    Source: Shimizu et al. 2024, sec. 5 (error at equal sample budgets).
    """
    table = risk_table(values, arms)
    out: dict[str, list[float]] = {arm: [] for arm in arms}
    for i in _paired(table):
        for arm in arms:
            logs = []
            for d, curve in sorted(table[arm][i].items()):
                k = max(1, round(multiple * d))
                if k not in curve:
                    raise ValueError(
                        f"{arm}[{i}] has no budget k = {k} for d = {d} (budgets: {sorted(curve)})"
                    )
                logs.append(math.log(curve[k]))
            out[arm].append(float(np.mean(logs)))
    return out


def _k_star(curve: Mapping[int, float], target: float) -> float:
    for k in sorted(curve):
        if curve[k] <= target:
            return float(k)
    return CENSOR_FACTOR * max(curve)


def samples_to_target(
    values: Mapping[str, float], arms: Sequence[str], target: float = 1.25
) -> dict[str, list[float]]:
    """Per replicate: the mean over d of ``k*/d``, ``k*`` the smallest budget with ``risk_ratio <= target``.

    A replicate that misses the target at every budget of a d counts ``CENSOR_FACTOR`` times the
    largest budget (censored, which pulls a ratio of arms towards 1).

    Shapes:
        returns ``{arm: list[float]}`` with one entry per paired replicate.

    Units:
        labels per feature (``k*/d``, dimensionless).

    Raises:
        KeyError: see :func:`risk_table`.

    Source: Shimizu et al. 2024, abstract ("up to 50% fewer samples ... to reach a target accuracy").
    """
    table = risk_table(values, arms)
    out: dict[str, list[float]] = {arm: [] for arm in arms}
    for i in _paired(table):
        for arm in arms:
            ratios = [_k_star(curve, target) / d for d, curve in sorted(table[arm][i].items())]
            out[arm].append(float(np.mean(ratios)))
    return out


def samples_to_target_slope(
    values: Mapping[str, float], arms: Sequence[str], target: float = 1.25
) -> dict[str, list[float]]:
    """Per replicate: the least-squares slope of ``log k*`` on ``log d`` over the d's present.

    Slope 1 is linear growth (O(d)); ``d log d`` over d = 10 ... 40 has slope about 1.3.

    Shapes:
        returns ``{arm: list[float]}`` with one entry per paired replicate.

    Units:
        dimensionless (a log-log slope).

    Raises:
        ValueError: fewer than two values of d.

    Source: Shimizu et al. 2024, Theorem 1.2 (O(d) labels for polynomial regression) against
    O(d log d) for independent leverage sampling.
    """
    table = risk_table(values, arms)
    out: dict[str, list[float]] = {arm: [] for arm in arms}
    for i in _paired(table):
        for arm in arms:
            ds = sorted(table[arm][i])
            if len(ds) < 2:
                raise ValueError(f"{arm}[{i}] has {len(ds)} value(s) of d; a slope needs two or more")
            ks = [_k_star(table[arm][i][d], target) for d in ds]
            slope = np.polyfit(np.log(ds), np.log(ks), 1)[0]
            out[arm].append(float(slope))
    return out


def observer(function: Callable[..., dict[str, list[float]]], stage: str, arms: Sequence[str], **kwargs: Any):
    """A claim's ``observe(result)``: ``function(values of stage, arms, **kwargs)`` on a run result.

    Reads ``result.artifacts[stage].values`` (falling back to ``result.results``).

    Raises:
        KeyError: the run has no stage ``stage``.
    """

    def observe(result: Any) -> dict[str, list[float]]:
        artifact = getattr(result, "artifacts", {}).get(stage)
        values = getattr(artifact, "values", None)
        if values is None:
            values = result.results["stages"][stage]["values"]
        return function(values, arms, **kwargs)

    observe.__name__ = f"observe_{function.__name__}"
    return observe
