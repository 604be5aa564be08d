"""Per-replicate observations for the claims, read from ``excess-risk`` values.

The evaluator writes ``"<subject>/<metric>"`` where a subject of a repeated, matrixed stage is
named ``<arm>[<matrix point>][<i>]``. The replicate index is what
:func:`quadriga.stage_names.replicate_base` strips; the arm is the stage base name the subject
starts with (``arm`` itself or ``arm[...]``); ``num_features`` (d) and ``budget`` (k) are read
from the values themselves, so nothing depends on how matrix points are spelled.

Every observation function returns ``{group: {arm: [one float per replicate]}}`` (one group per
d, or one group ``""``), aligned by replicate index over the replicates every arm has (paired,
common random numbers).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from quadriga.stats import Interval, loglog_slope
from quadriga_pivotal_leverage.evaluators import replicate_index

__all__ = [
    "CENSOR_FACTOR",
    "growth_rates",
    "k_star",
    "log_risk_at",
    "risk_table",
    "samples_to_target",
    "samples_to_target_slope",
]

#: a replicate that misses the target at every budget counts as this many times the largest budget
CENSOR_FACTOR = 1.5

Table = dict[str, dict[int, dict[int, dict[int, float]]]]


def _arm_of(subject: str, arms: Sequence[str]) -> str | None:
    for arm in arms:
        if subject == arm or subject.startswith(arm + "["):
            return arm
    return None


def risk_table(values: Mapping[str, float], arms: Sequence[str], offset: int = 0) -> Table:
    """``{arm: {replicate: {d: {budget k: risk_ratio}}}}`` from ``excess-risk`` values.

    Args:
        values: ``{"<subject>/<metric>": float}`` of one ``excess-risk`` stage.
        arms: stage base names to read.
        offset: added to every replicate index (for runs holding replicates ``offset ...``).

    Shapes:
        scalars throughout.

    Units:
        ``d`` and ``k`` are counts; ``risk_ratio`` is dimensionless.

    Raises:
        KeyError: a subject with ``risk_ratio`` but no ``num_features`` or ``budget``.

    Source: the ``excess-risk`` evaluator of this package.
    """
    table: Table = {arm: {} for arm in arms}
    for key, value in values.items():
        subject, _, metric = key.rpartition("/")
        if metric != "risk_ratio":
            continue
        arm = _arm_of(subject, arms)
        i = replicate_index(subject)
        if arm is None or i is None:
            continue
        d = int(values[f"{subject}/num_features"])
        k = int(values[f"{subject}/budget"])
        table[arm].setdefault(i + offset, {}).setdefault(d, {})[k] = float(value)
    return table


def _paired(table: Mapping[str, Mapping[int, object]]) -> list[int]:
    if not table:
        return []
    return sorted(set.intersection(*(set(t) for t in table.values())))


def _features(table: Table, arms: Sequence[str], replicates: list[int]) -> list[int]:
    return sorted({d for arm in arms for i in replicates for d in table[arm][i]})


def log_risk_at(
    table: Table, arms: Sequence[str], multiple: float = 2.0
) -> dict[str, dict[str, list[float]]]:
    """Per d and replicate: ``log(risk_ratio)`` at the budget ``k = round(multiple * d)``.

    A difference of two arms' means is the log of their geometric-mean risk-ratio ratio.

    Shapes:
        ``table`` from :func:`risk_table`; returns ``{"d=<d>": {arm: list[float]}}`` with one
        entry per paired replicate.

    Units:
        nats (natural log of a dimensionless ratio).

    Raises:
        ValueError: a replicate without the budget ``round(multiple * d)`` for some d.

    Source: Shimizu et al. 2024, sec. 5 (error at equal sample budgets).
    """
    reps = _paired(table)
    out: dict[str, dict[str, list[float]]] = {}
    for d in _features(table, arms, reps):
        k = max(1, round(multiple * d))
        group = out.setdefault(f"d={d}", {arm: [] for arm in arms})
        for i in reps:
            for arm in arms:
                curve = table[arm][i].get(d, {})
                if k not in curve:
                    raise ValueError(
                        f"{arm}[{i}] has no budget k = {k} for d = {d} (budgets: {sorted(curve)})"
                    )
                group[arm].append(math.log(curve[k]))
    return out


def k_star(curve: Mapping[int, float], target: float) -> float:
    """The smallest budget ``k`` of ``curve = {k: risk_ratio}`` with ``risk_ratio <= target``;
    ``CENSOR_FACTOR * max(k)`` when none reaches it (censored).

    Units: labels (a count).
    """
    for k in sorted(curve):
        if curve[k] <= target:
            return float(k)
    return CENSOR_FACTOR * max(curve)


def samples_to_target(
    table: Table, arms: Sequence[str], target: float = 1.25
) -> dict[str, dict[str, list[float]]]:
    """Per d and replicate: ``k*/d``, ``k*`` the smallest budget with ``risk_ratio <= target``.

    A replicate that misses the target at every budget of a d counts ``CENSOR_FACTOR`` times the
    largest budget (censored, which pulls a ratio of arms towards 1).

    Shapes:
        returns ``{"d=<d>": {arm: list[float]}}`` with one entry per paired replicate.

    Units:
        labels per feature (``k*/d``, dimensionless).

    Source: Shimizu et al. 2024, abstract ("up to 50% fewer samples ... to reach a target accuracy").
    """
    reps = _paired(table)
    out: dict[str, dict[str, list[float]]] = {}
    for d in _features(table, arms, reps):
        out[f"d={d}"] = {arm: [k_star(table[arm][i][d], target) / d for i in reps] for arm in arms}
    return out


def samples_to_target_slope(
    table: Table, arms: Sequence[str], target: float = 1.25
) -> dict[str, list[float]]:
    """Per replicate: the least-squares slope of ``log k*`` on ``log d`` over the d's present
    (:func:`quadriga.stats.loglog_slope`).

    Slope 1 is linear growth (O(d)); ``d log d`` over d = 10 ... 40 has slope about 1.3.

    Shapes:
        returns ``{arm: list[float]}`` with one entry per paired replicate.

    Units:
        dimensionless (a log-log slope).

    Raises:
        ConfigError: fewer than three values of d (from ``loglog_slope``).

    Source: Shimizu et al. 2024, Theorem 1.2 (O(d) labels for polynomial regression) against
    O(d log d) for independent leverage sampling.
    """
    reps = _paired(table)
    ds = _features(table, arms, reps)
    return {
        arm: [loglog_slope(ds, [k_star(table[arm][i][d], target) for d in ds]).estimate for i in reps]
        for arm in arms
    }


def growth_rates(
    table: Table, arms: Sequence[str], target: float = 1.25, *, rng: int = 0
) -> dict[str, Interval]:
    """Per arm: the log-log slope of the mean ``k*`` over d with its 95% interval
    (:func:`quadriga.stats.loglog_slope` on ``(d, replicates)``: delta-method t interval of the
    slope of log mean k*).

    Returns:
        ``{arm: Interval}`` (unpacks as ``slope, low, high``).  ``rng`` is unused (closed form).

    Source: Shimizu et al. 2024, Theorem 1.2 and sec. 5 (samples to reach a target error against d).
    """
    reps = _paired(table)
    ds = _features(table, arms, reps)
    out = {}
    for arm in arms:
        ks = np.array([[k_star(table[arm][i][d], target) for i in reps] for d in ds])
        out[arm] = loglog_slope(ds, ks)
    return out
