"""The vocabulary of a claim: effect, scale, tuning, plan, precondition, observations.

:class:`Effect`, :class:`Scale`, :class:`Tuning`, :class:`Plan`, :class:`Precondition`,
:class:`Rows`, :class:`Observations`.
Also the constants :data:`SCALES`, :data:`STATUSES`, :data:`RECORD_FILE`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from quadriga.claims.record import RECORD_FILE
from quadriga.errors import ConfigError, suggest

__all__ = [
    "RECORD_FILE",
    "SCALES",
    "STATUSES",
    "Effect",
    "Observations",
    "Plan",
    "Precondition",
    "Rows",
    "Scale",
    "Tuning",
]

SCALES = ("smoke", "paper")
#: what a record's status can be; ``planned``/``underpowered`` come from ``verify --plan`` (the declared
#: paper replicates reach the plan's n, or do not)
STATUSES = ("passed", "refuted", "inconclusive", "ran", "planned", "underpowered", "error")
_RELATIONS = ("greater", "less", "within")


def _statistic(instance: Any, attribute: Any, value: str) -> None:
    from quadriga.stats import STATISTICS

    if value not in (*STATISTICS, "interval"):
        raise ConfigError(
            f"Effect.statistic '{value}' is not one of {', '.join(STATISTICS)}, interval.", key="statistic"
        )


#: the value of each statistic at which the arms do not differ (a claim of "beyond it" is sign-only)
NEUTRAL = {"ratio": 1.0}  # every other statistic (difference, mean, slope): 0


def _relation(instance: Any, attribute: Any, value: str) -> None:
    if value not in _RELATIONS:
        raise ConfigError(f"Effect.relation '{value}' is not one of {', '.join(_RELATIONS)}.", key="relation")


@attrs.frozen(kw_only=True)
class Effect:
    """What a claim asserts about its arms: a statistic, a claimed region and how it is tested.

    The claimed region is stated with its margin: a rate (``slope < -0.9``), a ratio threshold
    (``ratio < 0.8``: at least 20 % less), a difference of at least ``value``. A sign-only rule
    (the boundary is where the arms do not differ: ``difference > 0``, ``ratio < 1``, ``slope < 0``)
    is refused unless ``why_sign`` says in words why the sign itself is the paper's claim: a
    negative slope does not show linear convergence (a stalling method has one too), and a positive
    difference of a few thousandths is rarely what a paper claims.

    Attributes:
        quantity: the quantity in words, with its units (``"MSE ratio SR-MALA / MALA"``).
        statistic: ``"mean"`` (of arm 0), ``"difference"`` (mean arm 0 - mean baseline), ``"ratio"``
            (mean arm 0 / mean baseline), ``"iqm-difference"`` (interquartile means), or
            ``"interval"``: the experiment returns the interval itself (``Observations.intervals``,
            e.g. a log-log slope from :func:`quadriga.stats.loglog_slope`).
        relation: ``"greater"``, ``"less"`` or ``"within"``.
        value: the threshold with its margin (or the claimed value for ``within``).
        tolerance: non-inferiority slack for greater/less (the boundary is ``value - tolerance``
            for greater, ``value + tolerance`` for less); the band half-width for within.
        level: confidence level of the two-sided interval; each one-sided test is at
            ``(1 - level) / 2``.
        method: the interval method: ``"auto"`` (the default: :func:`quadriga.stats.interval`
            chooses a calibrated one from the statistic and n and names it), or one it accepts.
        paired: pair replicate ``i`` of every arm (common random numbers); ``False`` for
            independent samples.
        resamples: bootstrap resamples, where the chosen method resamples.
        label: the statistic's name in reports (``"slope"``); default :attr:`statistic_name`'s
            choice.
        why_sign: for a sign-only rule, why the sign is the paper's claim (one sentence).

    Raises:
        ConfigError: unknown statistic or relation, negative tolerance, level outside (0, 1), a
            sign-only rule without ``why_sign``.

    Source: Wellek 2010, "Testing statistical hypotheses of equivalence and noninferiority", ch. 1-2
    (margins; tests by interval inclusion).
    """

    quantity: str
    statistic: str = attrs.field(validator=_statistic)
    relation: str = attrs.field(validator=_relation)
    value: float
    tolerance: float = 0.0
    level: float = 0.95
    method: str = "auto"
    paired: bool = True
    resamples: int = 9999
    label: str = ""
    why_sign: str = ""

    def __attrs_post_init__(self) -> None:
        """Validate the fields; raises ConfigError naming the bad one."""
        if not self.tolerance >= 0:
            raise ConfigError(f"Effect.tolerance must be >= 0, got {self.tolerance}.", key="tolerance")
        if not 0 < self.level < 1:
            raise ConfigError(f"Effect.level must be in (0, 1), got {self.level}.", key="level")
        if self.relation == "within" and self.tolerance <= 0:
            raise ConfigError("relation 'within' needs a band: give tolerance > 0.", key="tolerance")
        if self.sign_only and not self.why_sign.strip():
            raise ConfigError(
                f"'{self.describe()}' is a sign-only rule for {self.quantity!r}: state the paper's effect "
                f"with its margin (value = the smallest {self.statistic_name} the paper claims), or say "
                "in why_sign= why the sign itself is the claim.",
                key="why_sign",
            )

    @property
    def neutral(self) -> float:
        """The statistic's value when the arms do not differ: 1 for ``ratio``, else 0."""
        return NEUTRAL.get(self.statistic, 0.0)

    @property
    def sign_only(self) -> bool:
        """Whether the claimed boundary is the neutral value (``difference > 0``, ``ratio < 1``)."""
        if self.relation == "within":
            return False
        lo_b, hi_b = self.bounds
        return (lo_b if self.relation == "greater" else hi_b) == self.neutral

    @property
    def boundary(self) -> float:
        """The one boundary of a greater/less claim (``value -/+ tolerance``); NaN for ``within``."""
        if self.relation == "greater":
            return self.value - self.tolerance
        if self.relation == "less":
            return self.value + self.tolerance
        return math.nan

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
class Plan:
    """The power plan of a claim, declared before any paper-scale run.

    ``Scale.replicates`` at paper scale is chosen from it: the smallest n at which a true effect
    ``effect`` beyond the boundary is detected with probability ``power`` by the one-sided test at
    ``(1 - level) / 2``, for the spread ``sd`` (of one replicate's contribution to the statistic)
    that a pilot measured. ``quadriga verify NAME --plan`` runs the pilot and prints that n.

    Attributes:
        effect: the minimum detectable effect: the smallest true distance from the claim's
            boundary worth detecting, in the statistic's units (``0.1`` for a ratio: the ratio
            is at least 0.1 beyond its threshold).
        power: the probability of detecting ``effect`` (0.8 by convention).
        pilot_replicates: replicates of the pilot run that estimates the spread (at least 3).
        sd: the spread the plan assumed, ``se * sqrt(n)`` of the statistic in a pilot
            (NaN until a pilot was run; ``--plan`` prints the measured one to put here).
        rationale: why this effect size (what the paper reports, what a user would care about).

    Raises:
        ConfigError: a non-positive effect, power outside (0, 1), fewer than 3 pilot replicates.

    Source: Cohen 1988, "Statistical power analysis for the behavioral sciences", ch. 2; the
    noncentral t power of the one-sample t test (Owen 1965).
    """

    effect: float
    power: float = 0.8
    pilot_replicates: int = 5
    sd: float = math.nan
    rationale: str = ""

    def __attrs_post_init__(self) -> None:
        """Validate the fields; raises ConfigError naming the bad one."""
        if not self.effect > 0:
            raise ConfigError(f"Plan.effect must be > 0, got {self.effect}.", key="effect")
        if not 0 < self.power < 1:
            raise ConfigError(f"Plan.power must be in (0, 1), got {self.power}.", key="power")
        if not isinstance(self.pilot_replicates, int) or self.pilot_replicates < 3:
            raise ConfigError(
                f"Plan.pilot_replicates must be an integer >= 3, got {self.pilot_replicates!r}.",
                key="pilot_replicates",
            )


