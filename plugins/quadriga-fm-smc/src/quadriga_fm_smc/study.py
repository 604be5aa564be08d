"""A replicated comparison of the three samplers, run on the components directly (paired seeds).

:func:`compare` does what the pipelines ``fm-smc-gmm2d`` / ``fm-smc-gmm16d`` do with ``repeat``: replicate
``i`` of every sampler uses the same generator seed, every sampler gets the same grid and solver
(equal velocity evaluations), and each output is scored by quadriga-std's energy distance against
``num_reference`` exact posterior draws plus :class:`~quadriga_fm_smc.evaluators.PosteriorDiagnostics`.
:func:`summarise` turns the rows into means with percentile-bootstrap intervals (``scipy.stats.bootstrap``,
paired over replicates for ratios, 2000 resamples) and per-replicate log-log slopes over K.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from quadriga.artifacts import Samples
from quadriga.seeding import derive_seed, make_generator

__all__ = ["SAMPLERS", "compare", "make_task", "summarise"]

SAMPLERS = ("fm-smc", "fm-is", "fm-guidance")


def make_task(dim: int, seed: int = 0, **overrides: Any) -> Any:
    """The pipelines' posterior task (8 components, Gaussian A with d / 2 rows), prepared as the runner does.

    Raises:
        ConfigError: invalid overrides.
    """
    from quadriga_fm_smc.tasks import LinearGaussianPosterior

    kw = dict(
        dim=dim,
        num_components=8,
        radius=3.0 if dim <= 2 else 4.0,
        component_std=0.5,
        obs_dim=max(dim // 2, 1),
        observation="gaussian",
        noise_std=0.3 if dim <= 2 else 0.5,
    )
    task = LinearGaussianPosterior(**{**kw, **overrides})
    task.prepare(generator=make_generator(derive_seed(seed, "posterior")))
    return task


def compare(
    task: Any,
    ks: Sequence[int] = (64, 256, 1024),
    replicates: int = 5,
    *,
    samplers: Sequence[str] = SAMPLERS,
    num_steps: int = 50,
    velocity: Any = None,
    num_reference: int = 2000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Run every sampler for every K and replicate; one row per run.

    Returns:
        rows ``{"sampler", "K", "replicate", "energy_distance", "ess", "ess_fraction", "unique_fraction",
        "velocity_evals", "mode_weight_tv", "mean_error", ["log_evidence_error"]}``.
    """
    from quadriga_std.evaluators.distances import EnergyDistance

    from quadriga_fm_smc.evaluators import PosteriorDiagnostics
    from quadriga_fm_smc.samplers import FMSMC, FMGuidance, FMImportanceSampling

    classes = {"fm-smc": FMSMC, "fm-is": FMImportanceSampling, "fm-guidance": FMGuidance}
    ref = Samples(x=task.sample(num_reference, generator=make_generator(derive_seed(seed, "reference"))))
    energy, diag = EnergyDistance(), PosteriorDiagnostics()
    rows = []
    for k in ks:
        for i in range(replicates):
            for name in samplers:
                sampler = classes[name](num_particles=int(k), num_steps=num_steps)
                gen = make_generator(derive_seed(seed, f"replicate-{i}"))
                out = sampler.sample(task, velocity, generator=gen)
                row: dict[str, Any] = {"sampler": name, "K": int(k), "replicate": i}
                row["energy_distance"] = energy.evaluate(out, ref).values["subject/energy_distance"]
                row.update({m.split("/", 1)[1]: v for m, v in diag.evaluate(out, task).values.items()})
                rows.append(row)
    return rows


def _ci(x: np.ndarray, stat: Any, rng: np.random.Generator, paired: Sequence[np.ndarray] = ()) -> tuple:
    from scipy.stats import bootstrap

    data = (x, *paired)
    if len(x) < 3 or np.ptp(np.concatenate(data)) == 0:
        v = float(stat(*data))
        return v, v, v
    res = bootstrap(
        data, stat, paired=bool(paired), n_resamples=2000, method="percentile", rng=rng, vectorized=False
    )
    return float(stat(*data)), float(res.confidence_interval.low), float(res.confidence_interval.high)


def summarise(rows: list[dict[str, Any]], seed: int = 0) -> dict[str, Any]:
    """Means with 95% percentile-bootstrap intervals (over replicates) and SMC's ratios and slopes.

    Returns:
        ``{"table": [{"sampler", "K", "n", "energy_distance": (mean, lo, hi), "ess_fraction": ...,
        "unique_fraction": ..., "mode_weight_tv": ...}], "ratios": {(other, K): (ratio, lo, hi)},
        "slope": {sampler: (mean slope, lo, hi)}}``.
    """
    rng = np.random.default_rng(seed)
    by: dict[tuple[str, int], dict[int, dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["sampler"], r["K"]), {})[r["replicate"]] = r
    table = []
    for (name, k), reps in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        entry: dict[str, Any] = {"sampler": name, "K": k, "n": len(reps)}
        for metric in ("energy_distance", "ess_fraction", "unique_fraction", "mode_weight_tv"):
            entry[metric] = _ci(np.array([r[metric] for r in reps.values()]), np.mean, rng)
        table.append(entry)
    ratios = {}
    for (name, k), reps in by.items():
        if name == "fm-smc":
            continue
        smc = by.get(("fm-smc", k), {})
        common = sorted(set(smc) & set(reps))
        a = np.array([smc[i]["energy_distance"] for i in common])
        b = np.array([reps[i]["energy_distance"] for i in common])
        ratios[(name, k)] = _ci(a, lambda u, v: np.mean(u) / np.mean(v), rng, paired=(b,))
    slopes = {}
    for name in {r["sampler"] for r in rows}:
        ks = sorted(k for (n, k) in by if n == name)
        if len(ks) < 2:
            continue
        reps = sorted(set.intersection(*(set(by[(name, k)]) for k in ks)))
        lx = np.log(ks)
        s = [
            np.polyfit(lx, np.log([max(by[(name, k)][i]["energy_distance"], 1e-300) for k in ks]), 1)[0]
            for i in reps
        ]
        slopes[name] = _ci(np.array(s), np.mean, rng)
    return {"table": table, "ratios": ratios, "slope": slopes}
