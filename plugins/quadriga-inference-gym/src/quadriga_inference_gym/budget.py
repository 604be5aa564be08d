"""Equal density-evaluation budgets for the benchmark's samplers, and the pipeline that uses them.

A budget is counted in density evaluations per chain: gradient evaluations for MALA, HMC and
SR-MALA, log-density evaluations for RWM (which uses no gradient). A sampler that spends ``cost``
evaluations per transition (1 for RWM and MALA, L for HMC with L leapfrog steps, 3 for SR-MALA
with the shifted drift) gets ``budget / cost`` transitions, a fifth of them burn-in.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = [
    "SAMPLERS",
    "TARGETS",
    "apply_budget",
    "benchmark_pipeline",
    "cost_per_transition",
    "sampler_lengths",
]

#: the targets of the benchmark: stage suffix -> registered target name
TARGETS = {
    "es": "ig-eight-schools",
    "funnel": "ig-neals-funnel",
    "banana": "ig-banana",
    "icg": "ig-ill-conditioned-gaussian",
    "bm": "ig-brownian-motion",
    "sv": "ig-stochastic-volatility",
    "irt": "ig-item-response-theory",
}
#: the samplers: the name the benchmark table gives each -> the registered sampler it wraps
SAMPLERS = {"rwm": "rwm", "mala": "mala", "hmc": "hmc", "srmala": "srmc"}


def cost_per_transition(sampler: dict[str, Any]) -> int:
    """Density evaluations per transition and chain of a sampler table (``use`` and its parameters).

    Raises:
        ValueError: a sampler the benchmark does not know.
    """
    use = sampler["use"]
    if use in ("rwm", "mala", "ula"):
        return 1
    if use == "hmc":
        return int(sampler.get("num_leapfrog_steps", 10))
    if use == "srmc":
        return 3  # s(y), s(y - alpha theta) at the proposal, s(x - alpha theta_new) (shifted drift)
    raise ValueError(f"no cost known for sampler '{use}'")


def sampler_lengths(sampler: dict[str, Any], budget: int) -> dict[str, int]:
    """``{burn_in, num_samples | num_steps}`` spending ``budget`` evaluations per chain (a fifth burn-in)."""
    transitions = max(budget // cost_per_transition(sampler), 10)
    burn_in = transitions // 5
    key = "num_steps" if sampler["use"] == "srmc" else "num_samples"
    return {"burn_in": burn_in, key: transitions - burn_in}


def apply_budget(
    data: dict[str, Any], *, budget: int, tuning: int, replicates: int | None = None
) -> dict[str, Any]:
    """A copy of a benchmark pipeline dict with every ``dual-averaging`` stage given these budgets.

    A stage's sampler is its ``sampler`` table, or each table of its ``matrix.sampler`` axis.

    Args:
        data: the pipeline as a dict (``read_source``).
        budget: sampling evaluations per chain (burn-in included).
        tuning: tuning evaluations per chain (the pilot).
        replicates: ``repeat`` of every sampler stage (left as it is when ``None``).
    """
    out = copy.deepcopy(data)
    for table in out.get("stage", {}).values():
        if table.get("use") != "dual-averaging":
            continue
        axis = table.get("matrix", {}).get("sampler")  # samplers x targets: one table per sampler
        for inner in axis if isinstance(axis, list) else [table["sampler"]]:
            inner.update(sampler_lengths(inner, budget))
        table["tuning_budget"] = tuning
        if replicates is not None:
            table["repeat"] = replicates
    return out


def benchmark_pipeline(registry: Any, *, srmc: bool | None = None) -> tuple[str, dict[str, Any]]:
    """``(name, pipeline dict)`` of the benchmark: with SR-MALA when quadriga-srmc is installed."""
    from quadriga.pipeline import read_source

    if srmc is None:
        srmc = any(s.name == "srmc" and s.kind == "sampler" for s in registry.components())
    name = "inference-gym-mcmc-srmc" if srmc else "inference-gym-mcmc"
    data, _ = read_source(name, registry)
    return name, data