@attrs.frozen
class Precondition:
    """A check that the claim's test bed exercises the paper's mechanism.

    A failed precondition makes the claim **inconclusive (precondition: description)**, never
    passed or refuted: a verdict on a test bed where the baseline is degenerate, the constraint
    never binds or the mechanism is never used says nothing about the paper.

    Attributes:
        description: what must hold, in words (``"the constraint binds in at least 10 % of steps"``).
        check: ``check(observations) -> bool | (bool, diagnostic)`` on the claim's
            :class:`Observations` (values per arm, numbers); the diagnostic (a short text with the
            measured number) is shown in the report either way.

    Use :meth:`number` and :meth:`varies` for the common cases.
    """

    description: str
    check: Callable[[Any], Any]

    def evaluate(self, obs: Any) -> tuple[bool, str]:
        """``(holds, diagnostic)``; a check that raises counts as failed, its error as the diagnostic."""
        try:
            out = self.check(obs)
        except Exception as exc:  # a broken check must not pass silently
            return False, f"the check raised {type(exc).__name__}: {exc}"
        if isinstance(out, tuple):
            return bool(out[0]), str(out[1])
        return bool(out), ""

    @classmethod
    def number(cls, name: str, relation: str, value: float, description: str = "") -> Precondition:
        """``Observations.numbers[name]`` is ``relation`` (``">"``, ``">="``, ``"<"``, ``"<="``) ``value``.

        Raises:
            ConfigError: an unknown relation.
        """
        import operator

        ops = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
        if relation not in ops:
            raise ConfigError(f"relation '{relation}' is not one of {', '.join(ops)}.", key="relation")

        def check(obs: Any) -> tuple[bool, str]:
            if name not in obs.numbers:
                return False, f"number '{name}' was not measured (have {', '.join(obs.numbers) or 'none'})"
            got = float(obs.numbers[name])
            return ops[relation](got, value), f"{name} = {got:.4g} (needs {relation} {value:g})"

        return cls(description or f"{name} {relation} {value:g}", check)

    @classmethod
    def varies(cls, arm: str, description: str = "") -> Precondition:
        """The arm's per-replicate values are not all equal, in every group (a degenerate arm fails)."""

        def check(obs: Any) -> tuple[bool, str]:
            values = obs.values
            groups = (
                values if values and all(isinstance(v, Mapping) for v in values.values()) else {"": values}
            )
            flat = {g: list(v.get(arm, [])) for g, v in groups.items()}
            dead = [str(g) or arm for g, vs in flat.items() if len(set(vs)) < 2]
            if dead:
                return False, f"{arm} gave one value in every replicate ({', '.join(dead)})"
            return True, f"{arm} varies across replicates"

        return cls(description or f"the {arm} arm is not degenerate", check)


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


