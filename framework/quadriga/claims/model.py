"""The vocabulary of a claim: :class:`Effect`, :class:`Scale`, :class:`Tuning`, :class:`Observations`.

Also the legacy :class:`ClaimResult` and the constants :data:`SCALES`, :data:`STATUSES`, :data:`RECORD_FILE`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

from quadriga.claims.record import RECORD_FILE
from quadriga.errors import ConfigError

__all__ = ["RECORD_FILE", "SCALES", "STATUSES", "ClaimResult", "Effect", "Observations", "Scale", "Tuning"]

SCALES = ("smoke", "paper")
STATUSES = ("passed", "refuted", "inconclusive", "ran", "failed", "error")
_RELATIONS = ("greater", "less", "within")


@attrs.define(kw_only=True)
class ClaimResult:
    """The outcome of a legacy claim function (kept for claims not yet declared as :class:`Claim`).

    Attributes:
        passed: whether the measured numbers support the claim under the function's own rule.
        summary: one or two sentences with the key numbers.
        numbers: the measured numbers ``{name: float | str}``.
        figures: ``{name: path to a PNG}`` (relative to ``out_dir`` or absolute).
        table: optional markdown table.
    """

    passed: bool
    summary: str
    numbers: dict[str, Any] = attrs.field(factory=dict)
    figures: dict[str, str] = attrs.field(factory=dict)
    table: str = ""


def _statistic(instance: Any, attribute: Any, value: str) -> None:
    from quadriga.stats import STATISTICS

    if value not in (*STATISTICS, "interval"):
        raise ConfigError(
            f"Effect.statistic '{value}' is not one of {', '.join(STATISTICS)}, interval.", key="statistic"
        )


def _relation(instance: Any, attribute: Any, value: str) -> None:
    if value not in _RELATIONS:
        raise ConfigError(f"Effect.relation '{value}' is not one of {', '.join(_RELATIONS)}.", key="relation")


@attrs.frozen(kw_only=True)
class Effect:
    """What a claim asserts about its arms.

    Attributes:
        quantity: the quantity in words, with its units (``"MSE ratio SR-MALA / MALA"``).
        statistic: ``"mean"`` (of arm 0), ``"difference"`` (mean arm 0 - mean baseline), ``"ratio"``
            (mean arm 0 / mean baseline), ``"iqm-difference"`` (interquartile means), or
            ``"interval"``: the experiment returns the interval itself (``Observations.intervals``,
            e.g. a log-log slope from :func:`quadriga.stats.loglog_slope`).
        relation: ``"greater"``, ``"less"`` or ``"within"``.
        value: the threshold (or the claimed value for ``within``).
        tolerance: non-inferiority margin for greater/less (the boundary is ``value - tolerance``
            for greater, ``value + tolerance`` for less); the band half-width for within.
        level: confidence level of the interval.
        method: ``"BCa"`` or ``"percentile"`` bootstrap.
        paired: pair replicate ``i`` of every arm (common random numbers); ``False`` for
            independent samples.
        resamples: bootstrap resamples.
        label: the statistic's name in reports (``"slope"``); default :attr:`statistic_name`'s
            choice.

    Raises:
        ConfigError: unknown statistic or relation, negative tolerance, level outside (0, 1).
    """

    quantity: str
    statistic: str = attrs.field(validator=_statistic)
    relation: str = attrs.field(validator=_relation)
    value: float
    tolerance: float = 0.0
    level: float = 0.95
    method: str = "BCa"
    paired: bool = True
    resamples: int = 9999
    label: str = ""

    def __attrs_post_init__(self) -> None:
        """Validate the fields; raises ConfigError naming the bad one."""
        if not self.tolerance >= 0:
            raise ConfigError(f"Effect.tolerance must be >= 0, got {self.tolerance}.", key="tolerance")
        if not 0 < self.level < 1:
            raise ConfigError(f"Effect.level must be in (0, 1), got {self.level}.", key="level")
        if self.relation == "within" and self.tolerance <= 0:
            raise ConfigError("relation 'within' needs a band: give tolerance > 0.", key="tolerance")

    @property
    def bounds(self) -> tuple[float, float]:
        """The claimed region ``(low, high)`` of the effect (infinite on the open side)."""
        if self.relation == "greater":
            return self.value - self.tolerance, math.inf
        if self.relation == "less":
            return -math.inf, self.value + self.tolerance
        return self.value - self.tolerance, self.value + self.tolerance

    @property
    def statistic_name(self) -> str:
        """The statistic's name in reports: ``label``, else ``statistic`` (``"ratio"``, ``"mean"``).

        For ``statistic="interval"`` (the experiment computes the interval itself) it is the
        first of ``slope``, ``exponent``, ``rate``, ``ratio``, ``difference``, ``mean`` named in
        ``quantity`` (``"slope of log MMD against log n"`` -> ``"slope"``), else ``"estimate"``.
        """
        if self.label:
            return self.label
        if self.statistic != "interval":
            return self.statistic
        words = [w.strip(",.;:()").lower() for w in self.quantity.split()]
        known = ("slope", "exponent", "rate", "ratio", "difference", "mean")
        return next((w for w in words if w in known), "estimate")

    def describe(self) -> str:
        """``"ratio < 1 (+0.05)"``-style text of the claimed region."""
        sym = {"greater": ">", "less": "<", "within": "within"}[self.relation]
        name = self.statistic_name
        if self.relation == "within":
            return f"{name} within {self.value:g} +- {self.tolerance:g}"
        if not self.tolerance:
            return f"{name} {sym} {self.value:g}"
        bound = self.bounds[0] if self.relation == "greater" else self.bounds[1]
        return f"{name} {sym} {bound:g} ({self.value:g} with margin {self.tolerance:g})"


@attrs.frozen(kw_only=True)
class Scale:
    """How large a run of the claim is.

    Attributes:
        replicates: replicates per arm (``repeat`` of every arm stage), at least 2.
        overrides: ``--set`` strings applied to the pipeline (``"task.legendre.n=500"``).
        seed: the root seed of the run.
        options: free settings for ``observe``/``experiment`` callables (``{"steps": 300}``).
    """

    replicates: int
    overrides: tuple[str, ...] = ()
    seed: int = 0
    options: Mapping[str, Any] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        """Validate the fields; raises ConfigError naming the bad one."""
        if not isinstance(self.replicates, int) or self.replicates < 2:
            raise ConfigError(
                f"Scale.replicates must be an integer >= 2, got {self.replicates!r}.", key="replicates"
            )


@attrs.frozen
class Tuning:
    """The tuning budget of one arm: how many settings were tried and how one was chosen.

    Attributes:
        settings_tried: number of hyper-parameter settings evaluated before the claim's run (1:
            untuned, the paper's or library's default).
        rule: the selection rule (``"paper default"``, ``"best AUC of 12 learning rates on seeds 100-104"``).
    """

    settings_tried: int = 1
    rule: str = "paper default"


@attrs.define(kw_only=True)
class Observations:
    """What an ``observe`` or ``experiment`` callable may return instead of a plain dict.

    Attributes:
        values: ``{arm: [per-replicate values]}``, or ``{group: {arm: [values]}}`` for several
            groups (tasks, settings), each group giving its own comparisons.
        intervals: for ``statistic="interval"``: ``{group: quadriga.stats.Interval}`` computed by
            the experiment (one comparison each).
        numbers: extra numbers for the report (acceptance rates, fractions), JSON-ready.
        table: a markdown table for the report.
        figures: ``{name: PNG path}``.
    """

    values: dict[Any, Any] = attrs.field(factory=dict)
    intervals: dict[str, Any] = attrs.field(factory=dict)
    numbers: dict[str, Any] = attrs.field(factory=dict)
    table: str = ""
    figures: dict[str, str] = attrs.field(factory=dict)
