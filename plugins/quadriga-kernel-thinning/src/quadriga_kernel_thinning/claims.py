"""The paper's headline claims as statistical tests (``quadriga verify quadriga-kernel-thinning``).

- ``kt-mmd-rate``: with P = N(0, I_d) and n = 4^m exact input points, the MMD to P of a
  KT coreset of sqrt(n) points decays like n^(-1/2), against about n^(-1/4) for sqrt(n)
  i.i.d. points (Dwivedi & Mackey, Kernel Thinning, JMLR 2024, Thm. 1 and Fig. 2).
- ``kt-after-mcmc``: thinning a MALA output on the 4-mode 2-D mixture with KT gives a lower
  MMD to P than standard thinning (same paper, sec. 6).

Both are :class:`quadriga.claims.Claim` objects whose experiment runs the components directly
on each replicate (the seeds are derived with :func:`quadriga.seeding.derive_seed`, and every
thinner of one replicate thins the same input points), so a sweep of 3 x 4 x 5 settings does
not pay for one run directory per setting. The core computes the intervals and verdicts.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from quadriga.artifacts import Samples
from quadriga.claims import Claim, Effect, Observations, Scale, Tuning, markdown_table
from quadriga.seeding import derive_seed, make_generator

__all__ = ["METHODS", "after_mcmc", "mmd_rate"]

METHODS = ("iid sqrt(n)", "standard thinning", "root KT", "target KT", "KT+", "KT-Compress++")


def _thinners(bandwidth: float | None) -> dict[str, Any]:
    from quadriga_std.samplers.simple import RandomSubsample, StandardThinning

    from quadriga_kernel_thinning.thinning import KernelThinning

    return {
        "iid sqrt(n)": RandomSubsample(),
        "standard thinning": StandardThinning(),
        "root KT": KernelThinning(variant="root", bandwidth=bandwidth),
        "target KT": KernelThinning(variant="target", bandwidth=bandwidth),
        "KT+": KernelThinning(variant="kt+", bandwidth=bandwidth),
        "KT-Compress++": KernelThinning(variant="target", compress=True, g=4, bandwidth=bandwidth),
    }


def _rate_experiment(scale: Scale, out_dir: Path) -> Observations:
    """Fitted MMD-vs-n slopes of every method on N(0, I_d) (see the module docstring).

    ``scale.options``: ``dims`` and ``ms`` (n = 4^m); ``scale.replicates`` input sets per n. The
    slope interval (:func:`quadriga.stats.loglog_slope`) is the delta-method t interval of the
    slope of log mean MMD. The
    tested interval is root KT's slope at d = 2; every other slope and the MMDs at the largest n
    are reported. Kernel: Gaussian, sigma = sqrt(2 d), for both thinning and the exact MMD.
    """
    from quadriga_std.targets.gaussian import Gaussian

    from quadriga import stats
    from quadriga_kernel_thinning.embedding import mixture_of, mmd_to_mixture
    from quadriga_kernel_thinning.figures import rate_figure

    dims, ms, reps = scale.options["dims"], scale.options["ms"], scale.replicates
    ns = [4**m for m in ms]
    numbers: dict[str, Any] = {}
    figures: dict[str, str] = {}
    rows: list[list[Any]] = []
    intervals = {}
    for d in dims:
        sigma = math.sqrt(2.0 * d)
        target = Gaussian(dim=d)
        mix = mixture_of(target)
        curves = {m: [[] for _ in ns] for m in METHODS}
        thinners = _thinners(sigma)
        for i, n in enumerate(ns):
            for rep in range(reps):
                root = derive_seed(rep, f"kt-mmd-rate/d{d}/n{n}")
                draws = Samples(x=target.sample(n, generator=make_generator(root)))
                for method, thinner in thinners.items():
                    coreset = thinner.sample(draws, generator=make_generator(derive_seed(root, method)))
                    curves[method][i].append(mmd_to_mixture(coreset.x, *mix, sigma))
        for method in METHODS:
            ci = stats.loglog_slope(ns, np.asarray(curves[method], float))
            slope, low, high = ci
            numbers[f"d{d}/{method}/slope"] = slope
            numbers[f"d{d}/{method}/slope_low"] = low
            numbers[f"d{d}/{method}/slope_high"] = high
            numbers[f"d{d}/{method}/mmd_at_n{ns[-1]}"] = float(np.mean(curves[method][-1]))
            rows.append(
                [d, method, slope, f"[{low:.3f}, {high:.3f}]"] + [float(np.mean(v)) for v in curves[method]]
            )
            if method == "root KT" and d == dims[0]:
                intervals[f"d={d}"] = ci
        fig = rate_figure(
            ns, curves, title=f"P = N(0, I_{d}), Gaussian kernel sigma = sqrt(2d), {reps} replicates"
        )
        name = f"mmd_vs_n_d{d}.png"
        fig.savefig(out_dir / name, dpi=110)
        figures[f"mmd_vs_n_d{d}"] = str(out_dir / name)
    table = markdown_table(["d", "method", "slope", "95% interval"] + [f"MMD n={n}" for n in ns], rows)
    return Observations(intervals=intervals, numbers=numbers, figures=figures, table=table)


mmd_rate = Claim(
    arms=("root KT",),
    experiment=_rate_experiment,
    effect=Effect(
        quantity="slope of log MMD(coreset, P) against log n for root KT, d = 2 "
        "(i.i.d. sqrt(n) points: -0.25)",
        statistic="interval",
        relation="less",
        value=-0.4,
    ),
    scales={
        "smoke": Scale(replicates=2, options={"dims": [2], "ms": [2, 3, 4]}),
        # the tested slope is d = 2's; d = 10 is reported alongside. d = 100 (not tested) was left out
        # to bound the CPU time; before the protocol it gave root KT slope -0.35 [-0.36, -0.34]
        "paper": Scale(replicates=10, options={"dims": [2, 10], "ms": [3, 4, 5, 6]}),
    },
    tuning={"root KT": Tuning(1, "Gaussian kernel sigma = sqrt(2 d), the paper's choice")},
)
"""Root KT's MMD decays faster than n^-0.4 in d = 2 (the paper: about n^-1/2, against n^-1/4 i.i.d.)."""


