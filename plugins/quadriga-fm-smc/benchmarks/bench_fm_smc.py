"""Benchmark: fm-smc against its baseline fm-is in the same run, at equal velocity evaluations.

Runs the pipeline ``fm-smc-gmm16d`` (or ``fm-smc-gmm2d`` with ``--dim 2``) restricted to fm-smc and
fm-is at K = 1024 (50 Heun steps, 100 velocity evaluations per particle for both), each repeated
``--replicates`` times with paired seeds, and prints the ratio fm-smc / fm-is of the mean energy
distance to 2000 exact posterior draws (BCa bootstrap over the paired replicates,
:func:`quadriga.stats.bootstrap_ci`), the mean ESS fractions, and the ratio of the mean stage
seconds (from the run's ``status.json``).

    python plugins/quadriga-fm-smc/benchmarks/bench_fm_smc.py --replicates 5
"""

from __future__ import annotations

import argparse
import json
import tempfile
from importlib import resources
from pathlib import Path

import numpy as np
import tomllib

from quadriga import api
from quadriga.stats import bootstrap_ci

ARMS = ("fm-smc", "fm-is")


def pipeline(dim: int, replicates: int, k: int = 1024) -> dict:
    """The shipped pipeline with fm-guidance removed and both arms at one K, repeated ``replicates`` times."""
    name = "fm-smc-gmm16d" if dim == 16 else "fm-smc-gmm2d"
    data = tomllib.loads(resources.files("quadriga_fm_smc").joinpath(f"pipelines/{name}.toml").read_text())
    del data["stage"]["fm-guidance"]
    for arm in ARMS:
        data["stage"][arm].update(matrix={"num_particles": [k]}, repeat=replicates)
    for ev in ("energy", "mmd", "diagnostics"):
        data["stage"][ev]["inputs"]["subject"] = [f"{a}[*]" for a in ARMS]
    return data


def main() -> None:
    """Run the benchmark and print one line per ratio."""
    from quadriga_fm_smc.claims import at_k

    from quadriga.claims import read_replicates

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=5)
    parser.add_argument("--dim", type=int, default=16, choices=(2, 16))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = api.run(pipeline(args.dim, args.replicates), out=Path(tmp) / "run")
        stages = json.loads((result.dir / "status.json").read_text())["stages"]
    points = [at_k(a, 1024) for a in ARMS]
    energy = read_replicates(result, "energy", points, "energy_distance", args.replicates)
    ess = read_replicates(result, "diagnostics", points, "ess_fraction", args.replicates)
    x, y = (np.array(energy[p]) for p in points)
    ci = bootstrap_ci(x, "ratio", y, paired=True)
    seconds = {a: np.mean([s["seconds"] for n, s in stages.items() if s.get("component") == a]) for a in ARMS}
    print(f"d = {args.dim}, K = 1024, n = {ci.n} paired replicates, 100 velocity evaluations per particle")
    print(f"energy distance fm-smc / fm-is: {ci} ({ci.method}, {ci.level:.0%})")
    print(
        "ESS fraction: " + ", ".join(f"{a} {np.mean(ess[p]):.4f}" for a, p in zip(ARMS, points, strict=True))
    )
    print(
        f"seconds per stage: fm-smc {seconds['fm-smc']:.2f}, fm-is {seconds['fm-is']:.2f}, "
        f"ratio {seconds['fm-smc'] / seconds['fm-is']:.2f}"
    )


if __name__ == "__main__":
    main()
