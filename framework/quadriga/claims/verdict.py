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

#: p-values below this are printed as ``< 1e-04``: they come from a normal tail (:func:`_pvalues`),
#: which that far out says more about the normal approximation than about a handful of replicates.
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


def _pvalues(effect: Effect, est: float, se: float) -> tuple[float, float]:
    """One-sided normal p-values ``(p against the claim's null, p against the claim)``.

    ``z = (estimate - boundary) / se`` with ``se`` the standard deviation of the bootstrap
    estimates (or the interval's half-width over ``z_{(1+level)/2}`` when the experiment gave no
    standard error): a normal approximation, not a count of bootstrap resamples, so it is not
    bounded below by ``1 / (B + 1)``; :func:`format_p` prints tiny values as ``< 1e-04``.
    """
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

    se_from = "the standard deviation of the bootstrap estimates"
    if not math.isfinite(ci.se):
        se = (ci.high - ci.low) / (2 * norm.ppf(0.5 + ci.level / 2))
        ci = Interval(ci.estimate, ci.low, ci.high, ci.level, ci.method, ci.n, float(se))
        se_from = "the interval's half-width / z"
    if ci.se > 0:
        p_method = f"normal approximation: z = distance to the boundary / s.e., s.e. = {se_from}"
    else:
        p_method = "no spread, s.e. 0: p is 0 or 1 by the side of the estimate"
    verdict = _side(effect, ci.low, ci.high) if ci.n >= 2 else "inconclusive"
    p_claim, p_refute = _pvalues(effect, ci.estimate, ci.se)
    dist = _distance(effect, ci.estimate)
    out = ci.as_dict()
    out.update(
        verdict=verdict,
        p_method=p_method,
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
        at smoke scale and for a claim with no comparison (a benchmark table); otherwise passed
        (every comparison passed), refuted (any refuted) or inconclusive.

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
    if scale != "paper":  # smoke scale: numbers, never a verdict (the status says "ran")
        for c in comparisons:
            c["verdict"], c["replicates_needed"] = "ran", None
    numbers, also_table = _also_numbers(claim, dict(obs.numbers), rng) if claim.also else (obs.numbers, "")
    verdicts = [c["verdict"] for c in comparisons]
    if scale != "paper" or not comparisons:  # no comparison (a benchmark table): nothing to decide
        status = "ran"
    elif all(v == "passed" for v in verdicts):
        status = "passed"
    elif any(v == "refuted" for v in verdicts):
        status = "refuted"
    else:
        status = "inconclusive"
    record = {
        "status": status,
        "effect": {
            **attrs.asdict(claim.effect),
            "claimed": claim.effect.describe(),
            "statistic_name": claim.effect.statistic_name,
        },
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
    note = small_sample_note(2) if n == 2 else ""  # n = 1 with an interval: an exact value, say nothing
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
    if scale == "paper":
        cells.update(
            {
                "verdict": str(c.get("verdict", "-")),
                "p (claim)": format_p(c.get("p_claim_holm", c.get("p_claim"))),
                "MDE": _fmt(c["mde"]) if _finite(c.get("mde")) else "-",
                "replicates needed": str(c.get("replicates_needed") or "-"),
            }
        )
    return cells


def _span(ci: Any) -> str:
    return f"[{_fmt(ci.low)}, {_fmt(ci.high)}]"


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
        if scale == "paper" and c["verdict"] == "inconclusive":
            text += f"; MDE {_fmt(c['mde'])}, about {c['replicates_needed']} replicates needed"
        parts.append(text)
    if not record["comparisons"]:
        return "a table of measurements with no comparison to decide: numbers, no verdict"
    head = f"claim: {claim.effect.describe()}. "
    if record["holm"] and scale == "paper":
        k = sum(c["verdict"] == "passed" for c in record["comparisons"])
        head += f"{k} of {len(record['comparisons'])} comparisons passed after Holm correction. "
    flags = "; ".join(record["tuning_flags"])
    return head + "; ".join(parts) + (f". {flags}" if flags else "")
