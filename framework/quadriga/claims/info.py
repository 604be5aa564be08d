"""What ``quadriga info CLAIM`` shows: a claim's effect, plan, preconditions, replicates and last verdict."""

from __future__ import annotations

from typing import Any

import attrs

from quadriga.claims import record as _record
from quadriga.claims.claim import Claim
from quadriga.claims.fingerprint import stale_reason
from quadriga.claims.verdict import _fmt

__all__ = ["claim_facts", "claim_lines"]


def claim_facts(registry: Any, spec: Any) -> dict[str, Any]:
    """What ``quadriga info CLAIM`` shows: the effect, arms, replicates per scale and the last verdict.

    Args:
        registry: the :class:`~quadriga.registry.Registry` (the claim's module is imported).
        spec: the claim's registry entry (``registry.claims()``).

    Returns:
        ``{name, distribution, summary, paper, effect: {quantity, statistic, relation, value,
        tolerance, claimed, level, method, resamples, computed_by_experiment} | None, arms,
        pipeline, replicates: {scale: n}, rows (where a ``rows`` claim reads its replicates, else
        ""), last_verdict: {status, estimate, low, high, n, method,
        comparisons, date, version} | None,
        problem}``; ``effect`` is ``None`` and ``problem`` the error when the claim could not be
        loaded (or is not a :class:`Claim`).
    """
    facts: dict[str, Any] = {
        "name": spec.name,
        "distribution": spec.distribution,
        "summary": spec.summary,
        "paper": spec.paper,
        "effect": None,
        "arms": [],
        "pipeline": None,
        "replicates": {},
        "last_verdict": _record.last_verdict(spec),
        "problem": "",
    }
    try:
        target = registry.load_claim(spec)
    except Exception as exc:  # info must still print what the registry knows
        facts["problem"] = f"{type(exc).__name__}: {exc}"
        return facts
    if not isinstance(target, Claim):
        facts["problem"] = f"{spec.target} is a {type(target).__name__}, not a quadriga.claims.Claim"
        return facts
    facts["effect"] = _effect_facts(target.effect)
    facts["arms"] = list(target.arms)
    facts["pipeline"] = target.pipeline or "an experiment function (no registered pipeline)"
    facts["replicates"] = {name: sc.replicates for name, sc in target.scales.items()}
    facts["rows"] = target.rows.describe() if target.rows is not None else ""
    facts["plan"] = None if target.plan is None else attrs.asdict(target.plan)
    facts["preconditions"] = [p.description for p in target.preconditions]
    facts["fragility"] = {k: list(v) for k, v in target.fragility.items()}
    facts["group_by"], facts["across"] = list(target.group_by), target.across
    facts["groups"] = {g: dict(stages) for g, stages in target.groups.items()}
    facts["stale"] = stale_reason(spec)
    return facts


def _effect_facts(e: Any) -> dict[str, Any]:
    """The ``effect`` entry of :func:`claim_facts` for an :class:`~quadriga.claims.Effect`."""
    return {
        "quantity": e.quantity,
        "statistic": e.statistic_name,
        "relation": e.relation,
        "value": e.value,
        "tolerance": e.tolerance,
        "claimed": e.describe(),
        "level": e.level,
        "method": e.method,
        "resamples": e.resamples,
        "computed_by_experiment": e.statistic == "interval",
        "why_sign": e.why_sign,
    }


def claim_lines(facts: dict[str, Any]) -> list[str]:
    """:func:`claim_facts` as plain lines (no markup) for the terminal."""
    lines = [f"claim {facts['name']} from {facts['distribution']}: {facts['summary']}"]
    lines.append(f"source: {facts['paper']}")
    if facts["effect"] is not None:
        lines += _effect_lines(facts)
    else:
        lines.append(f"effect: unknown, the claim could not be loaded ({facts['problem']})")
    lines += _verdict_lines(facts)
    lines.append(f"run it: quadriga verify {facts['name']} [--scale paper]")
    return lines


