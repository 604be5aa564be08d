"""PFGM++'s robustness claim as a statistical test (``quadriga verify quadriga-pfgmpp``).

Claim ``pfgmpp-robust-to-field-error``: with the same error injected into the field, sample quality
degrades less at small D than in the diffusion limit D -> inf (Xu et al. 2023, sec. 5: "models with
smaller D exhibit improved robustness against modeling errors"; their error is a perturbation of the
trained network, here it is controlled exactly).

* Test bed: pipeline ``pfgmpp-robustness``: a random 8-D Gaussian mixture (4 components, std 0.5,
  means on the sphere of radius 6; a fresh mixture per replicate) with its exact PFGM++ field at every D
  (quadrature error below 1e-8 on the kernel's law, tested); EDM grid, 18 sigma points (NFE 35),
  sigma in [0.002, 80], 2000 samples.
* Injected error: N(0, (epsilon sigma)^2 I) added to every denoiser output, epsilon = 1, the same
  noise xi and prior z at every D of a replicate (paired).
* Quantity: degradation delta_D = E(D, epsilon = 1) - E(D, 0) of the energy distance E (V-statistic,
  std ``energy-distance``) to 2000 exact draws of the mixture (the same draws for every arm of a
  replicate), per replicate.
* Effect: ratio of mean degradations delta_8 / delta_inf < 0.5 (at least halved), Fieller interval on
  paired replicates. The other D (1, 64, 512) are reported to show the trade-off as D varies.
* Preconditions: the error degrades the diffusion limit (mean delta_inf >= 0.01, about the energy
  distance's own floor at this n, so the mechanism is exercised); without error the arms agree
  (|E(8, 0) - E(inf, 0)| <= 0.005 in the mean: the exact field is exact at every D, so a gap would be a
  discretization artefact, not robustness).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from quadriga.claims import Claim, Effect, Observations, Plan, Precondition, Scale, Tuning
from quadriga.stage_names import parse_stage_name

__all__ = ["ARMS", "CLAIMED_ERROR", "observe_degradation", "robust_to_field_error"]

ARMS = ("pfgmpp[aug_dim=8.0]", "pfgmpp[aug_dim=inf]")
_ARM_OF = {"D=8": ARMS[0], "D=inf": ARMS[1]}
#: the injected field error the claim tests
CLAIMED_ERROR = 1.0


def _label(aug_dim: float) -> str:
    return "D=inf" if math.isinf(aug_dim) else f"D={int(aug_dim)}"


def observe_degradation(result: Any) -> Observations:
    """Per-replicate degradation delta_D = E(D, epsilon) - E(D, 0) of every D, from the ``distance`` stage.

    Returns:
        :class:`~quadriga.claims.Observations` with ``values = {"eps=1": {ARMS[0]: [...], ARMS[1]: [...]}}``
        (the claimed arms), ``numbers``: replicate means ``D=../E0``, ``D=../degradation`` for every D,
        and a markdown table of them.
    """
    # "distance" or, with a repeated task, "distance[i]" (mixture i; only replicate i's samples are its own)
    values: list[tuple[int | None, str, Any]] = []
    for stage, res in result.results["stages"].items():
        stage_name = parse_stage_name(stage)
        if stage_name.source == "distance":
            values += [(stage_name.replicate, k, v) for k, v in res["values"].items()]
    energy: dict[tuple[float, float], dict[int, float]] = defaultdict(dict)
    for rep, key, val in values:
        stem, metric = key.rsplit("/", 1)
        if metric != "energy_distance":
            continue
        name = parse_stage_name(stem)
        if name.source != "pfgmpp" or name.replicate is None or rep not in (None, name.replicate):
            continue
        point = dict(name.point)
        energy[(float(point["aug_dim"]), float(point["field_error"]))][int(name.replicate)] = float(val)
    dims = sorted({d for d, _ in energy})
    errors = sorted({e for _, e in energy if e > 0})
    numbers: dict[str, Any] = {}
    groups: dict[str, dict[str, list[float]]] = {}
    rows = ["| D | E (eps = 0) | " + " | ".join(f"degradation (eps = {e:g})" for e in errors) + " | n |"]
    rows.append("|---" * (len(errors) + 3) + "|")
    for d in dims:
        base = energy[(d, 0.0)]
        numbers[f"{_label(d)}/E0"] = float(np.mean(list(base.values())))
        cells = []
        for e in errors:
            hit = energy[(d, e)]
            deltas = [hit[i] - base[i] for i in sorted(hit) if i in base]
            numbers[f"{_label(d)}/eps={e:g}/degradation"] = float(np.mean(deltas))
            cells.append(f"{np.mean(deltas):.4g}")
            if e == CLAIMED_ERROR and _label(d) in _ARM_OF:
                groups.setdefault(f"eps={e:g}", {})[_ARM_OF[_label(d)]] = deltas
        rows.append(
            f"| {_label(d)[2:]} | {numbers[f'{_label(d)}/E0']:.4g} | "
            + " | ".join(cells)
            + f" | {len(base)} |"
        )
    if "D=8/E0" in numbers and "D=inf/E0" in numbers:
        numbers["E0_gap_8_inf"] = abs(numbers["D=8/E0"] - numbers["D=inf/E0"])
    return Observations(values=groups, numbers=numbers, table="\n".join(rows))


_EFFECT = Effect(
    quantity="energy-distance degradation under field error epsilon = 1, D = 8 / D = inf "
    "(ratio of means, paired)",
    statistic="ratio",
    relation="less",
    value=0.5,
)
_PLAN = Plan(
    effect=0.2,
    pilot_replicates=3,
    rationale="a 2-replicate pilot (fixed mixtures, seeds 100, 101) gave degradations 0.0053 / 0.0113 "
    "at D = 8 and 0.0367 / 0.0349 at D = inf, a ratio near 0.25; a true ratio of 0.3 (0.2 below the 0.5 "
    "boundary) with per-replicate ratios spread by about 0.15 is detected with ample power at 8 replicates",
)
_TUNING = {
    ARMS[0]: Tuning(
        1, "no tuning: the exact field, EDM's grid and sigma range as published, one D from the sweep"
    ),
    ARMS[1]: Tuning(1, "no tuning: EDM's published sampler (Heun, 18 points, rho = 7, sigma in [0.002, 80])"),
}
_PRECONDITIONS = (
    Precondition.number(
        f"D=inf/eps={CLAIMED_ERROR:g}/degradation",
        ">=",
        0.01,
        "the injected error degrades the diffusion limit (above the energy distance's floor at n = 2000)",
    ),
    Precondition.number(
        "E0_gap_8_inf",
        "<=",
        0.005,
        "without error D = 8 and D = inf give the same quality (the exact field is exact at every D)",
    ),
)
_SMOKE = (
    "stage.pfgmpp.num_samples=200",
    "stage.pfgmpp.num_steps=8",
    "stage.pfgmpp.quadrature_nodes=128",
    "stage.distance.num_reference_samples=200",
)

robust_to_field_error = Claim(
    pipeline="pfgmpp-robustness",
    arms=ARMS,
    repeat_stages=("pfgmpp",),
    repeat_tasks=("gmm",),
    observe=observe_degradation,
    effect=_EFFECT,
    plan=_PLAN,
    preconditions=_PRECONDITIONS,
    tuning=_TUNING,
    libraries=("torch", "numpy", "scipy"),
    scales={"smoke": Scale(replicates=2, overrides=_SMOKE), "paper": Scale(replicates=8)},
)
"""Degradation under field error 1 at D = 8 at most half of D = inf's (8-D mixtures, exact field)."""
