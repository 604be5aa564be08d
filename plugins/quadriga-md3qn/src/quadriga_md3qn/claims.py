"""MD3QN's headline claim as a statistical test (``quadriga verify quadriga-md3qn``).

Test bed: the registered ``md3qn-correlated-chain`` pipeline (quadriga-std's ``vector-reward-chain``:
two reward sources whose per-step noise has correlation 0.6; the optimal policy's joint return from
the start is Gaussian with correlation 0.6). Replicate i of ``md3qn`` and ``mmdqn-per-source`` (and
``dqn``, which is reported, not compared) shares its seed: every comparison is paired. The
observation is the ``return-distribution-error`` stage's ``correlation_error``: |corr(model) -
corr(Monte-Carlo)| of the two sources' returns at the start state under each learner's greedy policy
(2000 Monte-Carlo rollouts).

- ``md3qn-joint-correlation``: mean over replicates of the paired difference of correlation errors,
  MD3QN - per-source heads, is below -0.3. The per-source model's joint law is the product of its
  marginals (correlation 0, error about |rho| = 0.6); the paper's claim is that MD3QN models the
  joint law (notes: error < 0.1), so at least half of |rho| of the gap is the claimed effect.

Preconditions: both arms match the marginals of the Monte-Carlo reference (mean per-source W1 at most
0.2 of the return's standard deviation, averaged over replicates; otherwise neither learned the law
and the correlation is not comparable), and the reference returns are correlated (|rho| >= 0.3: the
test bed has dependence to model).

``smoke`` runs 2 replicates of 300 environment steps (numbers only, status "ran"); ``paper`` runs
``PAPER_REPLICATES`` replicates of ``PAPER_FRAMES`` steps.

Source: Zhang et al. 2021, "Distributional Reinforcement Learning for Multi-Dimensional Reward
Functions" (NeurIPS), abstract and Section 5.1 (joint return distribution against Monte-Carlo).
"""

from __future__ import annotations

import math
from typing import Any

from quadriga.claims import Claim, Effect, Observations, Plan, Precondition, Scale, Tuning, read_replicates

__all__ = ["ARMS", "PAPER_FRAMES", "PAPER_REPLICATES", "PIPELINE", "joint_correlation_claim", "observe"]

PIPELINE = "md3qn-correlated-chain"
ARMS = ("md3qn", "mmdqn-per-source")
LEARNERS = (*ARMS, "dqn")
STAGE = "return-distribution-error"
PAPER_FRAMES = 10_000
PAPER_REPLICATES = 5


def _budget(frames: int, starts: int, anneal: int, **extra: Any) -> tuple[str, ...]:
    settings = {"total_frames": frames, "learning_starts": starts, "eps_anneal_frames": anneal, **extra}
    return tuple(f"stage.{arm}.{k}={v}" for arm in LEARNERS for k, v in settings.items())


_SCALES = {
    "smoke": Scale(
        replicates=2,
        overrides=(
            *_budget(300, 100, 200, num_updates_per_batch=2, batch_size=16),
            "stage.md3qn.num_particles=8",
            "stage.mmdqn-per-source.num_particles=8",
            f"stage.{STAGE}.num_episodes=200",
            "stage.episode-return.num_episodes=2",
        ),
    ),
    "paper": Scale(replicates=PAPER_REPLICATES, overrides=_budget(PAPER_FRAMES, 500, PAPER_FRAMES // 2)),
}
_RULE = (
    "not tuned: both arms share one setting (Adam 1e-3, MLP 64-64, batch 32, 32 particles, kernel "
    "bandwidths 1..10, the budget), chosen once for the chain before any claim run"
)
_TUNING = {arm: Tuning(1, _RULE) for arm in ARMS}


def observe(result: Any) -> Observations:
    """Per-replicate correlation errors of both arms, and the marginal and dependence diagnostics.

    Returns:
        ``Observations`` with ``values = {"md3qn": [...], "mmdqn-per-source": [...]}`` (aligned by
        replicate) and ``numbers``: per arm the mean ``w1_mean``, ``w1_relative`` (W1 over the
        reference return's standard deviation), ``correlation_error`` and ``model_correlation``;
        ``w1_relative_max`` over the arms, ``reference_correlation`` (mean over replicates and arms)
        and the run directory.

    Raises:
        ConfigError: a stage or replicate value is missing.
    """
    values = read_replicates(result, STAGE, ARMS, "correlation_error")
    numbers: dict[str, Any] = {"correlation_error": dict(values), "run": str(result.dir)}
    refs = []
    for arm in ARMS:
        w1 = read_replicates(result, STAGE, (arm,), "w1_mean")[arm]
        sd = read_replicates(result, STAGE, (arm,), "reference_std")[arm]
        rc = read_replicates(result, STAGE, (arm,), "reference_correlation")[arm]
        mc = read_replicates(result, STAGE, (arm,), "model_correlation")[arm]
        refs += rc
        numbers[f"{arm}/w1_mean"] = math.fsum(w1) / len(w1)
        numbers[f"{arm}/w1_relative"] = math.fsum(w / s for w, s in zip(w1, sd, strict=True)) / len(w1)
        numbers[f"{arm}/correlation_error_mean"] = math.fsum(values[arm]) / len(values[arm])
        numbers[f"{arm}/model_correlation_mean"] = math.fsum(mc) / len(mc)
    numbers["w1_relative_max"] = max(numbers[f"{a}/w1_relative"] for a in ARMS)
    numbers["reference_correlation"] = math.fsum(refs) / len(refs)
    numbers["reference_correlation_abs"] = abs(numbers["reference_correlation"])
    return Observations(values=values, numbers=numbers)


MARGINALS = Precondition.number(
    "w1_relative_max",
    "<=",
    0.2,
    "both arms match the Monte-Carlo marginals: mean per-source W1 <= 0.2 x the return's std",
)
DEPENDENCE = Precondition.number(
    "reference_correlation_abs",
    ">=",
    0.3,
    "the test bed has dependence to model: |corr| of the Monte-Carlo returns >= 0.3",
)

joint_correlation_claim = Claim(
    pipeline=PIPELINE,
    arms=ARMS,
    observe=observe,
    effect=Effect(
        quantity="error |corr(model) - corr(Monte-Carlo)| of the two sources' returns at the start state "
        "(unitless), MD3QN - per-source MMD heads (paired by replicate)",
        statistic="difference",
        relation="less",
        value=-0.3,
    ),
    plan=Plan(
        effect=0.2,
        pilot_replicates=3,
        sd=0.1,
        rationale="the claimed gap is about |rho| = 0.6 (MD3QN < 0.1, per-source about 0.6); the margin "
        "-0.3 asks for half of it, and 0.2 beyond it is worth detecting; sd 0.1 assumed (a 4000-step "
        "pilot pair gave -0.45, not a spread): 5 replicates detect 0.2 at sd 0.1 with power about 0.9",
    ),
    preconditions=(MARGINALS, DEPENDENCE),
    scales=_SCALES,
    tuning=_TUNING,
    libraries=("torch", "torchrl", "tensordict", "gymnasium", "scipy"),
)
"""MD3QN's learned joint return law has a smaller correlation error than per-source heads'."""
