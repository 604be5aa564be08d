"""The paper's headline claims as statistical tests (``quadriga verify quadriga-value-classification``).

Test bed: the registered ``cartpole-value-classification`` pipeline on the noisy-reward task
(CartPole-v1 with zero-mean Gaussian reward noise of std 1 on every step) and its clean twin. The
three claims keep the same stages of it (``stages=STAGES``) and repeat the same ones, so they make one
pipeline and, inside ``verify``, read one run (the core's :func:`quadriga.claims.run_pipeline`: later
claims get the first one's run) of six learners: ``dqn-mse-noisy`` and ``dqn-hlgauss-noisy`` (dqn's
128-128 trunk), their 512-512 versions ``dqn-mse-noisy-wide`` and ``dqn-hlgauss-noisy-wide``, and the
clean-reward ``dqn-mse`` and ``dqn-hlgauss`` (128-128), with the two evaluators; the two-hot stages of
the pipeline are left out of the claim run (they are in the pipeline for ``quadriga run``), and the
evaluators' ``subject`` lists lose them.
Replicate i of the six learners shares its seed (environment, initialisation, exploration, replay
sampling): every comparison is paired. The observation is the normalised area under the training
return curve (``return-curve`` stage, metric ``auc``: the average return level over training, return
units; the noisy arms' training returns include the zero-mean noise).

- ``value-classification-noisy-auc``: IQM(AUC, HL-Gauss) - IQM(AUC, MSE) > 0 on the noisy task at
  dqn's width (interquartile means over replicates, paired). The paper claims the direction
  (classification beats regression) without a size. This is the gain under noise, not robustness to
  it: with clean rewards HL-Gauss may win too.
- ``value-classification-noise-interaction``: robustness to noise, isolated. Per replicate, the gap
  AUC(HL-Gauss) - AUC(MSE) with noisy rewards minus the same gap with clean rewards (128-128), mean
  of that paired difference > 0 (Student t interval over replicates).
- ``value-classification-width-gap``: the per-replicate gap AUC(HL-Gauss) - AUC(MSE) is larger with
  the 512-512 trunk than with the 128-128 one (mean of the paired difference of gaps; the paper
  claims classification scales better with width, without a size).

All read their observations with ``observe=`` callables: the noisy-AUC claim for its numbers (AUC
IQMs, gaps, the HL-Gauss clipping its precondition reads), the interaction and width claims because
their arms are per-replicate differences of two learners' AUCs (labels, not stages), which no
``metric`` names.

Precondition (all): the HL-Gauss support covers the TD targets (at most 5% of them clipped into
``[v_min, v_max]``); otherwise the cross-entropy arm trains on a distorted target.

``smoke`` runs 2 replicates with a 600-step budget (2 updates of batch 32 per 10 steps; numbers only,
status "ran"); ``paper`` runs
``PAPER_REPLICATES`` replicates of ``PAPER_FRAMES`` environment steps per learner.

Source: Farebrother et al. 2024, "Stop Regressing: Training Value Functions via Classification for
Scalable Deep RL" (ICML, arXiv 2403.03950): abstract and the noisy-target and network-scaling analyses.
"""

from __future__ import annotations

import math
from typing import Any

from quadriga.claims import (
    Claim,
    Effect,
    Observations,
    Plan,
    Precondition,
    Scale,
    Tuning,
    read_replicates,
    replicate_values,
)

__all__ = [
    "ARMS",
    "LR_GRID",
    "NOISY_ARMS",
    "PAPER_ANNEAL",
    "PAPER_FRAMES",
    "PAPER_REPLICATES",
    "PAPER_STARTS",
    "PIPELINE",
    "STAGES",
    "SUPPORT_COVERS",
    "noise_interaction_claim",
    "noisy_auc_claim",
    "read_auc",
    "width_gap_claim",
]

