"""Paper claims of quadriga-fk-correctors as :class:`quadriga.claims.Claim` objects (protocol 3).

Each claim runs one registered pipeline once per scale with ``repeat = replicates`` on every
sampler stage, so replicate ``i`` of every sampler (and every K) shares its seed (common random
numbers: the arms are paired). Both claims on ``fkc-product-gmm`` read one run inside ``verify``
(the core's run sharing).

- ``PRODUCT_BEATS_NAIVE``: energy distance to the exact product of two 2-D mixtures at the largest
  K (4096), ratio of means fkc / fkc-naive < 1 (declarative: the arms are the K = 4096 points).
- ``ANNEAL_BEATS_NAIVE``: energy distance to the exact p^beta at K = 1024, ratio of means fkc /
  fkc-naive < 1 in each of five groups (2-D mixture at beta 2 and 0.5; 1-D double well at 0.5, 2, 3),
  Holm-adjusted; it passes only when every group passes.
- ``CONSISTENCY``: FKC's mode-weight error (TV over expert 1's modes) at K = 4096 is below the
  research note's pre-declared tolerance 0.05, on a test bed where the biased naive sampler is
  outside it (precondition). A negative slope of the energy distance against K, the former
  statistic, cannot tell a consistent sampler from a biased one whose error also falls at first.

Source: Skreta et al. 2025, "Feynman-Kac Correctors in Diffusion" (arXiv 2503.02819), sec. 5.1.
"""

from __future__ import annotations

import numpy as np

from quadriga.claims import Claim, Effect, Observations, Plan, Precondition, Scale, Tuning

__all__ = ["ANNEAL_BEATS_NAIVE", "ANNEAL_TASKS", "CONSISTENCY", "PRODUCT_BEATS_NAIVE"]

ANNEAL_TASKS = ("gmm-b2", "gmm-b05", "well-b05", "well-b2", "well-b3")
#: the K at which the product claims are stated (the paper scale's largest point)
K_CLAIM = 4096
_FKC, _NAIVE = f"fkc[num_particles={K_CLAIM}]", f"fkc-naive[num_particles={K_CLAIM}]"


#: smoke: 20 steps, K in {32, 64, 4096} (the claims read K = 4096), 200 reference draws, 2 replicates
#: (seconds; numbers only)
_PRODUCT_SMOKE = (
    *(f"stage.{s}.num_steps=20" for s in ("fkc", "fkc-naive")),
    *(f"stage.{s}.matrix.num_particles=[32, 64, {K_CLAIM}]" for s in ("fkc", "fkc-naive")),
    "stage.energy.num_reference_samples=200",
    "stage.mmd.num_reference_samples=200",
    "stage.modes.num_reference_samples=2000",
)
_ANNEAL_SMOKE = (
    *(f"stage.{a}-{t}.num_steps=20" for t in ANNEAL_TASKS for a in ("fkc", "naive")),
    *(f"stage.{a}-{t}.num_particles=64" for t in ANNEAL_TASKS for a in ("fkc", "naive")),
    *(f"stage.energy-{t}.num_reference_samples=200" for t in ANNEAL_TASKS),
    *(f"stage.modes-{t}.num_reference_samples=2000" for t in ANNEAL_TASKS),
)
#: paper: the replicates the plans need (``quadriga verify quadriga-fk-correctors --plan``, 2026-12-02,
#: pilots of 5): 119 for the consistency claim (mode-weight TV sd 0.038, effect 0.01; the product
#: claim, on the same run, needs 5) and 15 for the annealing claim (its widest group, gmm-b2, sd 0.48)
PRODUCT_REPLICATES, ANNEAL_REPLICATES = 120, 15
_PRODUCT_SCALES = {
    "smoke": Scale(replicates=2, overrides=_PRODUCT_SMOKE),
    "paper": Scale(replicates=PRODUCT_REPLICATES),
}
_ANNEAL_SCALES = {
    "smoke": Scale(replicates=2, overrides=_ANNEAL_SMOKE),
    "paper": Scale(replicates=ANNEAL_REPLICATES),
}
_TUNING = {
    "fkc": Tuning(
        settings_tried=1, rule="paper default: sigma = g (target-score SDE), resampling at ESS < K/2"
    ),
    "fkc-naive": Tuning(settings_tried=1, rule="no tunable parameter (the same SDE without weights)"),
}