def _name(instance: Any, attribute: Any, value: Any) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"Rows.{attribute.name} must be a non-empty string, got {value!r}.", key="rows")


def _count_key(instance: Any, attribute: Any, value: Any) -> None:
    _name(instance, attribute, value)
    parts = value.split(".")
    if len(parts) < 3 or parts[0] not in ("task", "stage") or not all(parts) or "=" in value:
        raise ConfigError(
            f"Rows.count must be an override key 'task.NAME.PARAM' or 'stage.NAME.PARAM' (the parameter "
            f"that sets the number of rows, 'task.bed.num_targets'), got {value!r}.",
            key="rows",
        )


def _nonfinite(instance: Any, attribute: Any, value: Any) -> None:
    if value not in ("error", "drop"):
        close = suggest(value, ("error", "drop")) if isinstance(value, str) else ""
        raise ConfigError(f"Rows.nonfinite must be 'error' or 'drop', got {value!r}.{close}", key="rows")


def _group(instance: Any, attribute: Any, value: Any) -> None:
    for name in value:
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(
                f"Rows.group must name columns (a string or a list of non-empty strings), got {value!r}.",
                key="rows",
            )
    if len(set(value)) < len(value):
        raise ConfigError(f"Rows.group names a column twice: {list(value)!r}.", key="rows")
    roles = {instance.arm: "arm", instance.key: "key", instance.column: "value"}
    taken = [f"'{name}' (the {roles[name]} column)" for name in value if name in roles]
    if taken:
        raise ConfigError(
            f"Rows.group names {', '.join(taken)}; group by another column of the table.", key="rows"
        )


def _as_columns(value: Any) -> tuple[Any, ...]:
    """One column name or several (a list or tuple, in order), as a tuple.

    Raises:
        ConfigError: (key ``rows``) anything else: a set or a mapping (no fixed order, so the
            groups' labels could change between runs), bytes, a number or None.
    """
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, (list, tuple)):
        raise ConfigError(
            f"Rows.group must be a column name or a list of them (in order), got {value!r} "
            f"({type(value).__name__}).",
            key="rows",
        )
    return tuple(value)