PIPELINE = "cartpole-value-classification"
METHOD, BASELINE = "dqn-hlgauss-noisy", "dqn-mse-noisy"
METHOD_WIDE, BASELINE_WIDE = "dqn-hlgauss-noisy-wide", "dqn-mse-noisy-wide"
#: the same two losses on the clean-reward task (the contrast of the noise-interaction claim)
METHOD_CLEAN, BASELINE_CLEAN = "dqn-hlgauss", "dqn-mse"
NOISY_ARMS = (METHOD, BASELINE, METHOD_WIDE, BASELINE_WIDE)
ARMS = (*NOISY_ARMS, METHOD_CLEAN, BASELINE_CLEAN)
EVALUATORS = ("return-curve", "episode-return")
#: the stages of the claim run (the two-hot learners are left out)
STAGES = (*ARMS, *EVALUATORS)
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
    "MSE 39.1 / 39.9 / 34.5, HL-Gauss 60.0 / 73.5 / 72.1); the wide and clean-reward arms use their loss's "
    "choice"
)
_TUNING = {arm: Tuning(len(LR_GRID), _RULE) for arm in ARMS}
_TUNING_GAPS = {"gap-wide": Tuning(len(LR_GRID), _RULE), "gap-base": Tuning(len(LR_GRID), _RULE)}
_TUNING_NOISE = {"gap-noisy": Tuning(len(LR_GRID), _RULE), "gap-clean": Tuning(len(LR_GRID), _RULE)}


def read_auc(result: Any, stage: str = "return-curve", metric: str = "auc") -> dict[str, list[float]]:
    """Per-replicate ``metric`` of ``stage`` for every arm: ``{arm: [value of replicate 0, 1, ...]}``.

    Raises:
        ConfigError: an arm of ``ARMS`` without values.
    """
    return read_replicates(result, stage, ARMS, metric)


