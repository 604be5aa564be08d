"""MINTO's headline claims as statistical tests (``quadriga verify quadriga-minto``).

Both claims read the same runs of the ``cartpole-minto`` pipeline (three learners, two seeds
each per run): ``smoke`` runs it once with a short budget (seconds; checks that the numbers are
produced and finite), ``paper`` runs it under ``PAPER_ROOT_SEEDS`` root seeds, i.e. 10 seeds per
learner, with ``PAPER_FRAMES`` environment steps per learner (the early-learning phase, where a
faster target rule shows in the area under the curve; 10 x 3 runs fit in about 15 CPU-minutes),
the root seeds in parallel processes (``QUADRIGA_MINTO_WORKERS``, default: the CPU count).

Both are :class:`quadriga.claims.Claim` objects whose experiment returns one value per learner
seed (the core computes the interval and the verdict). The learners' seeds are derived from the
stage names, so arms are not paired: the intervals resample each arm on its own. The test bed
is unchanged (CartPole-v1), where min(target, online) rarely differs from the target.

Source: Hendawy et al. 2025, "Use the Online Network If You Can" (arXiv 2510.02590), sec. 4-5.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from quadriga.claims import Claim, Effect, Observations, Scale, Tuning

__all__ = [
    "METHODS",
    "PAPER_FRAMES",
    "PAPER_ROOT_SEEDS",
    "auc_claim",
    "collect",
    "overestimation_claim",
    "paper_overrides",
    "smoke_overrides",
]

PIPELINE = "cartpole-minto"
METHODS = ("dqn", "dqn-online", "minto")
SEEDS_PER_RUN = 2
PAPER_ROOT_SEEDS = (0, 1, 2, 3, 4)
PAPER_FRAMES = 8000
_CACHE: dict[tuple[str, str], dict[str, Any]] = {}


def smoke_overrides() -> list[str]:
    """``--set`` strings giving the smoke budget (1200 env steps per learner, short evaluations)."""
    out = []
    for method in METHODS:
        for s in range(SEEDS_PER_RUN):
            st = f"stage.{method}-s{s}"
            out += [f"{st}.total_frames=1200", f"{st}.learning_starts=300", f"{st}.eps_anneal_frames=600"]
    return [
        *out,
        "stage.episode-return.num_episodes=2",
        "stage.q-overestimation.num_episodes=1",
        "stage.q-overestimation.tail_steps=50",
        "stage.return-curve.num_points=20",
    ]


def paper_overrides() -> list[str]:
    """``--set`` strings giving the paper-scale budget (``PAPER_FRAMES`` env steps per learner)."""
    out = []
    for method in METHODS:
        for s in range(SEEDS_PER_RUN):
            st = f"stage.{method}-s{s}"
            out += [
                f"{st}.total_frames={PAPER_FRAMES}",
                f"{st}.learning_starts=500",
                f"{st}.eps_anneal_frames=3000",
            ]
    return out


def _one_run(seed: int, overrides: list[str], out: str) -> dict[str, Any]:
    from quadriga import api

    res = api.run(PIPELINE, seed=seed, overrides=overrides, out=out)
    curve = res.artifacts["return-curve"].values
    final = res.artifacts["episode-return"].values
    over = res.artifacts["q-overestimation"].values
    rows = []
    for method in METHODS:
        for s in range(SEEDS_PER_RUN):
            st = f"{method}-s{s}"
            rows.append(
                {
                    "root_seed": seed,
                    "stage": st,
                    "method": method,
                    "auc": curve[f"{st}/auc"],
                    "final_return": final[f"{st}/mean_return"],
                    "q_overestimation": over[f"{st}/q_overestimation"],
                }
            )
    figure = Path(out) / "return-curve-return_curve.png"
    return {"rows": rows, "figure": str(figure) if figure.exists() else ""}


def collect(scale: str, out_dir: Path) -> dict[str, Any]:
    """Run (once per process and scale) the pipelines behind both claims.

    Args:
        scale: ``"smoke"`` or ``"paper"``.
        out_dir: where the run directories go.

    Returns:
        ``{"rows": [{root_seed, stage, method, auc, final_return, q_overestimation}], "figure": path}``.
    """
    key = (scale, PIPELINE)
    if key in _CACHE:
        return _CACHE[key]
    runs_dir = Path(out_dir) / "runs"
    if scale == "smoke":
        outs = [_one_run(0, smoke_overrides(), str(runs_dir / "seed0"))]
    else:
        workers = max(
            1, min(len(PAPER_ROOT_SEEDS), int(os.environ.get("QUADRIGA_MINTO_WORKERS", os.cpu_count() or 1)))
        )
        with ProcessPoolExecutor(max_workers=workers) as pool:
            outs = list(
                pool.map(
                    _one_run,
                    PAPER_ROOT_SEEDS,
                    [paper_overrides()] * len(PAPER_ROOT_SEEDS),
                    [str(runs_dir / f"seed{s}") for s in PAPER_ROOT_SEEDS],
                )
            )
    result = {"rows": [r for o in outs for r in o["rows"]], "figure": outs[0]["figure"]}
    _CACHE[key] = result
    return result


def _by_method(rows: list[dict[str, Any]], key: str) -> dict[str, list[float]]:
    return {m: [r[key] for r in rows if r["method"] == m] for m in METHODS}


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| method | seeds | AUC (mean +- se) | final greedy return | Q overestimation |",
        "|---|---|---|---|---|",
    ]
    for m in METHODS:
        sel = [r for r in rows if r["method"] == m]

        def ms(k, sel=sel):
            v = [r[k] for r in sel]
            mu = sum(v) / len(v)
            se = math.sqrt(sum((x - mu) ** 2 for x in v) / max(len(v) - 1, 1) / len(v))
            return f"{mu:.1f} +- {se:.1f}"

        lines.append(f"| {m} | {len(sel)} | {ms('auc')} | {ms('final_return')} | {ms('q_overestimation')} |")
    return "\n".join(lines)


_SCALES = {
    "smoke": Scale(replicates=SEEDS_PER_RUN),
    "paper": Scale(replicates=SEEDS_PER_RUN * len(PAPER_ROOT_SEEDS)),
}
_TUNING = {
    "minto": Tuning(1, "CleanRL DQN defaults with the MINTO target"),
    "dqn": Tuning(1, "CleanRL DQN defaults"),
    "dqn-online": Tuning(1, "CleanRL DQN defaults, no target network (lr not re-tuned)"),
}


def _scale_name(scale: Scale) -> str:
    return "smoke" if scale.replicates == SEEDS_PER_RUN else "paper"


def _experiment(key: str) -> Any:
    def run(scale: Scale, out_dir: Path) -> Observations:
        data = collect(_scale_name(scale), out_dir)
        values = _by_method(data["rows"], key)
        numbers = {f"{m}/{key}_mean": sum(v) / len(v) for m, v in values.items()}
        figures = {"return_curve": data["figure"]} if data["figure"] else {}
        return Observations(values=values, numbers=numbers, table=_table(data["rows"]), figures=figures)

    return run


auc_claim = Claim(
    arms=("minto", "dqn"),
    experiment=_experiment("auc"),
    effect=Effect(
        quantity="area under the return curve on CartPole-v1 (step-normalised, return units), "
        "IQM(MINTO) - IQM(DQN) over seeds",
        statistic="iqm-difference",
        relation="greater",
        value=0.0,
        paired=False,
    ),
    scales=_SCALES,
    tuning=_TUNING,
)
"""MINTO's area under the return curve is at least DQN's (interquartile means over seeds)."""

overestimation_claim = Claim(
    arms=("minto", "dqn"),
    experiment=_experiment("q_overestimation"),
    effect=Effect(
        quantity="mean Q(s, a) - G(s) on greedy episodes (return units), MINTO - DQN",
        statistic="difference",
        relation="less",
        value=0.0,
        paired=False,
    ),
    scales=_SCALES,
    tuning=_TUNING,
)
"""MINTO's Q-overestimation is not above DQN's (the min with the online network only lowers targets)."""