@attrs.frozen(kw_only=True)
class Rows:
    """Where a claim's replicates are the rows of one stage's per-item table within a single run.

    Some experiments give one observation per item of one run (one row per target example, per
    chain, per test point) rather than one per repeated, seeded run of the arms. ``Claim(rows=...)``
    reads them declaratively: the claim runs its pipeline once, with the override ``count =
    Scale.replicates`` placed before the scale's own overrides (so ``Scale.replicates`` is the
    number of rows), repeats no stage, and takes the replicates of arm ``A`` from the rows of
    ``tables[table]`` of stage ``stage``'s result whose ``arm`` column, as a string, is ``A``
    (``str(row[arm]) == A``: a column of integers 0/1 matches arms ``"0"`` and ``"1"``):
    ``[float(row[column]) ...]`` ordered by ``row[key]``. With a paired effect
    (``Effect.paired``, the default) every arm must have the same keys, so replicate ``i`` of
    every arm is the same item. The claim's arms are values of the ``arm`` column (labels such as
    ``"random"`` that name no stage are fine).

    Example: ``Rows(stage="lds", table="per_target", column="lds", key="target",
    count="task.bed.num_targets")`` reads, for arm ``"datamodels"``, ``[r["lds"] for r in
    sorted(rows with r["subject"] == "datamodels", key=target)]``, 5 values at a scale with
    ``replicates=5``.

    Attributes:
        stage: the stage whose result (a :class:`~quadriga.artifacts.Metrics`) holds the table: a
            stage table name or one point of its ``matrix`` (``"removal[k=10]"``).
        table: the name of the table in the result's ``tables`` (a list of row dicts).
        column: the column holding each row's observation, a number (an int, float or NumPy
            number, converted with ``float``; a string, None or a list is refused).
        key: the column identifying the item of each row (ordering and pairing across arms); the
            keys of one arm must all be of one type, ``int``, ``float`` or ``str`` (``bool`` is
            none of them), and name one row each.
        count: the override key that sets the number of rows (``"task.bed.num_targets"``); the
            claim sets it to ``Scale.replicates`` and checks that each arm has that many rows
            (before any are dropped).
        arm: the column whose value names the arm of each row (default ``"subject"``, the column
            an evaluator writes for each of its subjects), compared as a string.
        nonfinite: what a NaN or infinite value does: ``"error"`` (the default) refuses the rows,
            naming the arm and the first keys; ``"drop"`` leaves those items out (for a paired
            effect, the key is left out of every arm, so pairs stay aligned) and reports how many
            rows of each arm were left out as ``Observations.numbers["rows_dropped/ARM"]`` (for a
            :class:`Precondition` to bound); ``n`` is then the number of rows kept.
        group: columns whose values split the table into groups (a setting the stage loops over
            in one run: a shift, an exponent, a depth): each group, labelled ``"col=value,..."``
            in order of first appearance, is its own comparison in the claim's Holm family, with
            ``count`` rows per arm (the items are the same in every group), read, paired and
            dropped as above within the group; ``rows_dropped/LABEL/ARM`` then counts each
            group's dropped rows. A table holding one group (a scale that runs one setting) is
            still read as a group, under its label.

    Raises:
        ConfigError: (key ``rows``) an empty name, a ``count`` that is not ``task.NAME.PARAM`` or
            ``stage.NAME.PARAM``, a ``nonfinite`` other than ``"error"`` or ``"drop"``, a ``group``
            column that is empty or is the arm, key or value column.
    """

    stage: str = attrs.field(validator=_name)
    table: str = attrs.field(validator=_name)
    column: str = attrs.field(validator=_name)
    key: str = attrs.field(validator=_name)
    count: str = attrs.field(validator=_count_key)
    arm: str = attrs.field(default="subject", validator=_name)
    nonfinite: str = attrs.field(default="error", validator=_nonfinite)
    group: tuple[str, ...] = attrs.field(default=(), converter=_as_columns, validator=_group)

    def describe(self) -> str:
        """Where the replicates are, in words (``quadriga info``).

        ``"the rows of table 'per_target' of stage 'lds' (column 'lds', one per 'target';
        task.bed.num_targets = replicates)"``, with ``"; non-finite values dropped"`` before the
        closing parenthesis when ``nonfinite="drop"``, and ``", per 'shift'"`` after the key with
        ``group``.
        """
        drop = "; non-finite values dropped" if self.nonfinite == "drop" else ""
        by = f", per {', '.join(repr(c) for c in self.group)}" if self.group else ""
        return (
            f"the rows of table '{self.table}' of stage '{self.stage}' (column '{self.column}', one per "
            f"'{self.key}'{by}; {self.count} = replicates{drop})"
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
