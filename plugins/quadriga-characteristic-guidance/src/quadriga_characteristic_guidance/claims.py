"""Characteristic guidance's headline claim as a statistical test.

Run it with ``quadriga verify quadriga-characteristic-guidance``.

Claim ``chg-closer-to-guided-law``: at large guidance the corrected sampler lands closer to the
guided law than classifier-free guidance (paper, sec. 6: CFG's linear combination "overlooks
nonlinear effects that become significant when guidance scale is large"; the paper's own numbers
are FID / IS on images and a magnet model, so the checkable form is a distance to a known law).

* Test bed: pipeline ``chg-gmm``: the 2-D 3-class mixture ``conditional-gaussian-mixture`` preset
  ``3-class-2d`` conditioned on class 0, exact noised scores; DDIM (eta = 0), cosine schedule, 25
  steps, 1000 samples per replicate; w in {3, 7} (the pipeline also runs w = 1, not tested).
  ``chg-ddim`` (Anderson memory 2, tol 1e-4, at most 50 iterations, the official code's one-basis
  projection with reg_ini = reg_range = 1) against ``ddim`` with ``guidance = w``: the same steps
  and NFE in sampler steps, the same x_T per replicate (both repeated: replicate i shares its seed).
* Yardstick: the exact guided law p_w = p(x | c)^{1 + w} p(x)^{-w} / Z_w, normalised on a 400 x 400
  grid. It is the law CFG aims at, **not** the proven t = 0 law of either process: CFG's score is the
  geometric mixture of the *noised* laws, and the paper shows that its corrected process obeys a
  Fokker-Planck equation, not that it ends at p_w. The claim is about distance to this yardstick.
* Quantity: histogram TV (20 x 20 bins over the grid) of the samples against p_w's exact bin masses,
  per replicate; statistic: ratio of means CHG / CFG, paired by replicate, one comparison per w
  (Holm family of 2). Reported, not tested: energy distance to 1000 draws of p_w, the off-support
  fraction (p_w below 1e-3 of its maximum) and w = 1.
* Effect: ratio < 0.8 (at least 20 % lower TV).
* Preconditions: the correction's iteration converged (at least 95 % of the (sample, step) solves at
  every claimed w, mean over replicates), else the sampler fell back to CFG and the test is
  inconclusive; and the correction is not negligible (RMS Dx / sigma over converged solves >= 0.01).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from quadriga.claims import Claim, Effect, Observations, Plan, Precondition, Scale, Tuning
from quadriga.stage_names import parse_stage_name

__all__ = ["ARMS", "CLAIMED_W", "closer_to_guided_law", "observe"]

ARMS = ("chg", "cfg")
#: the guidance weights the claim tests
CLAIMED_W = (3.0, 7.0)
#: the precondition's converged fraction
MIN_CONVERGED = 0.95
_METRICS = ("tv", "energy_distance", "off_support")


def _group(point: dict[str, Any]) -> str | None:
    w = point.get("guidance")
    return None if w is None else f"w={float(w):g}"


def observe(result: Any) -> Observations:
    """Per-replicate TV of both arms, one group per claimed w, and the diagnostics the preconditions read.

    Returns:
        :class:`~quadriga.claims.Observations` with ``values = {"w=3": {"chg": [...], "cfg": [...]}, ...}``,
        ``numbers``: per w and arm the replicate means of ``tv``, ``energy_distance``, ``off_support``;
        per w CHG's mean ``converged_fraction`` and ``correction_rms``; and a markdown table.
    """
    stages = result.results["stages"]
    per: dict[str, dict[str, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    for key, val in stages["distance"]["values"].items():
        stem, metric = key.rsplit("/", 1)
        name = parse_stage_name(stem)
        group = _group(dict(name.point))
        if name.source in ARMS and name.replicate is not None and group and metric in _METRICS:
            per[group][f"{name.source}/{metric}"][int(name.replicate)] = float(val)
    conv: dict[str, list[float]] = defaultdict(list)
    size: dict[str, list[float]] = defaultdict(list)
    for stem, summary in stages.items():
        name = parse_stage_name(stem)
        group = _group(dict(name.point))
        info = (summary or {}).get("info") or {}
        if name.source == "chg" and group and "chg_converged_fraction" in info:
            conv[group].append(float(info["chg_converged_fraction"]))
            size[group].append(float(info["chg_correction_rms"]))
    values: dict[str, dict[str, list[float]]] = {}
    numbers: dict[str, Any] = {}
    rows = ["| w | arm | TV | energy distance | off-support | n |", "|---|---|---|---|---|---|"]
    for group in sorted(per, key=lambda g: float(g.split("=")[1])):
        series = per[group]
        for arm in ARMS:
            cells = []
            for metric in _METRICS:
                reps = series.get(f"{arm}/{metric}", {})
                m = float(np.mean(list(reps.values()))) if reps else float("nan")
                numbers[f"{arm}/{group}/{metric}"] = m
                cells.append(f"{m:.4g}")
            n = len(series.get(f"{arm}/tv", {}))
            rows.append(f"| {group[2:]} | {arm} | " + " | ".join(cells) + f" | {n} |")
        if group in conv:
            numbers[f"chg/{group}/converged_fraction"] = float(np.mean(conv[group]))
            numbers[f"chg/{group}/correction_rms"] = float(np.mean(size[group]))
        if float(group.split("=")[1]) in CLAIMED_W:
            values[group] = {
                arm: [series[f"{arm}/tv"][i] for i in sorted(series[f"{arm}/tv"])] for arm in ARMS
            }
    return Observations(values=values, numbers=numbers, table="\n".join(rows))


def _converged(obs: Observations) -> tuple[bool, str]:
    fr = {w: obs.numbers.get(f"chg/w={w:g}/converged_fraction") for w in CLAIMED_W}
    if any(v is None for v in fr.values()):
        return False, "the correction's convergence record was not read"
    ok = all(float(v or 0.0) >= MIN_CONVERGED for v in fr.values())
    return ok, "converged fraction " + ", ".join(f"w={w:g}: {v:.4f}" for w, v in fr.items()) + (
        f" (needs >= {MIN_CONVERGED})"
    )


def _not_negligible(obs: Observations) -> tuple[bool, str]:
    sz = {w: obs.numbers.get(f"chg/w={w:g}/correction_rms", 0.0) for w in CLAIMED_W}
    ok = all(v >= 0.01 for v in sz.values())
    return ok, "RMS Dx / sigma " + ", ".join(f"w={w:g}: {v:.4g}" for w, v in sz.items()) + " (needs >= 0.01)"


_SMOKE = (
    "stage.chg.matrix.guidance=[3.0, 7.0]",
    "stage.cfg.matrix.guidance=[3.0, 7.0]",
    "stage.chg.num_samples=200",
    "stage.cfg.num_samples=200",
    "stage.chg.num_steps=10",
    "stage.cfg.num_steps=10",
    "stage.distance.num_reference_samples=200",
    "task.gmm.grid_size=100",
)
_PAPER = ("stage.chg.matrix.guidance=[3.0, 7.0]", "stage.cfg.matrix.guidance=[3.0, 7.0]")

closer_to_guided_law = Claim(
    pipeline="chg-gmm",
    arms=ARMS,
    observe=observe,
    effect=Effect(
        quantity="histogram TV (20 x 20 bins) to the exact guided law p(x|c)^(1+w) p(x)^(-w), CHG / CFG "
        "(ratio of means, paired by replicate), per w in {3, 7}",
        statistic="ratio",
        relation="less",
        value=0.8,
    ),
    plan=Plan(
        effect=0.15,
        pilot_replicates=3,
        rationale="a true ratio of 0.65 (0.15 below the 0.8 boundary): the pilot (seeds 0, 1; 1000 samples, "
        "25 steps) gave 0.62-0.64 at w = 3 and 1.0-1.03 at w = 7; per-replicate TV varied by about 0.01, "
        "so 5 replicates detect 0.15 with ample power at the Bonferroni level of 2",
    ),
    preconditions=(
        Precondition(
            f"the correction's iteration converged (>= {MIN_CONVERGED:.0%} of the solves at each w)",
            _converged,
        ),
        Precondition("the correction is not negligible (RMS Dx / sigma >= 0.01)", _not_negligible),
    ),
    tuning={
        "chg": Tuning(
            2,
            "projection 'cfg-direction' (the official code's default) over 'identity' (the paper's P = I) "
            "on the pilot (seed 0); the regularisation, memory, tolerance and iterations at the code's "
            "defaults",
        ),
        "cfg": Tuning(1, "no tunable parameter at a given w and step count"),
    },
    libraries=("torch",),
    scales={"smoke": Scale(replicates=2, overrides=_SMOKE), "paper": Scale(replicates=5, overrides=_PAPER)},
)
"""CHG at most 0.8 x CFG's histogram TV to the guided law at w = 3 and 7 (2-D 3-class mixture, DDIM)."""
