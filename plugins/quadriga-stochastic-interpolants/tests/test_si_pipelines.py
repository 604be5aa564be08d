"""The ready pipelines and both claims at smoke scale (numbers, no verdicts)."""

from __future__ import annotations

import math

import pytest
from quadriga_stochastic_interpolants.claims import BRIDGING, SDE_BEATS_ODE

from quadriga import api
from quadriga.claims import verify
from quadriga.registry import Registry

_TASKS = ("moons", "checkerboard")


def _smoke(tasks, learners, samplers, floor=True):
    out = []
    for t in tasks:
        out += [f"task.{t}.num_train=1000", f"task.{t}.num_test=100"]
    for s in learners:
        out += [f"stage.{s}.num_steps=20", f"stage.{s}.batch_size=64", f"stage.{s}.hidden_sizes=[16]"]
        out.append(f"stage.{s}.repeat=2")
    for s in samplers:
        out += [f"stage.{s}.num_samples=100", f"stage.{s}.num_steps=20", f"stage.{s}.repeat=2"]
    if floor:
        out += ["stage.floor.num_samples=100", "stage.floor.repeat=2"]
    return out


def test_moons_to_checkerboard_pipeline_gives_a_distance_per_replicate_and_sampler(tmp_path):
    samplers = ("ode", "sde_01", "sde_05", "sde_1")
    res = api.run(
        "si-moons-to-checkerboard",
        overrides=_smoke(_TASKS, ["si"], samplers),
        out=tmp_path / "run",
        registry=Registry(),
    )
    values = res.results["stages"]["energy"]["values"]
    mmd = res.results["stages"]["mmd"]["values"]
    sw = res.results["stages"]["sliced"]["values"]
    for arm in (*samplers, "floor"):
        for i in range(2):
            assert math.isfinite(values[f"{arm}[{i}]/energy_distance"])
            assert values[f"{arm}[{i}]/energy_distance"] >= 0
            assert math.isfinite(mmd[f"{arm}[{i}]/mmd2"])
            assert sw[f"{arm}[{i}]/sliced_wasserstein"] > 0


def test_gaussian_base_pipeline_runs(tmp_path):
    res = api.run(
        "si-gaussian-base",
        overrides=_smoke(("roll",), ["si", "fm"], ["si_ode", "si_sde", "fm_ode"]),
        out=tmp_path / "run",
        registry=Registry(),
    )
    values = res.results["stages"]["energy"]["values"]
    assert {
        f"{a}[{i}]/energy_distance" for a in ("si_ode", "si_sde", "fm_ode", "floor") for i in (0, 1)
    } <= set(values)


@pytest.mark.parametrize("name,claim", [("si-bridging", BRIDGING), ("si-sde-beats-ode", SDE_BEATS_ODE)])
def test_claims_run_at_smoke_scale(tmp_path, name, claim):
    records, report = verify(Registry(), name, scale="smoke", out_dir=tmp_path / name)
    rec = records[0]
    assert rec["status"] == "ran", rec.get("summary")
    obs = rec["observations"][""]
    assert set(obs) == set(claim.arms)
    assert {f"{s}_mean" for s in ("ode", "sde_01", "sde_05", "sde_1", "floor")} <= set(rec["numbers"])
    assert all(len(v) == 2 and all(math.isfinite(x) and x >= 0 for x in v) for v in obs.values())
    assert report.exists()