def _effect_lines(facts: dict[str, Any]) -> list[str]:
    """The lines of a loaded claim's effect, arms, replicates, plan, preconditions and fragility."""
    lines: list[str] = []
    e = facts["effect"]
    lines.append(f"effect: {e['quantity']}")
    method = "chosen from the statistic and n" if e["method"] == "auto" else e["method"]
    how = (
        "the interval is computed by the claim's experiment"
        if e["computed_by_experiment"]
        else f"{e['level']:.0%} interval, method {method}"
    )
    lines.append(
        f"  claimed: {e['claimed']} (statistic {e['statistic']}, relation {e['relation']}, "
        f"value {e['value']:g}, tolerance {e['tolerance']:g}); {how}"
    )
    arms = facts["arms"]
    base = f"; baselines: {', '.join(arms[1:])}" if len(arms) > 1 else ""
    lines.append(f"arms: {arms[0]} (the method){base}; pipeline: {facts['pipeline']}")
    if e.get("why_sign"):
        lines.append(f"  a sign-only rule, because: {e['why_sign']}")
    reps = facts["replicates"]
    lines.append(
        "replicates per arm: "
        + ", ".join(f"{k} {v}" for k, v in reps.items())
        + " (smoke: numbers only; paper: a verdict)"
    )
    if facts.get("rows"):
        lines.append(f"  replicates are {facts['rows']}")
    plan = facts.get("plan")
    if plan:
        lines.append(
            f"plan: detect {plan['effect']:g} beyond the boundary with power {plan['power']:g} "
            f"(pilot {plan['pilot_replicates']} replicates: quadriga verify {facts['name']} --plan)"
        )
    else:
        lines.append("plan: none declared")
    for pre in facts.get("preconditions") or []:
        lines.append(f"precondition: {pre}")
    if facts.get("fragility"):
        settings = "; ".join(f"{k} in {v}" for k, v in facts["fragility"].items())
        lines.append(f"fragility: {settings} (quadriga verify {facts['name']} --fragility)")
    return lines


def _duration(seconds: float) -> str:
    """``"40 s"``, ``"7 min"`` or ``"1.5 h"``: a recorded run's wall time, rounded for reading."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _verdict_lines(facts: dict[str, Any]) -> list[str]:
    """The lines of the claim's last recorded verdict (per comparison when several), or how to record one."""
    lines: list[str] = []
    last = facts["last_verdict"]
    if last:
        est = last.get("estimate")
        span = (
            f": estimate {_fmt(est)} [{_fmt(last.get('low'))}, {_fmt(last.get('high'))}] "
            f"(n = {last.get('n')}, {last.get('method')})"
            if isinstance(est, (int, float))
            else ""
        )
        comps = [c for c in last.get("comparisons") or [] if isinstance(c, dict)]
        if len(comps) > 1:
            span = ", per comparison:"
        took = last.get("seconds")
        took_text = f", a {_duration(took)} paper run" if isinstance(took, (int, float)) else ""
        lines.append(
            f"last verdict: {last.get('status')} on {last.get('date')} (v{last.get('version')}"
            f"{took_text}){span}"
        )
        for c in comps if len(comps) > 1 else []:
            who = c.get("arm") if not c.get("baseline") else f"{c.get('arm')} vs {c.get('baseline')}"
            where = f"{c['group']}: " if c.get("group") else ""
            lines.append(
                f"  {where}{who} {_fmt(c.get('estimate'))} [{_fmt(c.get('low'))}, {_fmt(c.get('high'))}] "
                f"(n = {c.get('n')}) {c.get('verdict')}"
            )
        if facts.get("stale"):  # after the comparisons, which belong to the line above them
            rerun = f"quadriga verify {facts['name']} --scale paper --record"
            lines.append(f"  stale: {facts['stale']} ({rerun})")
    else:
        lines.append(
            f"last verdict: not recorded (`quadriga verify {facts['name']} --scale paper --record` keeps one)"
        )
    return lines
