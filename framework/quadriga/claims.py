"""Paper claims as statistical tests, and ``quadriga verify``.

A plugin declares each headline claim of its paper as a :class:`Claim`::

    EXCESS_RISK = Claim(
        pipeline="pivotal-legendre",
        arms=("pivotal-leverage", "leverage-iid"),        # arm[0] is the method
        metric=("excess-risk", "excess_risk"),            # (evaluator stage, metric)
        effect=Effect(quantity="excess risk ratio", statistic="ratio", relation="less", value=1.0),
        scales={"smoke": Scale(replicates=3, overrides=("task.legendre.n=500",)),
                "paper": Scale(replicates=100)},
        tuning={"pivotal-leverage": Tuning(1, "paper default"), "leverage-iid": Tuning(1, "paper default")},
    )
    registry.add_claim("pivotal-excess-risk", "quadriga_pivotal_leverage.claims:EXCESS_RISK", ...)

:func:`verify` runs the registered pipeline through :func:`quadriga.api.run` with
``repeat = replicates`` on every arm stage (and on ``repeat_tasks``), so replicate ``i`` of
every arm shares its seed (common random numbers); reads the per-replicate observations
``values[f"{arm}[{i}]/{metric}"]`` of the evaluator stage (or calls ``observe(result)``);
computes the effect with a bootstrap interval (:mod:`quadriga.stats`) and applies one verdict
policy (:func:`decide`):

- **passed**: the interval lies on the claimed side of ``value -/+ tolerance`` (inside the
  band ``value +- tolerance`` for ``within``);
- **refuted**: it lies entirely on the other side (outside the band);
- **inconclusive**: it straddles; the record gives the minimum detectable effect at this number
  of replicates and the replicates that would detect the observed distance (power 0.8);
- **ran**: every smoke-scale result (numbers, never a verdict);
- **error**: the claim raised.

A claim with several comparisons (arm 0 against several baselines, or several groups such as
tasks returned by ``observe``) decides each with Holm-adjusted one-sided p-values; it passes
only when every comparison passes, and is refuted when any is refuted.

Before the pipelines speak ``repeat`` (older cores), replicate ``i`` is a separate run with root
seed ``Scale.seed + i`` and the observations are read as ``values[f"{arm}/{metric}"]``.

The last paper-scale verdict of each claim is kept, when ``verify --record`` is given, in
``claims_record.json`` inside the plugin's package (next to its ``claims.py``); ``quadriga
list`` shows it with its date and the plugin's version (:func:`last_verdict`).

Legacy claims (a function ``fn(scale, *, out_dir) -> ClaimResult``) still run: at smoke scale
they report "ran"; at paper scale "passed" or "failed" under their own rule, marked legacy.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from quadriga.errors import ConfigError, QuadrigaError, UnknownComponentError, suggest

__all__ = [
    "RECORD_FILE",
    "SCALES",
    "STATUSES",
    "Claim",
    "ClaimResult",
    "Effect",
    "Observations",
    "Scale",
    "Tuning",
    "decide",
    "decide_interval",
    "evaluate_claim",
    "last_verdict",
    "record_verdicts",
    "select_claims",
    "verdict_text",
    "verify",
]

SCALES = ("smoke", "paper")
STATUSES = ("passed", "refuted", "inconclusive", "ran", "failed", "error")
RECORD_FILE = "claims_record.json"
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

    def describe(self) -> str:
        """``"ratio < 1 (+0.05)"``-style text of the claimed region."""
        sym = {"greater": ">", "less": "<", "within": "within"}[self.relation]
        if self.relation == "within":
            return f"{self.statistic} within {self.value:g} +- {self.tolerance:g}"
        if not self.tolerance:
            return f"{self.statistic} {sym} {self.value:g}"
        bound = self.bounds[0] if self.relation == "greater" else self.bounds[1]
        return f"{self.statistic} {sym} {bound:g} ({self.value:g} with margin {self.tolerance:g})"


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


@attrs.frozen(kw_only=True)
class Claim:
    """A paper claim as a statistical test on per-replicate observations.

    Attributes:
        arms: stage base names; ``arms[0]`` is the method, the others its baselines (one
            comparison each; ``statistic="mean"`` uses ``arms[0]`` alone).
        effect: the :class:`Effect` claimed.
        scales: ``{"smoke": Scale, "paper": Scale}``.
        pipeline: a registered pipeline name (or a TOML path) run once per scale.
        metric: ``(evaluator stage, metric)``: replicate ``i`` of ``arm`` is
            ``values[f"{arm}[{i}]/{metric}"]`` of that stage.
        observe: instead of ``metric``, ``observe(result) -> {arm: [values]}`` (or
            :class:`Observations`) from the :class:`~quadriga.runs.RunResult`, values aligned
            by replicate index.
        experiment: instead of ``pipeline``, ``experiment(scale: Scale, out_dir: Path) ->
            {arm: [values]}`` (or :class:`Observations`) for claims whose experiment is not a
            registered pipeline (yet); replicate ``i`` of every arm must share its seeds.
        repeat_tasks: tasks also repeated (fresh data per replicate, bound replicate-wise).
        also: further metrics of the ``metric`` stage reported for every arm (mean with a BCa
            interval) and, for each baseline, as the ratio of means arm 0 / baseline with a paired
            interval: numbers for the report, never part of the verdict.
        tuning: ``{arm: Tuning}``; a comparison between arms with different budgets is flagged.

    Raises:
        ConfigError: neither or both of metric/observe, no pipeline without experiment, too few
            arms for the statistic, scales missing smoke or paper.
    """

    arms: tuple[str, ...]
    effect: Effect
    scales: Mapping[str, Scale]
    pipeline: str | None = None
    metric: tuple[str, str] | None = None
    observe: Callable[[Any], Any] | None = None
    experiment: Callable[[Scale, Path], Any] | None = None
    repeat_tasks: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    tuning: Mapping[str, Tuning] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        """Validate the fields; raises ConfigError naming the bad one."""
        from quadriga.stats import STATISTICS

        if not self.arms:
            raise ConfigError("a claim needs at least one arm.", key="arms")
        if STATISTICS.get(self.effect.statistic, (1,))[0] == 2 and len(self.arms) < 2:
            raise ConfigError(
                f"statistic '{self.effect.statistic}' compares arms[0] with baselines; "
                "give at least two arms.",
                key="arms",
            )
        if self.experiment is None:
            if self.pipeline is None:
                raise ConfigError("give a registered pipeline (or an experiment callable).", key="pipeline")
            if (self.metric is None) == (self.observe is None):
                raise ConfigError(
                    "give exactly one of metric=(stage, metric) and observe=callable.", key="metric"
                )
        missing = [s for s in SCALES if s not in self.scales]
        if missing:
            raise ConfigError(f"scales lack {', '.join(missing)}; give Scale objects for both.", key="scales")

    @property
    def comparisons(self) -> list[tuple[str, str | None]]:
        """``[(method, baseline or None)]``: one comparison per baseline (one for ``mean``)."""
        from quadriga.stats import STATISTICS

        if STATISTICS.get(self.effect.statistic, (1,))[0] == 1:
            return [(self.arms[0], None)]
        return [(self.arms[0], b) for b in self.arms[1:]]

    def tuning_flags(self) -> list[str]:
        """Sentences naming comparisons whose arms had different tuning budgets (or none recorded)."""
        flags = []
        for method, base in self.comparisons:
            if base is None:
                continue
            tm, tb = self.tuning.get(method), self.tuning.get(base)
            if tm is None or tb is None:
                absent = [a for a, t in ((method, tm), (base, tb)) if t is None]
                flags.append(f"tuning budget not recorded for {', '.join(absent)}")
            elif tm.settings_tried != tb.settings_tried:
                flags.append(
                    f"tuning parity: {method} tried {tm.settings_tried} setting(s) ({tm.rule}), "
                    f"{base} tried {tb.settings_tried} ({tb.rule})"
                )
        return flags

    def _metric(self) -> tuple[str, str]:
        """``metric``, which ``__attrs_post_init__`` requires when ``observe`` is not given."""
        if self.metric is None:
            raise ConfigError(
                "give exactly one of metric=(stage, metric) and observe=callable.", key="metric"
            )
        return self.metric

    # ------------------------------------------------------------------ running
    def observations(self, scale: str, out_dir: Path, registry: Any = None) -> Observations:
        """Run the claim at ``scale`` and return its per-replicate observations.

        Raises:
            ConfigError: unknown scale, an arm that is not a stage of the pipeline, a missing metric.
        """
        if scale not in self.scales:
            raise ConfigError(f"unknown scale '{scale}'; use one of {', '.join(self.scales)}.", key="scale")
        sc = self.scales[scale]
        out_dir = Path(out_dir)
        if self.experiment is not None:
            return _as_observations(self.experiment(sc, out_dir))
        from quadriga import api
        from quadriga.pipeline import read_source
        from quadriga.registry import get_registry

        registry = registry or get_registry()
        if self.pipeline is None:  # refused by __attrs_post_init__ unless experiment is given
            raise ConfigError("give a registered pipeline (or an experiment callable).", key="pipeline")
        data, file = read_source(self.pipeline, registry)
        for arm in self.arms:
            if arm not in data.get("stage", {}):
                raise ConfigError(
                    f"arm '{arm}' is not a stage of pipeline '{self.pipeline}'."
                    f"{suggest(arm, data.get('stage', {}))}",
                    file=file,
                    key="arms",
                )
        if _pipelines_repeat():
            repeated = set(self.arms) | set(self.repeat_tasks)
            for arm in self.arms:
                data["stage"][arm]["repeat"] = sc.replicates
            for task in self.repeat_tasks:
                data["task"][task]["repeat"] = sc.replicates
            _propagate_repeat(data, repeated, sc.replicates)
            result = api.run(
                data, overrides=sc.overrides, seed=sc.seed, out=out_dir / "run", registry=registry
            )
            if self.observe is not None:
                return _as_observations(self.observe(result))
            stage_metric = self._metric()
            obs = Observations(
                values={a: _read_repeat(result, a, stage_metric, sc.replicates) for a in self.arms}
            )
            for name in self.also:
                metric = (stage_metric[0], name)
                obs.numbers[name] = {a: _read_repeat(result, a, metric, sc.replicates) for a in self.arms}
            return obs
        values: dict[str, list[float]] = {a: [] for a in self.arms}
        also: dict[str, dict[str, list[float]]] = {m: {a: [] for a in self.arms} for m in self.also}
        extra: Observations | None = None
        for i in range(sc.replicates):
            result = api.run(
                data, overrides=sc.overrides, seed=sc.seed + i, out=out_dir / f"run-{i}", registry=registry
            )
            if self.observe is not None:
                extra = _as_observations(self.observe(result))
                for arm, vals in extra.values.items():
                    values.setdefault(arm, []).extend(float(v) for v in vals)
            else:
                stage_metric = self._metric()
                for arm in self.arms:
                    values[arm].append(_read_single(result, arm, stage_metric))
                    for name in self.also:
                        also[name][arm].append(_read_single(result, arm, (stage_metric[0], name)))
        obs = Observations(values=values, numbers=dict(also))
        if extra is not None:
            obs.numbers, obs.table, obs.figures = extra.numbers, extra.table, extra.figures
        return obs


def _expand(value: Any, repeated: set[str]) -> Any:
    """Inputs of a stage that is not repeated: a repeated node ``x`` becomes ``"x[*]"`` (every replicate)."""
    if isinstance(value, str):
        return [f"{value}[*]"] if value in repeated else value
    if isinstance(value, list):
        return [f"{v}[*]" if isinstance(v, str) and v in repeated else v for v in value]
    return value


def _also_numbers(claim: Claim, numbers: dict[str, Any], rng: Any) -> tuple[dict[str, Any], str]:
    """Replace ``{metric: {arm: [values]}}`` entries of ``numbers`` by means and ratios with intervals."""
    from quadriga.stats import bootstrap_ci

    out: dict[str, Any] = {}
    rows = ["| metric | arm | mean or ratio | 95% interval | n | method |", "|---|---|---|---|---|---|"]
    for key, value in numbers.items():
        if key not in claim.also or not isinstance(value, Mapping):
            out[key] = value
            continue
        for arm, vals in value.items():
            ci = bootstrap_ci(vals, "mean", resamples=2000, rng=rng)
            out[f"{arm}/{key}"] = ci.estimate
            out[f"{arm}/{key}_low"], out[f"{arm}/{key}_high"] = ci.low, ci.high
            rows.append(f"| {key} | {arm} | {_fmt(ci.estimate)} | {_span(ci)} | {ci.n} | {ci.method} |")
        method = claim.arms[0]
        for base in claim.arms[1:]:
            ci = bootstrap_ci(value[method], "ratio", value[base], paired=True, resamples=2000, rng=rng)
            name = f"{key}_ratio_{method}_over_{base}"
            out[name], out[f"{name}_low"], out[f"{name}_high"] = ci.estimate, ci.low, ci.high
            cells = f"{_fmt(ci.estimate)} | {_span(ci)} | {ci.n} | {ci.method}"
            rows.append(f"| {key} ratio | {method} / {base} | {cells} |")
    return out, ("\n".join(rows) if len(rows) > 2 else "")


def _pipelines_repeat() -> bool:
    """Whether the pipeline language of this core has ``repeat`` (``quadriga.expansion``)."""
    import importlib.util

    return importlib.util.find_spec("quadriga.expansion") is not None


def _propagate_repeat(data: dict[str, Any], repeated: set[str], replicates: int) -> None:
    """Make the rest of the pipeline follow the repeated arms and tasks.

    A stage with a single-node input (``reference = "data"``) on a repeated node is repeated too
    and binds replicate-wise (``check[i]`` gets ``data[i]``); otherwise its list inputs on repeated
    nodes select every replicate (``"arm[*]"``). Stages are visited in file order until nothing
    changes, so chains of stages follow.
    """
    stages = data.get("stage", {})
    changed = True
    while changed:
        changed = False
        for name, table in stages.items():
            inputs = table.get("inputs")
            if name in repeated or not isinstance(inputs, dict):
                continue
            if any(isinstance(v, str) and v in repeated for v in inputs.values()):
                table["repeat"] = replicates
                repeated.add(name)
                changed = True
    for name, table in stages.items():
        if name not in repeated and isinstance(table.get("inputs"), dict):
            table["inputs"] = {k: _expand(v, repeated) for k, v in table["inputs"].items()}


def _as_observations(value: Any) -> Observations:
    if isinstance(value, Observations):
        return value
    if isinstance(value, Mapping):
        return Observations(values=dict(value))
    raise TypeError(f"observe/experiment returned {type(value).__name__}; return a dict or Observations")


def _stage_values(result: Any, stage: str) -> dict[str, Any]:
    stages = result.results.get("stages", {})
    if stage not in stages:
        raise ConfigError(
            f"stage '{stage}' has no results in this run.{suggest(stage, stages)}", key="metric"
        )
    return stages[stage].get("values", {})


def _read_repeat(result: Any, arm: str, metric: tuple[str, str], replicates: int) -> list[float]:
    stage, name = metric
    stages = result.results.get("stages", {})
    out = []
    for i in range(replicates):
        keys = [f"{arm}[{i}]/{name}"]
        pools = [stages.get(stage, {}).get("values", {}), stages.get(f"{stage}[{i}]", {}).get("values", {})]
        found = next((p[k] for p in pools for k in keys if k in p), None)
        if found is None:
            available = sorted(k for p in pools for k in p)[:8]
            raise ConfigError(
                f"no value '{arm}[{i}]/{name}' in stage '{stage}' (has {', '.join(available) or 'nothing'}).",
                key="metric",
            )
        out.append(float(found))
    return out


def _read_single(result: Any, arm: str, metric: tuple[str, str]) -> float:
    stage, name = metric
    values = _stage_values(result, stage)
    for key in (f"{arm}/{name}", name):
        if key in values:
            return float(values[key])
    raise ConfigError(
        f"no value '{arm}/{name}' in stage '{stage}' (has {', '.join(sorted(values)[:8]) or 'nothing'}).",
        key="metric",
    )


# ---------------------------------------------------------------------- verdict policy
def _side(effect: Effect, low: float, high: float) -> str:
    lo_b, hi_b = effect.bounds
    if effect.relation == "within":
        if lo_b <= low and high <= hi_b:
            return "passed"
        if high < lo_b or low > hi_b:
            return "refuted"
        return "inconclusive"
    if effect.relation == "greater":
        return "passed" if low > lo_b else ("refuted" if high < lo_b else "inconclusive")
    return "passed" if high < hi_b else ("refuted" if low > hi_b else "inconclusive")


def _pvalues(effect: Effect, est: float, se: float) -> tuple[float, float]:
    """One-sided normal p-values ``(p against the claim's null, p against the claim)``."""
    from scipy.stats import norm

    lo_b, hi_b = effect.bounds
    if not se > 0:
        side = _side(effect, est, est)
        return (0.0, 1.0) if side == "passed" else ((1.0, 0.0) if side == "refuted" else (1.0, 1.0))
    if effect.relation == "greater":
        z = (est - lo_b) / se
        return float(norm.sf(z)), float(norm.cdf(z))
    if effect.relation == "less":
        z = (hi_b - est) / se
        return float(norm.sf(z)), float(norm.cdf(z))
    z_lo, z_hi = (est - lo_b) / se, (hi_b - est) / se
    return float(max(norm.sf(z_lo), norm.sf(z_hi))), float(min(norm.cdf(z_lo), norm.cdf(z_hi)))


def _distance(effect: Effect, est: float) -> float:
    lo_b, hi_b = effect.bounds
    if effect.relation == "greater":
        return est - lo_b
    if effect.relation == "less":
        return hi_b - est
    return min(est - lo_b, hi_b - est)


def decide(effect: Effect, x: Any, y: Any = None, *, rng: Any = 0) -> dict[str, Any]:
    """One comparison: the effect's interval and its verdict under the policy.

    Args:
        effect: the claimed effect.
        x: per-replicate values of the method, shape ``(n,)``.
        y: per-replicate values of the baseline (paired by index when ``effect.paired``).
        rng: seed of the bootstrap.

    Returns:
        ``{estimate, low, high, level, method, n, se, verdict, p_claim, p_refute, mde,
        replicates_needed, distance}``; ``mde`` is the minimum detectable distance from the
        boundary at this n (two-sided test at the effect's level, power 0.8) and
        ``replicates_needed`` the n at which the observed distance would be detected (set when
        inconclusive, else ``None``).

    Raises:
        ConfigError: empty or non-finite values, unequal paired lengths.

    Source: Efron & Tibshirani 1993 (bootstrap intervals); Wellek 2010 (equivalence and
    non-inferiority tests by interval inclusion).
    """
    from quadriga.stats import bootstrap_ci

    ci = bootstrap_ci(
        x,
        effect.statistic,
        y,
        paired=effect.paired,
        method=effect.method,
        level=effect.level,
        resamples=effect.resamples,
        rng=rng,
    )
    return decide_interval(effect, ci)


def decide_interval(effect: Effect, ci: Any) -> dict[str, Any]:
    """The verdict policy on a computed :class:`~quadriga.stats.Interval` (see :func:`decide`).

    When ``ci.se`` is NaN it is taken as the interval's half-width over ``z_{(1+level)/2}``.
    """
    from scipy.stats import norm

    from quadriga.stats import Interval, min_detectable_effect, replicates_needed

    if not math.isfinite(ci.se):
        se = (ci.high - ci.low) / (2 * norm.ppf(0.5 + ci.level / 2))
        ci = Interval(ci.estimate, ci.low, ci.high, ci.level, ci.method, ci.n, float(se))
    verdict = _side(effect, ci.low, ci.high) if ci.n >= 2 else "inconclusive"
    p_claim, p_refute = _pvalues(effect, ci.estimate, ci.se)
    dist = _distance(effect, ci.estimate)
    out = ci.as_dict()
    out.update(
        verdict=verdict,
        p_claim=p_claim,
        p_refute=p_refute,
        distance=dist,
        mde=min_detectable_effect(ci.se, level=effect.level) if math.isfinite(ci.se) else math.nan,
        replicates_needed=(
            replicates_needed(ci.n, ci.se, dist if dist > 0 else abs(dist), level=effect.level)
            if verdict == "inconclusive"
            else None
        ),
    )
    return out


def _groups(values: Mapping[Any, Any], arms: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    if values and all(isinstance(v, Mapping) for v in values.values()):
        return {str(g): dict(v) for g, v in values.items()}
    return {"": dict(values)}


def evaluate_claim(claim: Claim, obs: Observations, scale: str, *, rng: Any = 0) -> dict[str, Any]:
    """Apply the verdict policy to a claim's observations.

    Returns:
        ``{status, summary, comparisons: [...], holm: bool, tuning_flags: [...], effect: {...},
        observations: {group: {arm: [values]}}, numbers, table, figures}``. ``status`` is ``ran``
        at smoke scale; otherwise passed (every comparison passed), refuted (any refuted) or
        inconclusive.

    Raises:
        ConfigError: an arm missing from the observations, non-finite values.
    """
    groups = _groups(obs.values, claim.arms) if obs.values else {}
    comparisons = []
    if claim.effect.statistic == "interval":
        if not obs.intervals:
            raise ConfigError(
                "statistic 'interval' needs Observations.intervals from the experiment.", key="statistic"
            )
        for group, ci in obs.intervals.items():
            res = decide_interval(claim.effect, ci)
            res.update(group=group, arm=claim.arms[0], baseline=None)
            comparisons.append(res)
        groups = {}
    for group, vals in groups.items():
        for method, base in claim.comparisons:
            for arm in (method, base):
                if arm is not None and arm not in vals:
                    raise ConfigError(
                        f"the observations{f' of {group}' if group else ''} lack arm '{arm}' "
                        f"(have {', '.join(map(str, vals))}).",
                        key="arms",
                    )
            res = decide(claim.effect, vals[method], None if base is None else vals[base], rng=rng)
            res.update(group=group, arm=method, baseline=base)
            comparisons.append(res)
    holm = len(comparisons) > 1
    if holm:
        from quadriga.stats import holm as holm_adjust

        alpha = (1 - claim.effect.level) / 2
        adj_claim = holm_adjust([c["p_claim"] for c in comparisons])
        adj_refute = holm_adjust([c["p_refute"] for c in comparisons])
        for c, pc, pr in zip(comparisons, adj_claim, adj_refute, strict=True):
            c["p_claim_holm"], c["p_refute_holm"] = pc, pr
            c["verdict"] = "passed" if pc < alpha else ("refuted" if pr < alpha else "inconclusive")
    numbers, also_table = _also_numbers(claim, dict(obs.numbers), rng) if claim.also else (obs.numbers, "")
    verdicts = [c["verdict"] for c in comparisons]
    if scale != "paper":
        status = "ran"
    elif all(v == "passed" for v in verdicts):
        status = "passed"
    elif any(v == "refuted" for v in verdicts):
        status = "refuted"
    else:
        status = "inconclusive"
    record = {
        "status": status,
        "effect": {**attrs.asdict(claim.effect), "claimed": claim.effect.describe()},
        "comparisons": comparisons,
        "holm": holm,
        "tuning_flags": claim.tuning_flags(),
        "tuning": {a: attrs.asdict(t) for a, t in claim.tuning.items()},
        "observations": {
            g: {str(a): [float(v) for v in vs] for a, vs in vals.items()} for g, vals in groups.items()
        },
        "numbers": numbers,
        "table": "\n\n".join(t for t in (also_table, obs.table) if t),
        "figures": obs.figures,
    }
    record["summary"] = _summary(claim, record, scale)
    return record


def _fmt(v: float) -> str:
    return f"{v:.4g}" if isinstance(v, (int, float)) and math.isfinite(v) else str(v)


def _span(ci: Any) -> str:
    return f"[{_fmt(ci.low)}, {_fmt(ci.high)}]"


def _summary(claim: Claim, record: dict[str, Any], scale: str) -> str:
    parts = []
    for c in record["comparisons"]:
        who = c["arm"] if c["baseline"] is None else f"{c['arm']} vs {c['baseline']}"
        where = f"{c['group']}: " if c["group"] else ""
        text = (
            f"{where}{who} {claim.effect.statistic} {_fmt(c['estimate'])} "
            f"[{_fmt(c['low'])}, {_fmt(c['high'])}] (n={c['n']}, {c['method']})"
        )
        if scale == "paper" and c["verdict"] == "inconclusive":
            text += f"; MDE {_fmt(c['mde'])}, about {c['replicates_needed']} replicates needed"
        parts.append(text)
    head = f"claim: {claim.effect.describe()}. "
    if record["holm"] and scale == "paper":
        k = sum(c["verdict"] == "passed" for c in record["comparisons"])
        head += f"{k} of {len(record['comparisons'])} comparisons passed after Holm correction. "
    flags = "; ".join(record["tuning_flags"])
    return head + "; ".join(parts) + (f". {flags}" if flags else "")


# ---------------------------------------------------------------------- selecting, running, records
def select_claims(registry: Any, what: str) -> list[Any]:
    """Claims of a distribution (``quadriga-srmc``), a plugin name, or one claim by name.

    Raises:
        UnknownComponentError: nothing matches; close matches are suggested.
    """
    claims = registry.claims()
    chosen = [c for c in claims if what in (c.distribution, c.plugin, c.name)]
    if not chosen:
        installed = {getattr(st, "distribution", "") for st in getattr(registry, "plugins", {}).values()}
        if what in installed or what in getattr(registry, "plugins", {}):
            raise UnknownComponentError(
                f"'{what}' is installed but registers no claims. Run `quadriga list --kind claim` "
                "to see the claims installed."
            )
        names = {c.name for c in claims} | {c.distribution for c in claims}
        hint = suggest(what, names) or " Run `quadriga list --kind claim` to see the claims installed."
        raise UnknownComponentError(f"no distribution or claim named '{what}'.{hint}")
    return chosen


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item"):
        return value.item()
    return value


def _run_legacy(fn: Any, scale: str, claim_dir: Path) -> dict[str, Any]:
    result = fn(scale, out_dir=claim_dir)
    if not isinstance(result, ClaimResult):
        raise TypeError(f"claim returned {type(result).__name__}, expected ClaimResult or a Claim")
    figures = {}
    for key, path in result.figures.items():
        p = Path(path)
        figures[key] = str(p if p.is_absolute() else claim_dir / p)
    status = "ran" if scale != "paper" else ("passed" if result.passed else "failed")
    return dict(
        status=status,
        summary=result.summary + ("" if scale != "paper" else " (legacy rule, not the claims protocol)"),
        numbers=dict(result.numbers),
        figures=figures,
        table=result.table,
        comparisons=[],
        legacy=True,
    )


def verify(
    registry: Any,
    what: str,
    *,
    scale: str = "smoke",
    out_dir: Path,
    record: bool = False,
    on_start: Any = None,
    on_end: Any = None,
) -> tuple[list[dict[str, Any]], Path]:
    """Run the claims selected by ``what`` and write ``report.md`` and ``report.json`` into ``out_dir``.

    Args:
        registry: the :class:`~quadriga.registry.Registry`.
        what: a distribution, plugin or claim name.
        scale: ``"smoke"`` or ``"paper"``.
        out_dir: where each claim gets a sub-directory and the report is written.
        record: at paper scale, keep each verdict in the plugin's ``claims_record.json``.
        on_start: optional callback ``(spec)`` called before each claim runs (progress display).
        on_end: optional callback ``(spec, record)`` called after each claim (progress display).

    Returns:
        ``(records, report_path)``: one record per claim with ``name``, ``status`` (one of
        :data:`STATUSES`), ``summary``, ``comparisons``, ``numbers``, ``figures``, ``seconds``, ``date``.

    Raises:
        QuadrigaError: for an unknown scale, or ``record`` at smoke scale; UnknownComponentError
            for an unknown name.
    """
    if scale not in SCALES:
        raise QuadrigaError(f"unknown scale '{scale}'; use one of {', '.join(SCALES)}.")
    if record and scale != "paper":
        raise QuadrigaError("--record keeps paper-scale verdicts only; add --scale paper.")
    chosen = select_claims(registry, what)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    records = []
    for spec in chosen:
        if on_start:
            on_start(spec)
        claim_dir = out_dir / spec.name
        claim_dir.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        rec: dict[str, Any] = {
            "name": spec.name,
            "distribution": spec.distribution,
            "claim": spec.summary,
            "paper": spec.paper,
            "scale": scale,
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d"),
            "version": _version(spec.distribution),
        }
        try:
            target = registry.load_claim(spec)
            if isinstance(target, Claim):
                obs = target.observations(scale, claim_dir, registry)
                rec.update(evaluate_claim(target, obs, scale))
            else:
                rec.update(_run_legacy(target, scale, claim_dir))
        except Exception as exc:
            rec.update(
                status="error",
                summary=f"{type(exc).__name__}: {exc}",
                numbers={},
                figures={},
                table="",
                comparisons=[],
                traceback=traceback.format_exc(),
            )
        rec["seconds"] = round(time.perf_counter() - start, 2)
        rec = _jsonable(rec)
        records.append(rec)
        if on_end:
            on_end(spec, rec)
    report = out_dir / "report.md"
    _write_report(report, records, what, scale)
    from quadriga.runs import atomic_write_text

    atomic_write_text(out_dir / "report.json", json.dumps(records, indent=2, default=str))
    if record:
        record_verdicts(
            registry, [r for r in records if r["status"] in ("passed", "refuted", "inconclusive")]
        )
    return records, report


def _version(distribution: str) -> str:
    import importlib.metadata as md

    try:
        return md.version(distribution)
    except (md.PackageNotFoundError, ValueError):
        return "unknown"


def _record_path(target: str) -> Path | None:
    """``claims_record.json`` in the package of a ``"module:attr"`` target, found without importing it."""
    import importlib.util

    top = target.split(":", 1)[0].split(".", 1)[0]
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    return Path(next(iter(found.submodule_search_locations))) / RECORD_FILE


def record_verdicts(registry: Any, records: list[dict[str, Any]]) -> list[Path]:
    """Keep each paper-scale verdict in its plugin's ``claims_record.json``; return the files written.

    Each entry: ``{status, summary, estimate, low, high, n, method, date, version}`` (the first
    comparison's numbers; every comparison under ``comparisons``).
    """
    from quadriga.runs import atomic_write_json

    specs = {c.name: c for c in registry.claims()}
    written = []
    for rec in records:
        spec = specs.get(rec["name"])
        path = _record_path(spec.target) if spec else None
        if path is None:
            continue
        data = json.loads(path.read_text()) if path.is_file() else {}
        first = rec["comparisons"][0] if rec.get("comparisons") else {}
        data[rec["name"]] = {
            "status": rec["status"],
            "summary": rec["summary"],
            **{k: first.get(k) for k in ("estimate", "low", "high", "n", "method")},
            "comparisons": [
                {k: c.get(k) for k in ("group", "arm", "baseline", "estimate", "low", "high", "n", "verdict")}
                for c in rec.get("comparisons", [])
            ],
            "date": rec["date"],
            "version": rec["version"],
        }
        atomic_write_json(path, data)
        written.append(path)
    return written


def last_verdict(spec: Any) -> dict[str, Any] | None:
    """The last recorded paper-scale verdict of a claim, or ``None``.

    The record holds ``status``, ``date``, ``version``, ...; it is read from the plugin's
    ``claims_record.json`` without importing the plugin.
    """
    path = _record_path(spec.target)
    if path is None or not path.is_file():
        return None
    try:
        return json.loads(path.read_text()).get(spec.name)
    except (OSError, json.JSONDecodeError):
        return None


def verdict_text(spec: Any) -> str:
    """``"passed 2026-05-01 (v0.3.0)"`` for ``quadriga list``, or ``"not recorded"``."""
    last = last_verdict(spec)
    if not last:
        return "not recorded"
    return f"{last.get('status')} {last.get('date')} (v{last.get('version')})"


def _write_report(path: Path, records: list[dict[str, Any]], what: str, scale: str) -> None:
    from quadriga.runs import atomic_write_text

    lines = [f"# quadriga verify {what} (scale: {scale})", ""]
    if scale != "paper":
        lines += ["Smoke scale: the numbers below are not verdicts (status **ran**).", ""]
    lines += ["| claim | status | summary | seconds |", "|---|---|---|---|"]
    for r in records:
        summary = str(r["summary"]).replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r['name']} | {r['status']} | {summary} | {r['seconds']} |")
    for r in records:
        lines += ["", f"## {r['name']}", "", f"*{r['claim']}*", ""]
        if r.get("paper"):
            lines += [f"Source: {r['paper']}", ""]
        lines += [f"**{r['status']}** - {r['summary']}", ""]
        if r.get("effect"):
            lines += [f"Effect: {r['effect']['quantity']}; claimed {r['effect']['claimed']}.", ""]
        if r.get("comparisons"):
            lines += [
                "| group | arm | baseline | estimate | interval | n | method | verdict | p (claim) | MDE "
                "| n needed |",
                "|---|---|---|---|---|---|---|---|---|---|---|",
            ]
            for c in r["comparisons"]:
                p = c.get("p_claim_holm", c["p_claim"])
                lines.append(
                    f"| {c['group']} | {c['arm']} | {c['baseline'] or ''} | {_fmt(c['estimate'])} | "
                    f"[{_fmt(c['low'])}, {_fmt(c['high'])}] | {c['n']} | {c['method']} | "
                    f"{c['verdict'] if scale == 'paper' else 'ran'} | {_fmt(p)} | {_fmt(c['mde'])} | "
                    f"{c['replicates_needed'] or ''} |"
                )
            lines.append("")
            if r.get("holm"):
                lines += ["p-values are Holm-adjusted over the comparisons of this claim.", ""]
        for flag in r.get("tuning_flags", []):
            lines += [f"> {flag}", ""]
        if r.get("numbers"):
            lines += ["| number | value |", "|---|---|"]
            lines += [f"| {k} | {_fmt(v)} |" for k, v in r["numbers"].items()]
            lines.append("")
        if r.get("table"):
            lines += [r["table"], ""]
        for key, fig in r.get("figures", {}).items():
            try:
                rel = Path(fig).relative_to(path.parent)
            except ValueError:
                rel = Path(fig)
            lines += [f"![{key}]({rel.as_posix()})", ""]
        if r.get("traceback"):
            lines += ["```", r["traceback"], "```", ""]
    atomic_write_text(path, "\n".join(lines) + "\n")
