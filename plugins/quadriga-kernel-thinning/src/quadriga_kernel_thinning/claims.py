"""The paper's headline claims as statistical tests (``quadriga verify quadriga-kernel-thinning``).

- ``kt-mmd-rate``: with P = N(0, I_d) and n = 4^m exact input points, the MMD to P of a
  KT coreset of sqrt(n) points decays like n^(-1/2), against about n^(-1/4) for sqrt(n)
  i.i.d. points (Dwivedi & Mackey, Kernel Thinning, JMLR 2024, Thm. 1 and Fig. 2). Declarative:
  the registered pipeline ``kt-mmd-rate``, whose ``mmd-rate`` evaluator runs every replicate and
  n in one run (every thinner of one replicate thins the same input points); each replicate is
  one row of its ``per_replicate`` table, the least-squares slope of log MMD on log n.
- ``kt-after-mcmc``: thinning a MALA output on the 4-mode 2-D mixture with KT gives a lower
  MMD to P than standard thinning (same paper, sec. 6). Declarative: the registered pipeline
  ``kt-after-mcmc`` with MALA repeated, so every thinner of replicate i thins chain i.

The core computes the intervals and verdicts.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from quadriga.claims import (
    Claim,
    Effect,
    Observations,
    Plan,
    Precondition,
    Rows,
    Scale,
    Tuning,
    markdown_table,
)
from quadriga_kernel_thinning.evaluators import METHODS

__all__ = ["METHODS", "after_mcmc", "mmd_rate"]

#: the tested dimension's point of the ``kt-mmd-rate`` pipeline; d = 10 (``rate[inputs.reference=d10]``)
#: is reported alongside
_RATE_D2 = "rate[inputs.reference=d2]"

#: one replicate per row: root KT's own least-squares slope of log MMD on log n over one input set per n
_RATE_ROWS = Rows(
    stage=_RATE_D2, table="per_replicate", column="slope", key="replicate", count="stage.rate.replicates"
)


def _rate_observe(result: Any) -> Observations:
    """Pooled slopes (with intervals) and mean MMDs of every method and d, the table and the figures.

    ``numbers``: ``d<d>/<method>/slope`` (the slope of log mean-over-replicates MMD against log n,
    :func:`quadriga.stats.loglog_slope`), ``.../slope_low``, ``.../slope_high``,
    ``.../replicate_slope`` (the mean of the per-replicate slopes) and ``.../mmd_at_n<n>`` at the
    largest n, for every ``rate[...]`` point of the run.
    """
    numbers: dict[str, Any] = {}
    rows: list[list[Any]] = []
    figures: dict[str, str] = {}
    ns: list[int] = []
    points = [name for name in result.artifacts if name.startswith("rate[")]
    for point in points:
        m = result.artifacts[point]
        d, ns = int(m.info["dim"]), [int(n) for n in m.info["num_samples"]]
        for row in m.tables["summary"]:
            method = row["subject"]
            slope, low, high = row["slope"], row["slope_low"], row["slope_high"]
            numbers[f"d{d}/{method}/slope"] = slope
            numbers[f"d{d}/{method}/slope_low"] = low
            numbers[f"d{d}/{method}/slope_high"] = high
            numbers[f"d{d}/{method}/replicate_slope"] = row["replicate_slope"]
            numbers[f"d{d}/{method}/mmd_at_n{ns[-1]}"] = row[f"mmd_n{ns[-1]}"]
            rows.append(
                [d, method, slope, f"[{low:.3f}, {high:.3f}]", row["replicate_slope"]]
                + [row[f"mmd_n{n}"] for n in ns]
            )
        for png in sorted(result.dir.rglob("*-mmd_vs_n.png")):  # the run quotes the point's name
            if unquote(png.name) == f"{point}-mmd_vs_n.png":
                figures[f"mmd_vs_n_d{d}"] = str(png)
    table = markdown_table(
        ["d", "method", "slope of mean", "95% interval", "mean replicate slope"] + [f"MMD n={n}" for n in ns],
        rows,
    )
    return Observations(numbers=numbers, table=table, figures=figures)


_LIBRARIES = ("torch", "goodpoints")

mmd_rate = Claim(
    pipeline="kt-mmd-rate",
    arms=("root KT",),
    rows=_RATE_ROWS,
    observe=_rate_observe,
    effect=Effect(
        quantity="slope of log MMD(coreset, P) against log n for root KT, d = 2, per replicate (one input "
        "set per n; i.i.d. sqrt(n) points: -0.25)",
        statistic="mean",
        relation="less",
        # Thm. 1: about n^(-1/2) up to log factors, against n^(-1/4) i.i.d.; -0.4 leaves the log
        # factors room at n <= 4096 while excluding the i.i.d. rate
        value=-0.4,
        label="slope",
    ),
    plan=Plan(
        effect=0.1,
        pilot_replicates=5,
        rationale="the predicted -0.5 is 0.1 beyond the -0.4 margin",
    ),
    preconditions=(
        Precondition.number(
            "d2/iid sqrt(n)/slope",
            ">",
            -0.4,
            "i.i.d. sqrt(n) points do not reach the claimed rate (the MMD estimate is not floored)",
        ),
    ),
    libraries=_LIBRARIES,
    scales={
        "smoke": Scale(
            replicates=2,
            overrides=(
                'stage.rate.matrix.inputs.reference=["d2"]',
                "stage.rate.num_samples=[16, 64, 256]",
            ),
        ),
        # the pipeline as written: n = 64 ... 4096; the tested slope is d = 2's, d = 10 is reported
        # alongside. d = 100 (not tested) was left out to bound the CPU time; before the protocol it
        # gave root KT slope -0.35 [-0.36, -0.34]
        "paper": Scale(replicates=10),
    },
    tuning={"root KT": Tuning(1, "Gaussian kernel sigma = sqrt(2 d), the paper's choice")},
)
"""Root KT's MMD decays faster than n^-0.4 in d = 2 (the paper: about n^-1/2, against n^-1/4 i.i.d.)."""


