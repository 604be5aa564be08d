"""Paper claims of quadriga-fm-smc as :class:`quadriga.claims.Claim` objects (v2 protocol).

Each claim runs one registered pipeline (``fm-smc-gmm2d`` or ``fm-smc-gmm16d``) with every sampler
stage repeated ``replicates`` times (replicate ``i`` of every sampler shares its seed, so arms are
paired) and reads per-replicate energy distances to the exact posterior from the ``energy`` stage.

- ``CONSISTENCY``: per replicate, the least-squares slope of log energy distance against log K over
  K in {64, 256, 1024} for ``fm-smc``; claimed: mean slope < 0 (the error shrinks as K grows;
  an exact sampler gives about -1 because the V-statistic's bias is about E|X - X'| / K).
- ``BEATS_IS``: energy distance at K = 1024 in 16-D, ratio of means fm-smc / fm-is < 1.
- ``BEATS_GUIDANCE``: energy distance at K = 1024 in 2-D, ratio of means fm-smc / fm-guidance < 1.

Source: Qu & Liu 2026, "TFTF: Training-free targeted flow for conditional sampling" (arXiv 2602.12932).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import Any

from quadriga.claims import Claim, Effect, Scale, Tuning

__all__ = ["BEATS_GUIDANCE", "BEATS_IS", "CONSISTENCY", "energy_by_replicate"]

_NAME = re.compile(r"^(?P<base>[^\[/]+)(?:\[num_particles=(?P<k>\d+)\])?\[(?P<i>\d+)\]/(?P<metric>.+)$")
_STEPS = ("fm-smc", "fm-is", "fm-guidance")


def energy_by_replicate(result: Any, stage: str = "energy", metric: str = "energy_distance") -> dict:
    """``{sampler: {K: {replicate i: value}}}`` from the metrics of the evaluator ``stage``.

    Reads keys ``"<sampler>[num_particles=K][i]/<metric>"`` of ``result.artifacts[stage].values``.

    Raises:
        KeyError: the run has no stage ``stage``.
    """
    values = result.artifacts[stage].values
    out: dict = defaultdict(lambda: defaultdict(dict))
    for key, value in values.items():
        m = _NAME.match(key)
        if m and m["metric"] == metric:
            out[m["base"]][int(m["k"] or 0)][int(m["i"])] = float(value)
    return out


def _slopes(result: Any) -> dict[str, list[float]]:
    """Per-replicate log-log slope of fm-smc's energy distance against K."""
    table = energy_by_replicate(result)["fm-smc"]
    ks = sorted(table)
    reps = sorted(set.intersection(*(set(table[k]) for k in ks)))
    lx = [math.log(k) for k in ks]
    mx = sum(lx) / len(lx)
    slopes = []
    for i in reps:
        ly = [math.log(max(table[k][i], 1e-300)) for k in ks]
        my = sum(ly) / len(ly)
        cov = sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True))
        slopes.append(cov / sum((a - mx) ** 2 for a in lx))
    return {"fm-smc": slopes}


def _at_k(arms: tuple[str, str], k: int = 1024):
    def observe(result: Any) -> dict[str, list[float]]:
        table = energy_by_replicate(result)
        reps = sorted(set(table[arms[0]][k]) & set(table[arms[1]][k]))
        return {arm: [table[arm][k][i] for i in reps] for arm in arms}

    observe.__doc__ = f"Per-replicate energy distances of {arms[0]} and {arms[1]} at K = {k}."
    return observe


def _overrides(num_steps: int, reference: int) -> tuple[str, ...]:
    return (
        *(f"stage.{s}.num_steps={num_steps}" for s in _STEPS),
        f"stage.energy.num_reference_samples={reference}",
        f"stage.mmd.num_reference_samples={reference}",
    )


_SCALES = {
    "smoke": Scale(replicates=2, overrides=_overrides(8, 200)),
    "paper": Scale(replicates=20, overrides=()),
}
_TUNING = {
    "fm-smc": Tuning(
        settings_tried=5,
        rule="window [0.2, 0.8] or [0.05, 0.9], noise 0.5 / 1 / 2, constant or linear tempering, on one "
        "2-D seed at K = 1024; kept the lowest energy distance (window [0.05, 0.9], noise 1, linear)",
    ),
    "fm-is": Tuning(settings_tried=1, rule="no tunable parameter"),
    "fm-guidance": Tuning(
        settings_tried=3, rule="guidance_scale in {0.1, 0.3, 1} on two 16-D seeds at K = 1024; kept 0.3"
    ),
}

CONSISTENCY = Claim(
    pipeline="fm-smc-gmm2d",
    arms=("fm-smc",),
    observe=_slopes,
    effect=Effect(
        quantity="log-log slope of fm-smc's energy distance to the 2-D posterior against K, 64 to 1024",
        statistic="mean",
        relation="less",
        value=0.0,
        tolerance=0.0,
    ),
    scales=_SCALES,
    tuning={"fm-smc": _TUNING["fm-smc"]},
)

BEATS_IS = Claim(
    pipeline="fm-smc-gmm16d",
    arms=("fm-smc", "fm-is"),
    observe=_at_k(("fm-smc", "fm-is")),
    effect=Effect(
        quantity="energy distance to the 16-D posterior at K = 1024, fm-smc / fm-is (ratio of means)",
        statistic="ratio",
        relation="less",
        value=1.0,
        tolerance=0.0,
    ),
    scales=_SCALES,
    tuning={"fm-smc": _TUNING["fm-smc"], "fm-is": _TUNING["fm-is"]},
)

BEATS_GUIDANCE = Claim(
    pipeline="fm-smc-gmm2d",
    arms=("fm-smc", "fm-guidance"),
    observe=_at_k(("fm-smc", "fm-guidance")),
    effect=Effect(
        quantity="energy distance to the 2-D posterior at K = 1024, fm-smc / fm-guidance (ratio of means)",
        statistic="ratio",
        relation="less",
        value=1.0,
        tolerance=0.0,
    ),
    scales=_SCALES,
    tuning={"fm-smc": _TUNING["fm-smc"], "fm-guidance": _TUNING["fm-guidance"]},
)
