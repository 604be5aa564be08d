"""Power planned before the run (``quadriga verify NAME --plan``).

A pilot runs the claim at the paper scale's settings with the plan's few replicates, measures the
spread of each comparison (``sd = se * sqrt(n)`` of its statistic), and gives the replicates at
which the declared minimum detectable effect (``Plan.effect``) is detected with ``Plan.power``
by the one-sided test the verdict uses, at the level Holm gives the smallest p-value when the
claim makes several comparisons (Bonferroni's ``(1 - level) / k``, the conservative choice).

Source: Cohen 1988, ch. 2; Owen 1965 (noncentral t power): :func:`quadriga.stats.replicates_for_power`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from quadriga.claims.claim import Claim
from quadriga.claims.verdict import evaluate_claim

__all__ = ["pilot"]


def pilot(claim: Claim, out_dir: Path, registry: Any = None) -> dict[str, Any]:
    """Run the plan's pilot of ``claim`` and size its paper scale.

    Args:
        claim: a :class:`~quadriga.claims.Claim`; without a plan the pilot uses 5 replicates and
            reports the minimum detectable effect at the declared paper n instead of an n.
        out_dir: the claim's directory (the pilot's run goes to ``out_dir / "run"``).
        registry: defaults to the process-wide one.

    Returns:
        ``{pilot_replicates, declared_replicates, effect, power, level, comparisons: [{group, arm,
        baseline, estimate, se, sd, n_needed, mde_at_declared}], n_needed, enough, summary}``;
        ``n_needed`` is the largest over comparisons (``-1``: beyond reach or no spread measured),
        ``enough`` whether the declared paper replicates reach it.

    Raises:
        ConfigError, StageError: as :meth:`Claim.observations`.
    """
    plan = claim.plan
    reps = plan.pilot_replicates if plan is not None else 5
    declared = claim.scales["paper"].replicates
    obs = claim.observations("paper", Path(out_dir), registry, replicates=reps)
    record = evaluate_claim(claim, obs, "smoke")
    k = max(1, len(record["comparisons"]))
    level = 1 - (1 - claim.effect.level) / k  # Bonferroni: the level Holm uses for the smallest p
    power = plan.power if plan is not None else 0.8
    effect = plan.effect if plan is not None else None
    rows = [_sized(c, effect, declared, level, power) for c in record["comparisons"]]
    out: dict[str, Any] = {
        "pilot_replicates": reps,
        "declared_replicates": declared,
        "effect": plan.effect if plan is not None else None,
        "power": power,
        "level": level,
        "comparisons": rows,
    }
    if plan is None:
        worst = max((r["mde_at_declared"] for r in rows), default=math.nan)
        out.update(
            n_needed=None,
            enough=None,
            summary=(
                f"no plan declared; at the declared {declared} replicates the minimum detectable effect "
                f"is {worst:.4g} ({claim.effect.statistic_name}, power {power:g})"
            ),
        )
        return out
    needs = [r["n_needed"] for r in rows]
    n_needed = -1 if not needs or any(n is None or n < 0 for n in needs) else max(needs)
    out["n_needed"] = n_needed
    out["enough"] = n_needed > 0 and declared >= n_needed
    sds = ", ".join(f"{r['sd']:.3g}" for r in rows)
    if n_needed < 0:
        verdict = "the pilot measured no usable spread; raise Plan.pilot_replicates"
    else:
        word = "enough" if out["enough"] else "too few"
        verdict = f"{n_needed} replicates needed, {declared} declared: {word}"
    out["summary"] = (
        f"pilot of {reps} replicates: sd {sds}; for an effect of {plan.effect:g} beyond the boundary "
        f"at power {power:g} (one-sided level {(1 - level) / 2:.3g}): {verdict}"
    )
    return out


def _sized(
    comparison: dict[str, Any], effect: float | None, declared: int, level: float, power: float
) -> dict[str, Any]:
    """A pilot comparison's spread and what it implies: replicates needed, effect detectable at ``declared``.

    ``sd = se * sqrt(n)`` of the comparison's statistic; ``n_needed`` is ``None`` without a
    declared ``effect`` (Cohen 1988, ch. 2; Owen 1965: :func:`quadriga.stats.replicates_for_power`).
    """
    from quadriga.stats import min_detectable_effect, replicates_for_power

    c = comparison
    se, n = float(c.get("se", math.nan)), int(c.get("n") or 0)
    sd = se * math.sqrt(n) if math.isfinite(se) and n else math.nan
    needed = replicates_for_power(effect, sd, level=level, power=power) if effect is not None else None
    mde = min_detectable_effect(sd / math.sqrt(declared), level=level, power=power, df=declared - 1)
    return {
        "group": c.get("group", ""),
        "arm": c.get("arm"),
        "baseline": c.get("baseline"),
        "estimate": c.get("estimate"),
        "se": se,
        "sd": sd,
        "n_needed": needed,
        "mde_at_declared": mde if math.isfinite(mde) else math.nan,
    }
