"""Numerical health of a stage's result: meaningless results fail, suspect ones warn.

A sampler whose every proposal was rejected (its chains never moved), or a learner whose loss grew
by orders of magnitude, produced numbers that evaluators would happily score. Each artifact class
asks these checks through its ``health()``; the runner fails the stage on a ``"failed"`` note
(:class:`~quadriga.errors.DivergenceError`, naming the stage and the quantity) and records a
``"warning"`` note in ``results.json`` (the stage's ``health`` list) and prints it as one line.

Thresholds (documented, deliberately loose: they catch nonsense, not poor tuning):

- ``Samples``: ``info["acceptance_rate"] == 0`` over at least :data:`MIN_TRANSITIONS` transitions,
  or every chain constant over at least :data:`MIN_TRANSITIONS` draws (whatever the acceptance rate:
  a step of 1e-300 is "accepted" and moves nothing): failed ("the chains never moved"). An
  acceptance rate below :data:`LOW_ACCEPTANCE`: warning.
- ``Fitted``: a ``loss`` (or ``*_loss``) history whose median over its last tenth exceeds the
  median over its first tenth by :data:`LOSS_WARN` (three orders of magnitude): warning; by
  :data:`LOSS_FAIL` (eight orders): failed ("diverged"); NaN or inf in it: failed. A late median
  :data:`LOSS_FAIL` times the smallest value of the first tenth also fails (a loss that exploded
  within its first tenth). Early values below :data:`LOSS_FLOOR` count as :data:`LOSS_FLOOR`: a
  loss that starts at numerical zero (an objective met at initialisation, e.g. a flow-balance
  residual of 1e-32) and settles at 0.002 has grown by no meaningful factor. A loss whose
  magnitude reaches :data:`LOSS_HUGE` (1e12) at any point: warning (it may have exploded before
  its first logged value, so that its series only falls).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

__all__ = [
    "LOSS_FAIL",
    "LOSS_FLOOR",
    "LOSS_HUGE",
    "LOSS_WARN",
    "LOW_ACCEPTANCE",
    "MIN_TRANSITIONS",
    "Health",
    "fitted",
    "samples",
]

#: acceptance rates below this (a fraction) are a warning
LOW_ACCEPTANCE = 0.01
#: fewer transitions than this cannot show that chains are stuck
MIN_TRANSITIONS = 10
#: growth factors of a loss (late median / early median) that warn and that fail
LOSS_WARN, LOSS_FAIL = 1e3, 1e8
#: the smallest early loss a growth factor is measured from (smaller early values count as this)
LOSS_FLOOR = 1e-3
#: a loss whose magnitude ever reaches this is a warning, whatever its growth (it may have exploded
#: before its first logged value: learning rate 1e3 gives 1e25 at the first log, then 7e20)
LOSS_HUGE = 1e12


@attrs.frozen
class Health:
    """One finding about a result.

    Attributes:
        level: ``"failed"`` (the result is meaningless) or ``"warning"`` (suspect).
        quantity: what was measured (``"acceptance_rate"``, ``"loss"``).
        message: one line saying what was seen and what to change.
    """

    level: str
    quantity: str
    message: str

    def as_dict(self) -> dict[str, str]:
        """JSON-ready ``{"level", "quantity", "message"}``."""
        return attrs.asdict(self)


def samples(info: Mapping[str, Any], chains: Any) -> list[Health]:
    """The findings about a sampler's draws.

    Args:
        info: the artifact's info (``acceptance_rate``: fraction; ``transitions``, ``num_chains``).
        chains: ``Tensor[c, n, d]`` or ``None``.
    """
    out: list[Health] = []
    rate = info.get("acceptance_rate")
    steps = int(info.get("transitions", 0) or 0)
    if isinstance(rate, (int, float)) and not isinstance(rate, bool) and math.isfinite(rate):
        if rate == 0 and steps >= MIN_TRANSITIONS:
            out.append(
                Health(
                    "failed",
                    "acceptance_rate",
                    f"no proposal was accepted in {steps} transitions: the chains never moved. Lower "
                    "step_size (or start nearer the target's mass).",
                )
            )
            return out
        if 0 < rate < LOW_ACCEPTANCE:
            out.append(
                Health(
                    "warning",
                    "acceptance_rate",
                    f"acceptance rate {rate:.2g} is below {LOW_ACCEPTANCE:g}: the chains barely move; "
                    "lower step_size.",
                )
            )
    shape = tuple(getattr(chains, "shape", ()))
    if len(shape) == 3 and shape[1] >= MIN_TRANSITIONS and shape[0] * shape[2] > 0:
        if bool((chains == chains[:, :1]).all()):
            accepted = (
                f" although {rate:.3g} of the proposals were accepted (a step too small to change a "
                "float: the proposal equals the current point)"
                if isinstance(rate, (int, float)) and rate > 0
                else ""
            )
            out = [h for h in out if h.level != "warning"]  # the failure says it all
            out.append(
                Health(
                    "failed",
                    "chains",
                    f"all {shape[0]} chains stayed at their first draw for {shape[1]} draws{accepted}: "
                    "they never moved. Use a step_size that moves the chains.",
                )
            )
    return out


def _series(history: Mapping[str, Any]) -> dict[str, list[float]]:
    out = {}
    for key, values in history.items():
        if (key == "loss" or str(key).endswith("_loss")) and isinstance(values, Sequence):
            nums = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if len(nums) >= 10:
                out[str(key)] = nums
    return out


def fitted(history: Mapping[str, Any]) -> list[Health]:
    """The findings about a learner's ``history`` (its ``loss``/``*_loss`` series of >= 10 values)."""
    out: list[Health] = []
    for key, values in _series(history).items():
        if not all(math.isfinite(v) for v in values):
            out.append(Health("failed", key, f"{key} became NaN or inf: training diverged."))
            continue
        tenth = max(1, len(values) // 10)
        early, late = statistics.median(values[:tenth]), statistics.median(values[-tenth:])
        if early <= 0 or late <= 0:
            continue  # a loss that crosses zero (a difference of terms) has no growth factor
        early = max(early, LOSS_FLOOR)
        growth = late / early
        # a loss that blew up within its first tenth (learning rate 1e30: 5.2, 5e29, 5e29, ...)
        # has an early median as large as its end: measured from the smallest early value
        # instead, it fails at the same LOSS_FAIL (never warns: a noisy start is not suspect)
        smallest = max(min(values[:tenth]), LOSS_FLOOR)
        if growth < LOSS_FAIL and smallest > 0 and late / smallest >= LOSS_FAIL:
            early, growth = smallest, late / smallest
        if growth >= LOSS_WARN:
            level = "failed" if growth >= LOSS_FAIL else "warning"
            out.append(
                Health(
                    level,
                    key,
                    f"{key} grew by a factor {growth:.3g} (from {early:.3g} in its first tenth to a median "
                    f"of {late:.3g} in its last): {'training diverged' if level == 'failed' else 'suspect'}; "
                    "lower the learning rate.",
                )
            )
            continue
        largest = max(abs(v) for v in values)
        if largest >= LOSS_HUGE:  # exploded before its first logged value, then came down a little
            out.append(
                Health(
                    "warning",
                    key,
                    f"{key} reached {largest:.3g} (at least {LOSS_HUGE:g}; it ends at {values[-1]:.3g}): "
                    "suspect divergence; lower the learning rate.",
                )
            )
    return out
