"""The benchmark table as a ``quadriga verify`` entry: every installed sampler on every target, no claim.

This plugin reproduces no paper claim: it is a benchmark. ``inference-gym-table`` runs the
benchmark pipeline (with SR-MALA when quadriga-srmc is installed) at the scale's budgets and
replicates and returns the table of standardized errors and ESS per density evaluation with
their intervals, and no observation to decide on: the report carries numbers only.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from quadriga.claims import Claim, Effect, Observations, Scale, Tuning

from .budget import SAMPLERS, TARGETS, apply_budget, benchmark_pipeline

__all__ = ["TABLE", "benchmark_table", "config_name", "run_benchmark"]

_TARGET_NAMES = {
    "es": "eight schools (10)",
    "funnel": "Neal's funnel (10)",
    "banana": "banana (2)",
    "icg": "ill-cond. Gaussian (100)",
    "bm": "Brownian motion (30)",
    "sv": "stoch. volatility (103)",
    "irt": "item response (501)",
}


#: targets whose ground truth is analytic (no Monte Carlo standard error)
_EXACT = ("funnel", "banana", "icg")


def _cell(row: dict[str, Any], key: str, scale: float = 1.0, digits: int = 3) -> str:
    if key not in row:
        return "-"
    est, lo, hi = (row[key] * scale, row[f"{key}_low"] * scale, row[f"{key}_high"] * scale)
    fmt = f"{{:.{digits}g}}"
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return fmt.format(est)
    return f"{fmt.format(est)} [{fmt.format(lo)}, {fmt.format(hi)}]"


def _se_cell(row: dict[str, Any], key: str) -> str:
    if "gt_se_error_rms" in row:
        return _cell(row, "gt_se_error_rms")
    return "exact g.t." if key in _EXACT and row.get("n", 0) else "-"


def config_name(target: str, sampler: str) -> str:
    """The benchmark's stage for a target and a registered sampler, without the replicate index.

    ``config_name("es", "rwm") == "sample[inputs.target=es,sampler=rwm]"``: the ``sample`` stage's
    matrix point, written by the pipeline language (:func:`quadriga.expansion.point_label`).
    """
    from quadriga.expansion import point_label

    return f"sample[{point_label({'inputs.target': target, 'sampler': sampler})}]"


def benchmark_table(stages: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The markdown table (target x sampler) and its numbers from a run's ``results["stages"]``.

    Reads ``tables["configs"]`` of every ``error-<target>`` stage (``ground-truth-error``), one row
    per sampler (:func:`config_name`; numbers keyed ``"<sampler>-<target>/<metric>"``). Columns:
    RMS standardized error of the mean, RMS error in ground-truth standard errors, bulk ESS (min
    over coordinates) per 1000 density evaluations, mean acceptance and tuned step, each the mean
    over replicates with its 95% calibrated interval (:func:`quadriga.stats.interval`: Student t).

    Returns:
        ``(markdown, {"<config>/<metric>": value})``.
    """
    lines = [
        "| target (d) | sampler | std. error of mean, RMS | error in g.t. SEs, RMS | bulk ESS / 1000 evals "
        "| acceptance | step | diverged | n |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    numbers: dict[str, Any] = {}
    for key in TARGETS:
        stage = stages.get(f"error-{key}")
        if stage is None:
            continue
        summary = {r["subject"]: r for r in stage.get("tables", {}).get("summary", [])}
        configs = {r["config"]: r for r in stage.get("tables", {}).get("configs", [])}
        for sampler, use in SAMPLERS.items():
            config = config_name(key, use)
            if config not in configs:
                continue
            row = configs[config]
            members = [r for name, r in summary.items() if name.startswith(config + "[")]
            acc = [r["acceptance_rate"] for r in members if "acceptance_rate" in r]
            step = [r["step_size"] for r in members if "step_size" in r]
            lines.append(
                f"| {_TARGET_NAMES[key]} | {sampler} | {_cell(row, 'standardized_error_rms')} | "
                f"{_se_cell(row, key)} | "
                f"{_cell(row, 'ess_per_grad', 1000.0)} | "
                f"{(sum(acc) / len(acc)) if acc else float('nan'):.2f} | "
                f"{(sum(step) / len(step)) if step else float('nan'):.3g} | "
                f"{row.get('diverged', 0)} | {row.get('n', 0)} |"
            )
            for k in ("standardized_error_rms", "ess_per_grad", "diverged"):
                if k in row:
                    numbers[f"{sampler}-{key}/{k}"] = row[k]
    return "\n".join(lines), numbers


def run_benchmark(scale: Scale, out_dir: Path, registry: Any = None) -> Observations:
    """Run the benchmark pipeline at ``scale`` (``options``: ``budget``, ``tuning``) and tabulate it.

    Every sampler stage gets ``repeat = scale.replicates`` (replicate ``i`` of every sampler shares
    its seed), ``budget`` sampling and ``tuning`` pilot evaluations per chain.

    Returns:
        :class:`~quadriga.claims.Observations` with ``table`` and ``numbers`` and no values (nothing
        is decided).

    Raises:
        ConfigError: the run fails (its error, from the pipeline).
    """
    from quadriga import api
    from quadriga.errors import QuadrigaError
    from quadriga.registry import get_registry

    registry = registry or get_registry()
    name, data = benchmark_pipeline(registry)
    budget, tuning = int(scale.options.get("budget", 1500)), int(scale.options.get("tuning", 300))
    data = apply_budget(data, budget=budget, tuning=tuning, replicates=scale.replicates)
    result = api.run(data, seed=scale.seed, out=Path(out_dir) / "run", registry=registry)
    if result.status != "finished":
        raise QuadrigaError(f"the benchmark pipeline {name} did not finish: {result.error}")
    table, numbers = benchmark_table(result.results["stages"])
    head = (
        f"Pipeline `{name}`: {budget} density evaluations per chain (4 chains) for sampling, "
        f"{tuning} for the dual-averaging pilot, {scale.replicates} replicates per sampler and target "
        "(common seeds); intervals: 95% Student t over replicates (n per row).\n\n"
    )
    numbers.update(pipeline=name, budget=budget, tuning=tuning, replicates=scale.replicates)
    return Observations(values={}, table=head + table, numbers=numbers)


def _experiment(scale: Scale, out_dir: Path) -> Observations:
    return run_benchmark(scale, out_dir)


_RULE = "dual averaging (Hoffman & Gelman 2014, Alg. 5) on a pilot of the scale's tuning budget per chain"

#: the benchmark as a ``quadriga verify`` entry: a table, no claim, so no verdict to give
TABLE = Claim(
    arms=tuple(SAMPLERS),
    effect=Effect(
        quantity="none: the benchmark table (numbers only, no claim is tested)",
        statistic="mean",
        relation="within",
        value=0.0,
        tolerance=math.inf,
    ),
    # experiment=: the pipeline is assembled at run time from the installed samplers
    # (benchmark_pipeline) with the scale's budgets, not a registered pipeline; and it decides nothing.
    experiment=_experiment,
    libraries=("torch",),
    scales={
        "smoke": Scale(replicates=2, options={"budget": 100, "tuning": 50}),
        "paper": Scale(replicates=10, options={"budget": 1500, "tuning": 300}),
    },
    tuning={arm: Tuning(settings_tried=1, rule=_RULE) for arm in SAMPLERS},
)