def _after_mcmc_experiment(scale: Scale, out_dir: Path) -> Observations:
    """Thin MALA output on the 4-mode 2-D mixture; exact MMD to P per replicate and integration errors.

    ``scale.options``: ``chains``, ``draws``, ``burn``. Every thinner of one replicate thins the same
    chain (paired). Kernel: Gaussian, sigma = 1, for thinning and for the MMD.
    """
    from quadriga_std.samplers.mcmc import MALA
    from quadriga_std.targets.gaussian import GaussianMixture

    from quadriga_kernel_thinning.embedding import mixture_of, mmd_to_mixture
    from quadriga_kernel_thinning.evaluators import IntegrationError, MMDToTarget

    chains, draws, burn = (int(scale.options[k]) for k in ("chains", "draws", "burn"))
    sigma = 1.0
    target = GaussianMixture(preset="4-mode-2d")
    target.prepare(generator=make_generator(0))
    mix = mixture_of(target)
    thinners = _thinners(sigma)
    results: dict[str, list[float]] = {"MALA (all points)": []}
    errors: dict[str, list[float]] = {"MALA (all points)": []}
    integ = IntegrationError()
    last: dict[str, Samples] = {}
    for rep in range(scale.replicates):
        root = derive_seed(rep, "kt-after-mcmc")
        chain = MALA(num_chains=chains, num_samples=draws, burn_in=burn, init="target", step_size=0.3).sample(
            target, generator=make_generator(root)
        )
        subjects = {"MALA (all points)": chain}
        for method, thinner in thinners.items():
            subjects[method] = thinner.sample(chain, generator=make_generator(derive_seed(root, method)))
        err = integ.evaluate(subjects, target, generator=make_generator(derive_seed(root, "evaluate"))).values
        for name, s in subjects.items():
            results.setdefault(name, []).append(mmd_to_mixture(s.x, *mix, sigma))
            errors.setdefault(name, []).append(err[f"{name}/error_total"])
        last = subjects
    numbers: dict[str, Any] = {"input_points": chains * draws}
    rows = []
    for name in results:
        numbers[f"{name}/mmd"] = float(np.mean(results[name]))
        numbers[f"{name}/integration_error"] = float(np.mean(errors[name]))
        rows.append(
            [name, numbers[f"{name}/mmd"], float(np.std(results[name])), numbers[f"{name}/integration_error"]]
        )
    fig = (
        MMDToTarget(bandwidth=sigma)
        .evaluate(
            {k: last[k] for k in ("standard thinning", "iid sqrt(n)", "root KT", "KT+")},
            target,
            generator=make_generator(0),
        )
        .figures["coreset"]
    )
    fig.savefig(out_dir / "coresets.png", dpi=110)
    table = markdown_table(["points", "MMD to P (mean)", "sd", "integration error (sum of 3)"], rows)
    return Observations(
        values={k: results[k] for k in ("root KT", "standard thinning")},
        numbers=numbers,
        figures={"coresets": str(out_dir / "coresets.png")},
        table=table,
    )


after_mcmc = Claim(
    arms=("root KT", "standard thinning"),
    experiment=_after_mcmc_experiment,
    effect=Effect(
        quantity="MMD to P of sqrt(n) points thinned from MALA output, root KT - standard thinning "
        "(paired by chain)",
        statistic="difference",
        relation="less",
        value=0.0,
    ),
    scales={
        "smoke": Scale(replicates=2, options={"chains": 4, "draws": 64, "burn": 50}),
        "paper": Scale(replicates=20, options={"chains": 16, "draws": 256, "burn": 200}),
    },
    tuning={
        "root KT": Tuning(1, "Gaussian kernel sigma = 1"),
        "standard thinning": Tuning(1, "every (n / sqrt(n))-th point"),
    },
)
"""KT thins MALA output to a lower MMD than standard thinning (interval over replicates)."""