_LIBRARIES = ("torch",)

PRODUCT_BEATS_NAIVE = Claim(
    pipeline="fkc-product-gmm",
    arms=(_FKC, _NAIVE),
    metric=("energy", "energy_distance"),
    effect=Effect(
        quantity=f"energy distance to the exact product of two 2-D mixtures at K = {K_CLAIM}, "
        "fkc / fkc-naive (ratio of means)",
        statistic="ratio",
        relation="less",
        value=1.0,
        why_sign="Sec. 5.1 claims FKC samples the product exactly while naive score mixing is biased, "
        "and gives no size of the gap in a distance, so the direction at the largest K is the claim.",
    ),
    scales=_PRODUCT_SCALES,
    plan=Plan(
        effect=0.5,
        pilot_replicates=5,
        sd=0.237,
        rationale="a ratio of 0.5 (FKC halves the distance) is the smallest gap worth reporting for an "
        "exactness claim; the paper-scale record measured 0.13",
    ),
    preconditions=(Precondition.varies(_NAIVE, "the naive baseline's distance varies across replicates"),),
    libraries=_LIBRARIES,
    tuning={_FKC: _TUNING["fkc"], _NAIVE: _TUNING["fkc-naive"]},
)

ANNEAL_BEATS_NAIVE = Claim(
    pipeline="fkc-anneal",
    arms=("fkc", "fkc-naive"),
    # the five targets are separate stage tables (fkc-<task>, naive-<task>, energy-<task>)
    groups={task: {"fkc": f"fkc-{task}", "fkc-naive": f"naive-{task}"} for task in ANNEAL_TASKS},
    metric=("energy-{group}", "energy_distance"),
    effect=Effect(
        quantity="energy distance to the exact p^beta at K = 1024, fkc / fkc-naive (ratio of means), "
        "per target",
        statistic="ratio",
        relation="less",
        value=1.0,
        why_sign="Sec. 5.1 claims FKC samples p^beta exactly while scaling the score is biased, with "
        "no size of the gap, so the direction for every beta is the claim.",
    ),
    scales=_ANNEAL_SCALES,
    plan=Plan(
        effect=0.5,
        pilot_replicates=5,
        sd=0.477,
        rationale="a ratio of 0.5 in every group (sd of the widest group, gmm-b2, in the pilot); the "
        "recorded groups ranged from 0.02 to 0.24 where FKC won",
    ),
    libraries=_LIBRARIES,
    tuning=_TUNING,
)

#: the research note's pre-declared tolerance on the mode masses (its measured residual bias <= 0.04)
MODE_TOLERANCE = 0.05


def _naive_outside_tolerance(obs: Observations) -> tuple[bool, str]:
    """The biased sampler misses the tolerance, so the test bed separates consistent from biased."""
    naive = obs.values.get(_NAIVE, [])
    if not naive:
        return False, "the naive sampler's mode-weight error was not read"
    m = float(np.mean(naive))
    return m > MODE_TOLERANCE, f"naive mode-weight TV at K = {K_CLAIM}: {m:.4g} (needs > {MODE_TOLERANCE})"


CONSISTENCY = Claim(
    pipeline="fkc-product-gmm",
    # fkc-naive is read for the precondition only (statistic "mean" tests arms[0])
    arms=(_FKC, _NAIVE),
    metric=("modes", "mode_weight_tv"),
    effect=Effect(
        quantity=f"fkc's mode-weight error (TV of the mode masses to the exact product) at K = {K_CLAIM}",
        statistic="mean",
        relation="less",
        value=MODE_TOLERANCE,
    ),
    scales=_PRODUCT_SCALES,
    plan=Plan(
        effect=0.01,
        pilot_replicates=5,
        sd=0.0385,
        rationale="a TV of 0.04, the residual bias the research note measured, detected below 0.05",
    ),
    preconditions=(
        Precondition(
            f"the naive sampler's mode-weight error at K = {K_CLAIM} exceeds the tolerance",
            _naive_outside_tolerance,
        ),
    ),
    libraries=_LIBRARIES,
    tuning={_FKC: _TUNING["fkc"]},
)
