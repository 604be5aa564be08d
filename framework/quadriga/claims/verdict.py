"""The verdict policy: an effect's interval against the claimed region, Holm over comparisons."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

from quadriga.claims.claim import Claim
from quadriga.claims.model import Effect, Observations
from quadriga.errors import ConfigError

__all__ = ["P_FLOOR", "comparison_cells", "decide", "decide_interval", "evaluate_claim", "format_p"]

#: p-values below this are printed as ``< 1e-04``
P_FLOOR = 1e-4


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


def _pvalues(effect: Effect, ci: Any) -> tuple[float, float]:
    """One-sided p-values ``(p against the claim's null, p against the claim)`` by the interval's own method.

    ``Interval.pvalue`` inverts the interval, so at one-sided level ``alpha = (1 - level) / 2``
    ``p_claim < alpha`` exactly when the interval lies on the claimed side of the boundary and
    ``p_refute < alpha`` exactly when it lies on the other side: the p-values, their Holm
    adjustment and the printed interval cannot disagree. For ``within`` (two one-sided tests),
    ``p_claim`` is the larger of the two p-values for lying inside the band and ``p_refute`` the
    smaller of the two for lying outside it.
    """
    lo_b, hi_b = effect.bounds
    if effect.relation == "greater":
        return ci.pvalue(lo_b, "greater"), ci.pvalue(lo_b, "less")
    if effect.relation == "less":
        return ci.pvalue(hi_b, "less"), ci.pvalue(hi_b, "greater")
    inside = max(ci.pvalue(lo_b, "greater"), ci.pvalue(hi_b, "less"))
    outside = min(ci.pvalue(lo_b, "less"), ci.pvalue(hi_b, "greater"))
    return inside, outside


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
        rng: seed of any resampling the interval method does.

    Returns:
        As :func:`decide_interval`.

    Raises:
        ConfigError: empty or non-finite values, unequal paired lengths.

    Source: :func:`quadriga.stats.interval` (the method is chosen from the statistic and n and
    named in ``method``); Wellek 2010 (equivalence and non-inferiority tests by interval inclusion).
    """
    return decide_interval(effect, _interval(effect, x, y, rng))


def _interval(effect: Effect, x: Any, y: Any, rng: Any) -> Any:
    """The effect's :class:`~quadriga.stats.Interval` on the values, by the effect's method."""
    from quadriga.stats import interval

    return interval(
        x,
        effect.statistic,
        y,
        paired=effect.paired,
        method=effect.method,
        level=effect.level,
        resamples=effect.resamples,
        rng=rng,
    )


def decide_interval(effect: Effect, ci: Any) -> dict[str, Any]:
    """The verdict policy on a computed :class:`~quadriga.stats.Interval`.

    Returns:
        ``{estimate, low, high, level, method, n, se, df, verdict, p_claim, p_refute, p_method,
        distance, mde, replicates_needed}``; ``mde`` is the minimum detectable distance from
        the boundary at this n (one-sided test at ``(1 - level) / 2``, power 0.8, the interval's
        degrees of freedom) and ``replicates_needed`` the n at which the observed distance would be
        detected with power 0.8 (set when inconclusive, else ``None``).
    """
    from quadriga.stats import min_detectable_effect, replicates_for_power

    verdict = _side(effect, ci.low, ci.high) if ci.n >= 2 else "inconclusive"
    p_claim, p_refute = _pvalues(effect, ci)
    dist = _distance(effect, ci.estimate)
    se_ok = math.isfinite(ci.se) and ci.se > 0
    out = ci.as_dict()
    needed = None
    if verdict == "inconclusive" and se_ok and ci.n >= 2:
        needed = replicates_for_power(abs(dist), ci.se * math.sqrt(ci.n), level=effect.level)
    out.update(
        verdict=verdict,
        p_method=f"one-sided, from the interval's own method ({ci.method})",
        p_claim=p_claim,
        p_refute=p_refute,
        distance=dist,
        mde=min_detectable_effect(ci.se, level=effect.level, df=ci.df) if se_ok else math.nan,
        replicates_needed=needed,
    )
    return out


def _holm(effect: Effect, comparisons: list[dict[str, Any]], intervals: list[Any]) -> None:
    """Holm-adjust the comparisons' p-values, decide on them, and add the adjusted intervals.

    The adjusted interval of a comparison is its interval at the one-sided level
    ``alpha * p / p_holm`` (``alpha = (1 - level) / 2``): since the interval inverts ``p``, it
    excludes the boundary exactly when ``p_holm < alpha``, so the adjusted interval printed beside
    the raw one agrees with the adjusted verdict. (For the comparisons Holm's step-down multiplies
    by ``k - i + 1`` this is the Bonferroni interval at ``alpha / (k - i + 1)``.)

    Source: Holm 1979; Strassburger & Bretz 2008 (intervals compatible with step-down tests).
    """
    from quadriga.stats import holm as holm_adjust

    alpha = (1 - effect.level) / 2
    adj_claim = holm_adjust([c["p_claim"] for c in comparisons])
    adj_refute = holm_adjust([c["p_refute"] for c in comparisons])
    for c, ci, pc, pr in zip(comparisons, intervals, adj_claim, adj_refute, strict=True):
        c["p_claim_holm"], c["p_refute_holm"] = pc, pr
        c["verdict"] = "passed" if pc < alpha else ("refuted" if pr < alpha else "inconclusive")
        ratios = {
            "claim": c["p_claim"] / pc if pc > 0 else 1.0,
            "refute": c["p_refute"] / pr if pr > 0 else 1.0,
        }
        ratio = {"passed": ratios["claim"], "refuted": ratios["refute"]}.get(
            c["verdict"], min(ratios.values())
        )
        if ratio >= 1.0:
            c["low_holm"], c["high_holm"], c["level_holm"] = c["low"], c["high"], c["level"]
            continue
        adj = ci.at_level(1 - 2 * alpha * ratio)
        c["low_holm"], c["high_holm"], c["level_holm"] = adj.low, adj.high, adj.level


def _groups(values: Mapping[Any, Any], arms: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    if values and all(isinstance(v, Mapping) for v in values.values()):
        return {str(g): dict(v) for g, v in values.items()}
    return {"": dict(values)}


def _comparisons(
    claim: Claim, obs: Observations, groups: Mapping[str, Mapping[str, Any]], rng: Any
) -> tuple[list[dict[str, Any]], list[Any]]:
    """The decided comparisons (groups x baselines, or the experiment's intervals) and their intervals.

    Raises:
        ConfigError: statistic ``interval`` without intervals, an arm missing from a group.
    """
    comparisons: list[dict[str, Any]] = []
    intervals: list[Any] = []
    if claim.effect.statistic == "interval":
        if not obs.intervals:
            raise ConfigError(
                "statistic 'interval' needs Observations.intervals from the experiment.", key="statistic"
            )
        for group, ci in obs.intervals.items():
            res = decide_interval(claim.effect, ci)
            res.update(group=group, arm=claim.arms[0], baseline=None)
            comparisons.append(res)
            intervals.append(ci)
    for group, vals in groups.items():
        for method, base in claim.comparisons:
            for arm in (method, base):
                if arm is not None and arm not in vals:
                    raise ConfigError(
                        f"the observations{f' of {group}' if group else ''} lack arm '{arm}' "
                        f"(have {', '.join(map(str, vals))}).",
                        key="arms",
                    )
            ci = _interval(claim.effect, vals[method], None if base is None else vals[base], rng)
            res = decide_interval(claim.effect, ci)
            res.update(group=group, arm=method, baseline=base)
            comparisons.append(res)
            intervals.append(ci)
    return comparisons, intervals


def _status(verdicts: list[str], scale: str, failed: str) -> str:
    """The claim's status from its comparisons' verdicts (see :func:`evaluate_claim`)."""
    if scale != "paper" or not verdicts:  # no comparison (a benchmark table): nothing to decide
        return "ran"
    if failed:
        return "inconclusive"
    if all(v == "passed" for v in verdicts):
        return "passed"
    if any(v == "refuted" for v in verdicts):
        return "refuted"
    return "inconclusive"


def evaluate_claim(claim: Claim, obs: Observations, scale: str, *, rng: Any = 0) -> dict[str, Any]:
    """Apply the verdict policy to a claim's observations.

    Returns:
        ``{status, summary, comparisons: [...], holm: bool, tuning_flags: [...], effect: {...},
        preconditions: [{description, holds, diagnostic}], precondition_failed: str, plan: {...} |
        None, observations: {group: {arm: [values]}}, numbers, table, figures}``. ``status`` is
        ``ran`` at smoke scale and for a claim with no comparison (a benchmark table); otherwise
        inconclusive when a precondition failed, else passed (every comparison passed), refuted
        (any refuted) or inconclusive.

    Raises:
        ConfigError: an arm missing from the observations, non-finite values.
    """
    groups = _groups(obs.values, claim.arms) if obs.values else {}
    if claim.effect.statistic == "interval":
        groups = {}
    comparisons, intervals = _comparisons(claim, obs, groups, rng)
    holm = len(comparisons) > 1 and scale == "paper"  # smoke scale: no p-values, no adjustment
    if holm:
        _holm(claim.effect, comparisons, intervals)
    checks: list[dict[str, Any]] = []
    for pre in claim.preconditions:
        holds, diagnostic = pre.evaluate(obs)
        checks.append({"description": pre.description, "holds": holds, "diagnostic": diagnostic})
    failed = "; ".join(c["description"] for c in checks if not c["holds"])
    if failed and scale == "paper":
        for c in comparisons:
            c["verdict"] = "inconclusive"
    if scale != "paper":  # smoke scale: numbers, never a verdict (the status says "ran")
        for c in comparisons:
            c["verdict"], c["replicates_needed"] = "ran", None
    numbers, also_table = _also_numbers(claim, dict(obs.numbers), rng) if claim.also else (obs.numbers, "")
    record = {
        "status": _status([c["verdict"] for c in comparisons], scale, failed),
        "effect": {
            **{k: v for k, v in attrs.asdict(claim.effect).items()},
            "claimed": claim.effect.describe(),
            "statistic_name": claim.effect.statistic_name,
        },
        "comparisons": comparisons,
        "holm": holm,
        "preconditions": checks,
        "precondition_failed": failed,
        "plan": plan_record(claim),
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


def plan_record(claim: Claim) -> dict[str, Any] | None:
    """The claim's declared plan and the paper scale's replicates, as stored in every record."""
    if claim.plan is None:
        return None
    return {**attrs.asdict(claim.plan), "planned_replicates": claim.scales["paper"].replicates}


def _also_numbers(claim: Claim, numbers: dict[str, Any], rng: Any) -> tuple[dict[str, Any], str]:
    """Replace ``{metric: {arm: [values]}}`` entries of ``numbers`` by means and ratios with intervals."""
    from quadriga.stats import interval

    out: dict[str, Any] = {}
    rows = ["| metric | arm | mean or ratio | 95% interval | n | method |", "|---|---|---|---|---|---|"]
    for key, value in numbers.items():
        if key not in claim.also or not isinstance(value, Mapping):
            out[key] = value
            continue
        for arm, vals in value.items():
            ci = interval(vals, "mean", rng=rng)
            out[f"{arm}/{key}"] = ci.estimate
            out[f"{arm}/{key}_low"], out[f"{arm}/{key}_high"] = ci.low, ci.high
            rows.append(f"| {key} | {arm} | {_fmt(ci.estimate)} | {_span(ci)} | {ci.n} | {ci.method} |")
        method = claim.arms[0]
        for base in claim.arms[1:]:
            ci = interval(value[method], "ratio", value[base], paired=True, rng=rng)
            name = f"{key}_ratio_{method}_over_{base}"
            out[name], out[f"{name}_low"], out[f"{name}_high"] = ci.estimate, ci.low, ci.high
            cells = f"{_fmt(ci.estimate)} | {_span(ci)} | {ci.n} | {ci.method}"
            rows.append(f"| {key} ratio | {method} / {base} | {cells} |")
    return out, ("\n".join(rows) if len(rows) > 2 else "")


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, (int, float)) and math.isfinite(v) else str(v)


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)


def format_p(p: Any) -> str:
    """A p-value for a report: ``0.0312``, ``< 1e-04`` below :data:`P_FLOOR`, ``-`` when missing."""
    if not _finite(p):
        return "-"
    return f"< {P_FLOOR:.0e}" if p < P_FLOOR else f"{p:.3g}"


def _interval_parts(c: Mapping[str, Any]) -> tuple[str, str]:
    """``(interval, method)`` of a comparison as printed: no interval for equal values, the n = 2 caveat."""
    from quadriga.stats import small_sample_note

    method = str(c.get("method", "-"))
    n = c.get("n")
    if method.startswith("no interval") or not all(_finite(c.get(k)) for k in ("low", "high")):
        return "-", method
    # n = 1 with an interval: an exact value, say nothing; nor for two equal values (a point interval)
    note = small_sample_note(2) if n == 2 and c["low"] != c["high"] else ""
    return f"[{_fmt(c['low'])}, {_fmt(c['high'])}]", method + (f"; {note}" if note else "")


def comparison_cells(c: Mapping[str, Any], statistic: str, scale: str) -> dict[str, str]:
    """One comparison of a record as ``{column: text}``, the same in ``report.md`` and the HTML page.

    Columns: group, arm, baseline, statistic (its name: ``slope``, ``ratio``), estimate,
    interval, n, method; at paper scale also verdict, p (claim) (:func:`format_p`), MDE and the
    replicates needed. At smoke scale there is no verdict, p or MDE: numbers only.
    """
    interval, method = _interval_parts(c)
    cells = {
        "group": str(c.get("group") or "-"),
        "arm": str(c.get("arm") or "-"),
        "baseline": str(c.get("baseline") or "-"),
        "statistic": statistic,
        "estimate": _fmt(c.get("estimate")),
        "interval": interval,
        "n": str(c.get("n")),
        "method": method,
    }
    if "low_holm" in c:
        cells["Holm interval"] = _holm_span(c)
    if scale == "paper":
        cells.update(
            {
                "verdict": str(c.get("verdict", "-")),
                "p (claim)": format_p(c.get("p_claim_holm", c.get("p_claim"))),
                "MDE": _fmt(c["mde"]) if _finite(c.get("mde")) else "-",
                "replicates needed": _needed(c.get("replicates_needed")),
            }
        )
    return cells


def _needed(n: Any) -> str:
    """Replicates needed as printed: ``-`` when not computed, ``> 100000`` when out of reach."""
    if not isinstance(n, int) or n == 0:
        return "-"
    return "> 100000" if n < 0 else str(n)


def _span(ci: Any) -> str:
    return f"[{_fmt(ci.low)}, {_fmt(ci.high)}]"


def _holm_span(c: Mapping[str, Any]) -> str:
    """The Holm-adjusted interval with its level: ``[0.8, 1.3] (98.3%)``, ``-`` when there is none."""
    if not all(_finite(c.get(k)) or c.get(k) in (math.inf, -math.inf) for k in ("low_holm", "high_holm")):
        return "-"
    return f"[{_fmt(c['low_holm'])}, {_fmt(c['high_holm'])}] ({100 * c['level_holm']:.3g}%)"


def _summary(claim: Claim, record: dict[str, Any], scale: str) -> str:
    parts = []
    for c in record["comparisons"]:
        who = c["arm"] if c["baseline"] is None else f"{c['arm']} vs {c['baseline']}"
        where = f"{c['group']}: " if c["group"] else ""
        interval, method = _interval_parts(c)
        span = f"{interval} " if interval != "-" else ""
        text = (
            f"{where}{who} {claim.effect.statistic_name} {_fmt(c['estimate'])} {span}(n={c['n']}, {method})"
        )
        if "low_holm" in c:
            text += f", Holm-adjusted {_holm_span(c)}"
        if scale == "paper" and c["verdict"] == "inconclusive" and (c.get("replicates_needed") or 0) > 0:
            text += f"; MDE {_fmt(c['mde'])}, about {c['replicates_needed']} replicates needed"
        parts.append(text)
    if not record["comparisons"]:
        return "a table of measurements with no comparison to decide: numbers, no verdict"
    head = f"claim: {claim.effect.describe()}. "
    if record.get("precondition_failed"):
        if scale == "paper":
            head = f"inconclusive (precondition: {record['precondition_failed']}). " + head
        else:  # smoke scale decides nothing: say the test bed is not exercised at this size
            unmet = record["precondition_failed"]
            head = f"precondition not met at this scale ({unmet}); numbers only. " + head
    if record["holm"] and scale == "paper":
        k = sum(c["verdict"] == "passed" for c in record["comparisons"])
        head += f"{k} of {len(record['comparisons'])} comparisons passed after Holm correction. "
    flags = "; ".join(record["tuning_flags"])
    return head + "; ".join(parts) + (f". {flags}" if flags else "")
