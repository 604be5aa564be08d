"""Claims of Albergo, Boffi & Vanden-Eijnden 2023 checked on moons -> checkerboard.

Both run the registered pipeline ``si-moons-to-checkerboard`` (replicate i = one independently
trained interpolant and its samplers, all sharing the replicate's seeds) and read the energy
distance (units of x) of each sampler's 2000 transported points to the 2000 held-out checkerboard
points (stage ``energy``). The pipeline runs once per scale through :func:`run_pipeline`, which
repeats the learner, the samplers and the floor together (``repeat = replicates`` on each).

``si-bridging`` (exact bridging in finite time). The ODE-transported sample's energy distance to
held-out rho_1 points, divided by that of a fresh independent rho_1 sample of the same size (the
floor: what a perfect transport gives), is below ``BRIDGING_RATIO``, paired ratio of means with a
BCa bootstrap interval. The margin is declared, not fitted: a ratio of 3 means the learned transport
adds at most twice the two-sample noise of n = 2000 points.

``si-sde-beats-ode`` (likelihood control for stochastic dynamics, Sec. 2). With a drift trained
for only ``SHORT_STEPS`` Adam steps on a 2 x 32 network (an imperfect b^ and s^), the SDE with the
pre-declared eps = 0.5 (the authors' notebook default) has a lower energy distance than the
probability-flow ODE from the same model: paired difference of means < 0, BCa interval. The curve
over eps in {0, 0.1, 0.5, 1} is in the ``energy`` stage's values of the same run.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from quadriga.claims import Claim, Effect, Observations, Scale, Tuning

__all__ = [
    "BRIDGING",
    "BRIDGING_RATIO",
    "BRIDGING_REPLICATES",
    "SDE_BEATS_ODE",
    "SHORT_STEPS",
    "run_pipeline",
]

#: claimed bound on ED(transported) / ED(floor) (dimensionless).
BRIDGING_RATIO = 3.0
#: paper-scale replicates of ``si-bridging`` (independently trained models; the declared budget).
BRIDGING_REPLICATES = 5
#: training steps of the imperfect drift in ``si-sde-beats-ode``.
SHORT_STEPS = 300

_PIPELINE = "si-moons-to-checkerboard"
_METRIC = ("energy", "energy_distance")
_SAMPLERS = ("ode", "sde_01", "sde_05", "sde_1", "floor")
_EPS = {"ode": 0.0, "sde_01": 0.1, "sde_05": 0.5, "sde_1": 1.0}
_SMOKE = (
    "task.moons.num_train=2000",
    "task.checkerboard.num_train=2000",
    "task.moons.num_test=200",
    "task.checkerboard.num_test=200",
    "stage.si.num_steps=30",
    "stage.si.batch_size=128",
    "stage.si.hidden_sizes=[32]",
    "stage.floor.num_samples=200",
    *(f"stage.{s}.num_samples=200" for s in _SAMPLERS[:-1]),
    *(f"stage.{s}.num_steps=50" for s in _SAMPLERS[1:-1]),
)


def run_pipeline(scale: Scale, out_dir: Path, *, arms: tuple[str, ...]) -> Observations:
    """Run ``si-moons-to-checkerboard`` once with every sampler, the floor and the learner repeated.

    Replicate i of the learner, of each sampler and of the floor bind replicate-wise (sampler
    replicates share their seeds: paired arms). Returns the energy distance of each arm per
    replicate, and the curve over eps (mean and standard error per sampler) as the table.

    Args:
        scale: the claim's :class:`~quadriga.claims.Scale` (replicates, overrides, seed).
        out_dir: the claim's run directory.
        arms: the arms to return.

    Returns:
        ``Observations`` with ``values = {arm: [ED per replicate]}`` (units of x) and the eps curve.
    """
    from quadriga import api
    from quadriga.stats import mean_se

    n = scale.replicates
    repeats = (f"stage.si.repeat={n}", *(f"stage.{s}.repeat={n}" for s in _SAMPLERS))
    result = api.run(
        _PIPELINE, overrides=(*scale.overrides, *repeats), seed=scale.seed, out=Path(out_dir) / "run"
    )
    stage, metric = _METRIC
    vals = result.results["stages"][stage]["values"]
    per_arm = {s: [float(vals[f"{s}[{i}]/{metric}"]) for i in range(n)] for s in _SAMPLERS}
    rows = ["| sampler | eps | energy distance (mean) | standard error | n |", "|---|---|---|---|---|"]
    numbers = {}
    for s in _SAMPLERS:
        mean, se = mean_se(per_arm[s])
        numbers[f"{s}_mean"], numbers[f"{s}_se"] = mean, se
        rows.append(f"| {s} | {_EPS.get(s, '-')} | {mean:.5f} | {se:.5f} | {n} |")
    return Observations(values={a: per_arm[a] for a in arms}, numbers=numbers, table="\n".join(rows))


BRIDGING = Claim(
    arms=("ode", "floor"),
    experiment=partial(run_pipeline, arms=("ode", "floor")),
    effect=Effect(
        quantity="energy distance to held-out checkerboard points, ODE-transported moons / "
        "an independent checkerboard sample (ratio of means, n = 2000 points each)",
        statistic="ratio",
        relation="less",
        value=BRIDGING_RATIO,
    ),
    scales={
        "smoke": Scale(replicates=2, overrides=_SMOKE),
        # budget: 5 independently trained models at the full 3000-step training (about 5 CPU-min
        # each on one thread); the interval over 5 paired replicates is the test
        "paper": Scale(replicates=BRIDGING_REPLICATES),
    },
    tuning={
        "ode": Tuning(settings_tried=1, rule="authors' notebook defaults, shrunk for CPU"),
        "floor": Tuning(settings_tried=1, rule="no parameters"),
    },
)

SDE_BEATS_ODE = Claim(
    arms=("sde_05", "ode"),
    experiment=partial(run_pipeline, arms=("sde_05", "ode")),
    effect=Effect(
        quantity="energy distance to held-out checkerboard points, SDE (eps = 0.5) - ODE from the same "
        f"imperfect drift ({SHORT_STEPS} steps, 2 x 32 MLP), units of x",
        statistic="difference",
        relation="less",
        value=0.0,
    ),
    scales={
        "smoke": Scale(replicates=2, overrides=_SMOKE),
        "paper": Scale(
            replicates=10,
            overrides=(f"stage.si.num_steps={SHORT_STEPS}", "stage.si.hidden_sizes=[32, 32]"),
        ),
    },
    tuning={
        "sde_05": Tuning(
            settings_tried=1, rule="eps = 0.5, the authors' notebook default, declared before running"
        ),
        "ode": Tuning(settings_tried=1, rule="dopri5, rtol = atol = 1e-5"),
    },
)
