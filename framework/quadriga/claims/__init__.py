"""Paper claims as statistical tests, and ``quadriga verify``.

A plugin declares each headline claim of its paper as a :class:`Claim`::

    EXCESS_RISK = Claim(
        pipeline="pivotal-legendre",
        arms=("pivotal-leverage", "leverage-iid"),        # arm[0] is the method
        metric=("excess-risk", "excess_risk"),            # (evaluator stage, metric)
        effect=Effect(quantity="excess risk ratio", statistic="ratio", relation="less", value=1.0),
        scales={"smoke": Scale(replicates=3, overrides=("task.legendre.n=500",)),
                "paper": Scale(replicates=100)},
        tuning={"pivotal-leverage": Tuning(1, "paper default"), "leverage-iid": Tuning(1, "paper default")},
    )
    registry.add_claim("pivotal-excess-risk", "quadriga_pivotal_leverage.claims:EXCESS_RISK", ...)

:func:`verify` runs the registered pipeline through :func:`quadriga.api.run` with
``repeat = replicates`` on every arm stage (and on ``repeat_tasks``), so replicate ``i`` of
every arm shares its seed (common random numbers); reads the per-replicate observations
``values[f"{arm}[{i}]/{metric}"]`` of the evaluator stage (or calls ``observe(result)``, or,
with ``rows=Rows(...)``, reads one row per item of a stage's table from a single run);
computes the effect with a bootstrap interval (:mod:`quadriga.stats`) and applies one verdict
policy (:func:`decide`):

- **passed**: the interval lies on the claimed side of ``value -/+ tolerance`` (inside the
  band ``value +- tolerance`` for ``within``);
- **refuted**: it lies entirely on the other side (outside the band);
- **inconclusive**: it straddles; the record gives the minimum detectable effect at this number
  of replicates and the replicates that would detect the observed distance (power 0.8);
- **ran**: every smoke-scale result (numbers, never a verdict);
- **error**: the claim raised.

A claim with several comparisons (arm 0 against several baselines, or several groups such as
tasks returned by ``observe``) decides each with Holm-adjusted one-sided p-values; it passes
only when every comparison passes, and is refuted when any is refuted.

Before the pipelines speak ``repeat`` (older cores), replicate ``i`` is a separate run with root
seed ``Scale.seed + i`` and the observations are read as ``values[f"{arm}/{metric}"]``.

The last paper-scale verdict of each claim is kept, when ``verify --record`` is given, in
``claims_record.json`` inside the plugin's package (next to its ``claims.py``); ``quadriga
list`` shows it with its date and the plugin's version (:func:`last_verdict`).

The package: :mod:`~quadriga.claims.model` (effect, scale, tuning, observations),
:mod:`~quadriga.claims.claim` (the claim and how it runs), :mod:`~quadriga.claims.run` (repeat on
the arms, shared runs, reading replicates), :mod:`~quadriga.claims.verdict` (the policy),
:mod:`~quadriga.claims.report` (``verify`` and its report) and :mod:`~quadriga.claims.record`
(recorded verdicts).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from quadriga.claims.claim import Claim
    from quadriga.claims.fingerprint import stale_reason, verdict_text
    from quadriga.claims.model import (
        RECORD_FILE,
        SCALES,
        STATUSES,
        Effect,
        Observations,
        Plan,
        Precondition,
        Rows,
        Scale,
        Tuning,
    )
    from quadriga.claims.record import last_verdict, record_verdicts
    from quadriga.claims.report import select_claims, verify
    from quadriga.claims.run import (
        markdown_table,
        mean_intervals,
        read_replicates,
        read_row_groups,
        read_rows,
        replicate_values,
        run_pipeline,
        run_repeated,
        shared,
        shared_runs,
    )
    from quadriga.claims.verdict import decide, decide_interval, evaluate_claim

#: public name -> the module of this package that defines it; imported on first use (PEP 562),
#: so that ``quadriga list`` (which reads recorded verdicts only) imports no more than it needs
_LAZY = {
    **dict.fromkeys(["Claim"], "claim"),
    **dict.fromkeys(
        [
            "SCALES",
            "STATUSES",
            "Effect",
            "Observations",
            "Plan",
            "Precondition",
            "Rows",
            "Scale",
            "Tuning",
        ],
        "model",
    ),
    **dict.fromkeys(["RECORD_FILE", "last_verdict", "record_verdicts"], "record"),
    **dict.fromkeys(["stale_reason", "verdict_text"], "fingerprint"),
    **dict.fromkeys(["select_claims", "verify"], "report"),
    **dict.fromkeys(
        [
            "markdown_table",
            "mean_intervals",
            "read_replicates",
            "read_row_groups",
            "read_rows",
            "replicate_values",
            "run_pipeline",
            "run_repeated",
            "shared",
            "shared_runs",
        ],
        "run",
    ),
    **dict.fromkeys(["decide", "decide_interval", "evaluate_claim"], "verdict"),
}

__all__ = [
    "RECORD_FILE",
    "SCALES",
    "STATUSES",
    "Claim",
    "Effect",
    "Observations",
    "Plan",
    "Precondition",
    "Rows",
    "Scale",
    "Tuning",
    "decide",
    "decide_interval",
    "evaluate_claim",
    "last_verdict",
    "markdown_table",
    "mean_intervals",
    "read_replicates",
    "read_row_groups",
    "read_rows",
    "record_verdicts",
    "replicate_values",
    "run_pipeline",
    "run_repeated",
    "select_claims",
    "shared",
    "shared_runs",
    "stale_reason",
    "verdict_text",
    "verify",
]


def __getattr__(name: str) -> Any:
    """Import the public names lazily (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'quadriga.claims' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"quadriga.claims.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names and the submodules."""
    return sorted({*__all__, *globals()})
