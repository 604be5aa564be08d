"""The paper's headline claims as statistical tests (``quadriga verify quadriga-value-classification``).

Test bed: the registered ``cartpole-value-classification`` pipeline on the noisy-reward task
(CartPole-v1 with zero-mean Gaussian reward noise of std 1 on every step). Both claims read one run
(:func:`shared_run`) of its four noisy-task learners: ``dqn-mse-noisy`` and ``dqn-hlgauss-noisy``
(dqn's 128-128 trunk) and their 512-512 versions ``dqn-mse-noisy-wide`` and
``dqn-hlgauss-noisy-wide``; the clean-reward and two-hot stages of the pipeline are left out of the
claim run (they are in the pipeline for ``quadriga run``). Replicate i of the four learners shares
its seed (environment, initialisation, exploration, replay sampling): every comparison is paired.
The observation is the normalised area under the training return curve (``return-curve`` stage,
metric ``auc``: the average return level over training, return units).

- ``value-classification-noisy-auc``: IQM(AUC, HL-Gauss) - IQM(AUC, MSE) > 0 at dqn's width
  (interquartile means over replicates; paired BCa bootstrap interval).
- ``value-classification-width-gap``: the per-replicate gap AUC(HL-Gauss) - AUC(MSE) is larger with
  the 512-512 trunk than with the 128-128 one (mean of the paired difference of gaps).

``smoke`` runs 2 replicates with a 600-step budget (2 updates of batch 32 per 10 steps; numbers only,
status "ran"); ``paper`` runs
``PAPER_REPLICATES`` replicates of ``PAPER_FRAMES`` environment steps per learner.

Source: Farebrother et al. 2024, "Stop Regressing: Training Value Functions via Classification for
Scalable Deep RL" (ICML, arXiv 2403.03950): abstract and the noisy-target and network-scaling analyses.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from quadriga.claims import Claim, Effect, Observations, Scale, Tuning
from quadriga.errors import ConfigError
from quadriga.stage_names import parse_stage_name

__all__ = [
    "ARMS",
    "LR_GRID",
    "PAPER_ANNEAL",
    "PAPER_FRAMES",
    "PAPER_REPLICATES",
    "PAPER_STARTS",
    "PIPELINE",
    "claim_run_source",
    "noisy_auc_claim",
    "read_auc",
    "shared_run",
    "width_gap_claim",
]

PIPELINE = "cartpole-value-classification"
METHOD, BASELINE = "dqn-hlgauss-noisy", "dqn-mse-noisy"
METHOD_WIDE, BASELINE_WIDE = "dqn-hlgauss-noisy-wide", "dqn-mse-noisy-wide"
ARMS = (METHOD, BASELINE, METHOD_WIDE, BASELINE_WIDE)
EVALUATORS = ("return-curve", "episode-return")
PAPER_FRAMES = 3_000
PAPER_STARTS = 500
PAPER_ANNEAL = 1_500
PAPER_REPLICATES = 5
#: the learning rates tried for both losses before the paper-scale run (see ``_TUNING``)
LR_GRID = (1e-3, 2.5e-3, 5e-3)


def _budget(frames: int, starts: int, anneal: int, **extra: Any) -> tuple[str, ...]:
    settings = {"total_frames": frames, "learning_starts": starts, "eps_anneal_frames": anneal, **extra}
    return tuple(f"stage.{arm}.{k}={v}" for arm in ARMS for k, v in settings.items())


_SCALES = {
    "smoke": Scale(
        replicates=2,
        overrides=(
            *_budget(600, 200, 300, num_updates_per_batch=2, batch_size=32),
            "stage.episode-return.num_episodes=1",
            "stage.return-curve.num_points=20",
        ),
    ),
    "paper": Scale(
        replicates=PAPER_REPLICATES,
        overrides=(*_budget(PAPER_FRAMES, PAPER_STARTS, PAPER_ANNEAL), "stage.episode-return.num_episodes=5"),
    ),
}

_RULE = (
    "Adam learning rate chosen from {1e-3, 2.5e-3, 5e-3} by the return AUC of 1 tuning seed (root seed "
    "1000, disjoint from the claim's) on the noisy task at the paper budget, 128-128 trunk, separately for "
    "each loss (python -m quadriga_value_classification.tuning); both chose 2.5e-3 (dqn's default; AUC "
    "MSE 39.1 / 39.9 / 34.5, HL-Gauss 60.0 / 73.5 / 72.1); the wide arm uses its loss's choice"
)
_TUNING = {arm: Tuning(len(LR_GRID), _RULE) for arm in ARMS}
_TUNING_GAPS = {"gap-wide": Tuning(len(LR_GRID), _RULE), "gap-base": Tuning(len(LR_GRID), _RULE)}


def claim_run_source(registry: Any = None) -> dict[str, Any]:
    """The pipeline of the claim run: ``PIPELINE`` with only the four noisy-task arms and the evaluators.

    Returns:
        The pipeline as a dict (TOML structure) with the learner stages ``ARMS`` and the evaluator
        stages ``EVALUATORS``, whose ``subject`` inputs are narrowed to those arms.

    Raises:
        ConfigError: the pipeline lacks one of ``ARMS``.
    """
    from quadriga.pipeline import read_source
    from quadriga.registry import get_registry

    data, file = read_source(PIPELINE, registry or get_registry())
    stages = data.get("stage", {})
    missing = [a for a in ARMS if a not in stages]
    if missing:
        raise ConfigError(
            f"pipeline '{PIPELINE}' lacks the stages {', '.join(missing)}.", file=file, key="arms"
        )
    kept = {name: stages[name] for name in (*ARMS, *EVALUATORS)}
    for name in EVALUATORS:
        inputs = dict(kept[name].get("inputs", {}))
        inputs["subject"] = [f"{a}[*]" for a in ARMS]
        kept[name] = {**kept[name], "inputs": inputs}
    data["stage"] = kept
    return data


def read_auc(result: Any, stage: str = "return-curve", metric: str = "auc") -> dict[str, list[float]]:
    """Per-replicate ``metric`` of ``stage`` for every arm: ``{arm: [value of replicate 0, 1, ...]}``.

    Raises:
        ConfigError: an arm of ``ARMS`` without values.
    """
    values = result.results.get("stages", {}).get(stage, {}).get("values", {})
    arms: dict[str, dict[int, float]] = {}
    for key, value in values.items():
        subject, _, name = key.rpartition("/")
        parsed = parse_stage_name(subject) if name == metric and subject else None
        if parsed is not None and parsed.replicate is not None:
            arms.setdefault(str(parsed.base), {})[parsed.replicate] = float(value)
    for arm in ARMS:
        if arm not in arms:
            raise ConfigError(f"stage '{stage}' has no values '{arm}[i]/{metric}'.", key="metric")
    return {a: [r[i] for i in sorted(r)] for a, r in arms.items()}


_RUNS: dict[tuple[Any, ...], tuple[Any, Path]] = {}


def shared_run(scale: Scale, out_dir: Path) -> tuple[Any, Path]:
    """The run of :func:`claim_run_source` at ``scale`` (``repeat = replicates`` on every arm), once.

    Args:
        scale: one of this module's scales.
        out_dir: the run directory is made under ``out_dir/run`` when it is first run.

    Returns:
        ``(result, out_dir of the claim that ran it)``; later calls with the same scale return the
        same run, so both claims are tested on the same learners.
    """
    from quadriga import api

    key = (scale.replicates, scale.overrides, scale.seed)
    if key not in _RUNS:
        data = claim_run_source()
        for arm in ARMS:
            data["stage"][arm]["repeat"] = scale.replicates
        result = api.run(data, overrides=scale.overrides, seed=scale.seed, out=Path(out_dir) / "run")
        _RUNS[key] = (result, Path(out_dir))
    return _RUNS[key]


def _is_replicate_of(key: str, arm: str, metric: str) -> bool:
    """Whether an evaluator value ``key`` is ``"<arm>[i]/<metric>"`` for some replicate ``i``."""
    subject, _, name = key.rpartition("/")
    if name != metric or not subject:
        return False
    parsed = parse_stage_name(subject)
    return parsed.replicate is not None and str(parsed.base) == arm


def _clipping(result: Any, arm: str) -> float:
    fr = [
        float(art.info["clipped_fraction"])
        for name, art in result.artifacts.items()
        if name.startswith(f"{arm}[") and "clipped_fraction" in getattr(art, "info", {})
    ]
    return math.fsum(fr) / len(fr) if fr else float("nan")


def _numbers(result: Any, auc: dict[str, list[float]]) -> dict[str, Any]:
    from quadriga.stats import bootstrap_ci, iqm, probability_of_improvement, stratified_bootstrap_ci

    numbers: dict[str, Any] = {"auc": {a: auc[a] for a in ARMS}}
    for arm in ARMS:
        ci = stratified_bootstrap_ci(auc[arm], rng=0)
        numbers[f"{arm}/auc_iqm"] = float(iqm(auc[arm]))
        numbers[f"{arm}/auc_iqm_ci"] = [ci.low, ci.high]
    for method, base, tag in ((METHOD, BASELINE, "base"), (METHOD_WIDE, BASELINE_WIDE, "wide")):
        gap = bootstrap_ci(auc[method], "difference", auc[base], paired=True, rng=0)
        numbers[f"gap-{tag}/auc_mean_difference"] = gap.estimate
        numbers[f"gap-{tag}/auc_mean_difference_ci"] = [gap.low, gap.high]
        numbers[f"gap-{tag}/probability_of_improvement"] = probability_of_improvement(auc[method], auc[base])
    for arm in (METHOD, METHOD_WIDE):
        numbers[f"{arm}/clipped_fraction"] = _clipping(result, arm)
    final = result.results.get("stages", {}).get("episode-return", {}).get("values", {})
    for arm in ARMS:
        vals = [float(v) for k, v in final.items() if _is_replicate_of(k, arm, "mean_return")]
        if vals:
            numbers[f"{arm}/greedy_return_mean"] = math.fsum(vals) / len(vals)
    return numbers


def _noisy_auc(scale: Scale, out_dir: Path) -> Observations:
    result, where = shared_run(scale, out_dir)
    auc = read_auc(result)
    numbers = _numbers(result, auc)
    numbers["run"] = str(where / "run")
    return Observations(values={METHOD: auc[METHOD], BASELINE: auc[BASELINE]}, numbers=numbers)


def _width_gap(scale: Scale, out_dir: Path) -> Observations:
    result, where = shared_run(scale, out_dir)
    auc = read_auc(result)
    wide = [h - m for h, m in zip(auc[METHOD_WIDE], auc[BASELINE_WIDE], strict=True)]
    base = [h - m for h, m in zip(auc[METHOD], auc[BASELINE], strict=True)]
    numbers = _numbers(result, auc)
    numbers["run"] = str(where / "run")
    return Observations(values={"gap-wide": wide, "gap-base": base}, numbers=numbers)


noisy_auc_claim = Claim(
    arms=(METHOD, BASELINE),
    experiment=_noisy_auc,
    effect=Effect(
        quantity="area under the training return curve on CartPole-v1 with Gaussian reward noise (std 1), "
        "return units: IQM(HL-Gauss cross-entropy DQN) - IQM(squared-error DQN) over replicates, 128-128 "
        "trunk (replicate i of both shares its seed)",
        statistic="iqm-difference",
        relation="greater",
        value=0.0,
    ),
    scales=_SCALES,
    tuning=_TUNING,
)
"""Under noisy rewards, cross-entropy (HL-Gauss) value training gives a higher return AUC than MSE."""

width_gap_claim = Claim(
    arms=("gap-wide", "gap-base"),
    experiment=_width_gap,
    effect=Effect(
        quantity="per-replicate AUC gap HL-Gauss - MSE on noisy-reward CartPole-v1 (return units), 512-512 "
        "trunk minus 128-128 trunk (mean of the paired difference; replicate i of all four arms shares "
        "its seed)",
        statistic="difference",
        relation="greater",
        value=0.0,
    ),
    scales=_SCALES,
    tuning=_TUNING_GAPS,
)
"""The HL-Gauss - MSE gap grows with network width (512-512 against 128-128)."""