#: the arms of ``after_mcmc``: root KT (a point of the pipeline's ``kt`` matrix) and standard thinning
_ROOT_KT, _STANDARD = "kt[variant=root]", "standard"

after_mcmc = Claim(
    pipeline="kt-after-mcmc",
    arms=(_ROOT_KT, _STANDARD),
    metric=("mmd", "mmd"),
    # MALA is repeated: every thinner of replicate i thins mala[i] (bound replicate-wise), so the
    # arms are paired by chain; the MMD is exact against the mixture
    repeat_stages=("mala",),
    effect=Effect(
        quantity="MMD to P of sqrt(n) points thinned from MALA output, root KT - standard thinning "
        "(paired by chain)",
        statistic="difference",
        relation="less",
        value=0.0,
        why_sign="sec. 6 claims KT improves on standard thinning of MCMC output without a size: the gap "
        "is bounded by the chain's own error, which thinning cannot remove, so the direction is the claim.",
    ),
    plan=Plan(
        effect=0.01,
        pilot_replicates=5,
        # quadriga verify kt-after-mcmc --plan, 2026-12-02: 53 replicates needed (20 were declared)
        sd=0.0253,
        rationale="an MMD gap of 0.01 (about 5 % of standard thinning's 0.19)",
    ),
    preconditions=(Precondition.varies(_STANDARD, "the standard-thinning baseline varies"),),
    libraries=_LIBRARIES,
    scales={
        "smoke": Scale(
            replicates=2,
            overrides=("stage.mala.num_chains=4", "stage.mala.num_samples=64", "stage.mala.burn_in=50"),
        ),
        # the pipeline as written: 16 chains x 256 draws after 200 burn-in, thinned to 64 points;
        # 53 replicates from the plan's pilot (sd 0.0253 for an effect of 0.01)
        "paper": Scale(replicates=53),
    },
    tuning={
        _ROOT_KT: Tuning(1, "Gaussian kernel sigma = 1"),
        _STANDARD: Tuning(1, "every (n / sqrt(n))-th point"),
    },
)
"""KT thins MALA output to a lower MMD than standard thinning (interval over replicates)."""