def _clipping(result: Any, arm: str, replicates: int) -> float:
    arts = [result.artifacts.get(f"{arm}[{i}]") for i in range(replicates)]
    fr = [
        float(art.info["clipped_fraction"])
        for art in arts
        if art is not None and "clipped_fraction" in getattr(art, "info", {})
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
    n = len(auc[METHOD])
    for arm in (METHOD, METHOD_WIDE):
        numbers[f"{arm}/clipped_fraction"] = _clipping(result, arm, n)
    numbers[f"{METHOD_CLEAN}/clipped_fraction"] = _clipping(result, METHOD_CLEAN, n)
    numbers["hlgauss/clipped_fraction_max"] = max(
        numbers[f"{a}/clipped_fraction"] for a in (METHOD, METHOD_WIDE, METHOD_CLEAN)
    )
    final = result.results.get("stages", {}).get("episode-return", {}).get("values", {})
    for arm in ARMS:
        if f"{arm}[0]/mean_return" in final:
            vals = replicate_values(final, arm, "mean_return", stage="episode-return")
            numbers[f"{arm}/greedy_return_mean"] = math.fsum(vals) / len(vals)
    numbers["run"] = str(result.dir)
    return numbers


def _noisy_auc(result: Any) -> Observations:
    auc = read_auc(result)
    numbers = _numbers(result, auc)
    return Observations(values={METHOD: auc[METHOD], BASELINE: auc[BASELINE]}, numbers=numbers)


def _gaps(auc: dict[str, list[float]], method: str, baseline: str) -> list[float]:
    """Per-replicate AUC gap ``method - baseline`` (replicate i of both shares its seed)."""
    return [h - m for h, m in zip(auc[method], auc[baseline], strict=True)]


def _noise_interaction(result: Any) -> Observations:
    auc = read_auc(result)
    numbers = _numbers(result, auc)
    noisy, clean = _gaps(auc, METHOD, BASELINE), _gaps(auc, METHOD_CLEAN, BASELINE_CLEAN)
    numbers["gap-noisy/mean"] = math.fsum(noisy) / len(noisy)
    numbers["gap-clean/mean"] = math.fsum(clean) / len(clean)
    return Observations(values={"gap-noisy": noisy, "gap-clean": clean}, numbers=numbers)


def _width_gap(result: Any) -> Observations:
    auc = read_auc(result)
    wide, base = _gaps(auc, METHOD_WIDE, BASELINE_WIDE), _gaps(auc, METHOD, BASELINE)
    numbers = _numbers(result, auc)
    return Observations(values={"gap-wide": wide, "gap-base": base}, numbers=numbers)


#: the HL-Gauss support covers the TD targets of both HL-Gauss arms
SUPPORT_COVERS = Precondition.number(
    "hlgauss/clipped_fraction_max",
    "<=",
    0.05,
    "the HL-Gauss support covers the TD targets: at most 5% of them clipped into [v_min, v_max]",
)
_LIBRARIES = ("torch", "torchrl", "tensordict", "gymnasium")

noisy_auc_claim = Claim(
    pipeline=PIPELINE,
    stages=STAGES,
    arms=(METHOD, BASELINE),
    # the other four learners too: the three claims make one pipeline and share its run
    repeat_stages=tuple(a for a in ARMS if a not in (METHOD, BASELINE)),
    observe=_noisy_auc,
    effect=Effect(
        quantity="area under the training return curve on CartPole-v1 with Gaussian reward noise (std 1), "
        "return units: IQM(HL-Gauss cross-entropy DQN) - IQM(squared-error DQN) over replicates, 128-128 "
        "trunk (replicate i of both shares its seed)",
        statistic="iqm-difference",
        relation="greater",
        value=0.0,
        why_sign="the paper (abstract) claims cross-entropy value training beats MSE regression, "
        "notably with noisy targets, and states no smallest gain: the direction is the claim",
    ),
    plan=Plan(
        effect=10.0,
        pilot_replicates=3,
        sd=14.0,
        rationale="10 return units of AUC (about a fifth of MSE's AUC of 40-50 at this budget) is the "
        "smallest gain worth reporting; sd 14 from the former 5-replicate record (MDE 17.7): about 16 "
        "replicates needed, 5 declared (too few for 10)",
    ),
    preconditions=(SUPPORT_COVERS,),
    scales=_SCALES,
    tuning=_TUNING,
    libraries=_LIBRARIES,
)
"""Under noisy rewards, cross-entropy (HL-Gauss) value training gives a higher return AUC than MSE."""

width_gap_claim = Claim(
    pipeline=PIPELINE,
    stages=STAGES,
    # labels, not stages: differences of two learners' AUCs (HL-Gauss - MSE per width)
    arms=("gap-wide", "gap-base"),
    repeat_stages=ARMS,
    observe=_width_gap,
    effect=Effect(
        quantity="per-replicate AUC gap HL-Gauss - MSE on noisy-reward CartPole-v1 (return units), 512-512 "
        "trunk minus 128-128 trunk (mean of the paired difference; replicate i of all four arms shares "
        "its seed)",
        statistic="difference",
        relation="greater",
        value=0.0,
        why_sign="the paper (abstract, network-scaling analysis) claims classification losses scale "
        "better with network size than regression, without a size: the direction is the claim",
    ),
    plan=Plan(
        effect=10.0,
        pilot_replicates=3,
        sd=14.5,
        rationale="10 return units of extra gap at 512-512; sd 14.5 from the former 5-replicate record "
        "(MDE 18.2): about 17 replicates needed, 5 declared (too few)",
    ),
    preconditions=(SUPPORT_COVERS,),
    scales=_SCALES,
    tuning=_TUNING_GAPS,
    libraries=_LIBRARIES,
)
"""The HL-Gauss - MSE gap grows with network width (512-512 against 128-128)."""

noise_interaction_claim = Claim(
    pipeline=PIPELINE,
    stages=STAGES,
    # labels, not stages: differences of two learners' AUCs (HL-Gauss - MSE, noisy and clean)
    arms=("gap-noisy", "gap-clean"),
    repeat_stages=ARMS,
    observe=_noise_interaction,
    effect=Effect(
        quantity="interaction of loss and reward noise on CartPole-v1's training-return AUC (return units): "
        "[AUC(HL-Gauss) - AUC(MSE)] with Gaussian reward noise (std 1) minus the same gap with clean "
        "rewards, 128-128 trunk (mean of the paired difference; replicate i of all four arms shares "
        "its seed)",
        statistic="difference",
        relation="greater",
        value=0.0,
        why_sign="the paper (abstract, noisy-target analysis) claims classification is more robust to noisy "
        "targets than regression, i.e. its advantage grows with noise, without a size: the sign of the "
        "interaction is the claim",
    ),
    plan=Plan(
        effect=10.0,
        pilot_replicates=3,
        sd=20.0,
        rationale="10 return units of extra gap under noise, as for the other two claims; the interaction is "
        "a difference of two gaps with sd about 14 each, so sd about 20 (sqrt 2 x 14, to be replaced by "
        "the pilot's): about 27 replicates needed, 5 declared (too few for 10)",
    ),
    preconditions=(SUPPORT_COVERS,),
    scales=_SCALES,
    tuning=_TUNING_NOISE,
    libraries=_LIBRARIES,
)
"""HL-Gauss's AUC gain over MSE is larger with noisy rewards than with clean ones (the noise interaction)."""
