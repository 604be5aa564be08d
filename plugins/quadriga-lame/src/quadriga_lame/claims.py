"""LAME's headline claims as statistical tests (``quadriga verify quadriga-lame``).

Both claims run the registered pipeline ``lame-digits``: every replicate draws a fresh split of
load_digits and its streams (the ``digits`` task is repeated) and trains a fresh source MLP (the
``source`` stage is repeated with the arms), then scores the non-adapted source model, LAME over
``knn in {1, 3, 5}``, TENT and pseudo-labelling over ``learning_rate in {1e-4, 1e-3, 1e-2}`` on
every scenario (``scenario-accuracy``). An adaptation method's observation is its **worst case
over its grid** in that scenario (``worst_accuracy_<scenario>``): hyper-parameters cannot be
tuned on an unlabelled test stream, which is the paper's point. Arms are paired by replicate
(the same stream for every method).

1. ``lame-no-worse``: in every scenario, LAME's worst-case accuracy minus the non-adapted
   model's accuracy is above -0.01 (the paper: no catastrophic failure; "never below the
   non-adapted model by more than 1 point", the margin of the research notes). One comparison per
   scenario, Holm-adjusted.
2. ``lame-beats-tent-non-iid``: on the non-i.i.d. streams (class-sorted and Dirichlet-imbalanced
   batches of noise-corrupted images), LAME's worst-case accuracy exceeds TENT's worst case by at
   least 0.05. Precondition: TENT degrades there (its worst case is below the non-adapted model by
   more than 0.05 on the class-sorted stream); LAME's gain over the non-adapted model is
   reported beside it (numbers, not verdicts).

Source: Boudiaf, Mueller, Ben Ayed & Bertinetto 2022, "Parameter-free online test-time
adaptation", CVPR, sec. 4-5 (robustness across scenarios; non-i.i.d. streams).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quadriga.claims import Claim, Effect, Observations, Plan, Precondition, Scale, Tuning, read_replicates

__all__ = ["NON_IID", "NON_IID_SCENARIOS", "NO_WORSE", "SCENARIOS", "observe_no_worse", "observe_non_iid"]

SCENARIOS = ("iid", "noise", "blur", "rotation", "class-sorted", "dirichlet")
NON_IID_SCENARIOS = ("class-sorted", "dirichlet")
_STAGE = "accuracy"


def _metric(scenario: str) -> str:
    return f"worst_accuracy_{scenario.replace('-', '_')}"


def _scenarios(result: Any) -> tuple[str, ...]:
    """The scenarios the run scored (smoke scale scores fewer)."""
    stages = result.results.get("stages", {})
    stage = stages.get(_STAGE) or stages.get(f"{_STAGE}[0]", {})
    return tuple(stage.get("info", {}).get("scenarios", SCENARIOS))


def _read(
    result: Any, arms: tuple[str, ...], scenarios: tuple[str, ...]
) -> dict[str, dict[str, list[float]]]:
    return {sc: read_replicates(result, _STAGE, arms, _metric(sc)) for sc in scenarios}


def observe_no_worse(result: Any) -> Observations:
    """``{scenario: {"lame": worst-case accuracies, "source": accuracies}}`` per replicate."""
    groups = _read(result, ("lame", "source"), _present(result, SCENARIOS))
    rows = [
        f"| {sc} | {np.mean(g['source']):.4f} | {np.mean(g['lame']):.4f} | {len(g['lame'])} |"
        for sc, g in groups.items()
    ]
    table = "| scenario | non-adapted | LAME (worst k) | n |\n|---|---|---|---|\n" + "\n".join(rows)
    return Observations(values=groups, table=table)


def observe_non_iid(result: Any) -> Observations:
    """``{scenario: {"lame", "tent"}}`` on the non-i.i.d. streams, with the source's and PL's means."""
    scenarios = _present(result, NON_IID_SCENARIOS)
    full = _read(result, ("lame", "tent", "source", "pseudo_label"), scenarios)
    numbers: dict[str, float] = {}
    rows = []
    for sc, g in full.items():
        gain = np.asarray(g["lame"]) - np.asarray(g["source"])
        numbers[f"{sc}/lame_minus_source"] = float(gain.mean())
        numbers[f"{sc}/tent_minus_source"] = float(np.mean(np.asarray(g["tent"]) - np.asarray(g["source"])))
        for arm in ("source", "lame", "tent", "pseudo_label"):
            numbers[f"{sc}/{arm}"] = float(np.mean(g[arm]))
        rows.append(
            f"| {sc} | {np.mean(g['source']):.4f} | {np.mean(g['lame']):.4f} | {np.mean(g['tent']):.4f} | "
            f"{np.mean(g['pseudo_label']):.4f} | {len(gain)} |"
        )
    table = (
        "| stream | non-adapted | LAME (worst k) | TENT (worst lr) | pseudo-label (worst lr) | n |\n"
        "|---|---|---|---|---|---|\n" + "\n".join(rows)
    )
    values = {sc: {"lame": g["lame"], "tent": g["tent"]} for sc, g in full.items()}
    return Observations(values=values, numbers=numbers, table=table)


def _present(result: Any, wanted: tuple[str, ...]) -> tuple[str, ...]:
    scored = _scenarios(result)
    return tuple(sc for sc in wanted if sc in scored)


def _tent_degrades(obs: Any) -> tuple[bool, str]:
    drop = obs.numbers.get("class-sorted/tent_minus_source")
    if drop is None:
        return False, "the class-sorted stream was not scored"
    return drop < -0.05, f"TENT worst-case minus non-adapted on class-sorted: {drop:+.4f} (needs < -0.05)"


_TUNING = {
    "lame": Tuning(3, "worst case over knn in {1, 3, 5} (kNN affinity); no choice on the test stream"),
    "source": Tuning(1, "no hyper-parameter at test time (the same source model for every arm)"),
    "tent": Tuning(3, "worst case over Adam learning_rate in {1e-4, 1e-3, 1e-2}"),
    "pseudo_label": Tuning(3, "worst case over Adam learning_rate in {1e-4, 1e-3, 1e-2}, threshold 0.9"),
}
_SMOKE = (
    "stage.source.num_epochs=15",
    'task.digits.scenarios=["iid", "class-sorted"]',
)
_LIBRARIES = ("torch", "numpy", "scikit-learn", "scipy")

NO_WORSE = Claim(
    pipeline="lame-digits",
    arms=("lame", "source"),
    observe=observe_no_worse,
    repeat_tasks=("digits",),
    repeat_stages=("tent", "pseudo_label"),
    effect=Effect(
        quantity="accuracy, LAME worst case over k minus the non-adapted model (fraction; per scenario, "
        "paired by replicate)",
        statistic="difference",
        relation="greater",
        value=0.0,
        tolerance=0.01,
    ),
    plan=Plan(
        effect=0.01,
        pilot_replicates=5,
        rationale="detect a true difference of 0 (no loss) against the -0.01 boundary; paired sd of one "
        "replicate's difference about 0.01-0.03 on digits streams of ~700 images",
    ),
    scales={"smoke": Scale(replicates=2, overrides=_SMOKE), "paper": Scale(replicates=20)},
    tuning={k: _TUNING[k] for k in ("lame", "source")},
    libraries=_LIBRARIES,
)
"""LAME's worst case over k is never more than 1 point below the non-adapted model, in every scenario."""

NON_IID = Claim(
    pipeline="lame-digits",
    arms=("lame", "tent"),
    observe=observe_non_iid,
    repeat_tasks=("digits",),
    repeat_stages=("source", "pseudo_label"),
    effect=Effect(
        quantity="accuracy, LAME worst case over k minus TENT worst case over the learning rate (fraction; "
        "per non-i.i.d. stream, paired by replicate)",
        statistic="difference",
        relation="greater",
        value=0.05,
    ),
    plan=Plan(
        effect=0.05,
        pilot_replicates=5,
        rationale="the research notes expect 5-15 points where TENT collapses; 5 points beyond the 0.05 "
        "boundary is the smallest difference worth reporting",
    ),
    preconditions=(
        Precondition(
            "TENT degrades on the class-sorted stream: its worst case is > 0.05 below the non-adapted model",
            _tent_degrades,
        ),
    ),
    scales={
        "smoke": Scale(replicates=2, overrides=_SMOKE),
        "paper": Scale(replicates=20),
    },
    tuning={k: _TUNING[k] for k in ("lame", "tent")},
    libraries=_LIBRARIES,
)
"""On class-sorted and Dirichlet streams LAME beats TENT by at least 5 points, where TENT degrades."""
