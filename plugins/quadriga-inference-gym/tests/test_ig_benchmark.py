"""The benchmark pipelines spend equal budgets, and a small run gives the table with no verdict."""

from __future__ import annotations

import math

import pytest
from quadriga_inference_gym.budget import TARGETS, apply_budget, benchmark_pipeline, cost_per_transition
from quadriga_inference_gym.claims import TABLE, benchmark_table

from quadriga.claims import Scale, evaluate_claim
from quadriga.registry import get_registry


@pytest.mark.parametrize("srmc", [False, True], ids=["std", "with-srmc"])
def test_every_sampler_gets_the_same_budget(srmc):
    """1500 evaluations per chain (within one transition) and a 300-evaluation pilot, in the shipped files."""
    if srmc:
        pytest.importorskip("quadriga_srmc", reason="quadriga-srmc is an optional companion plugin")
    _, data = benchmark_pipeline(get_registry(), srmc=srmc)
    samplers = {k: v for k, v in data["stage"].items() if v["use"] == "dual-averaging"}
    assert len(samplers) == len(TARGETS) * (4 if srmc else 3)
    for name, table in samplers.items():
        inner = table["sampler"]
        cost = cost_per_transition(inner)
        spent = cost * (inner["burn_in"] + inner.get("num_samples", inner.get("num_steps", 0)))
        assert 1500 - cost < spent <= 1500, name
        assert table["tuning_budget"] == 300
    again = apply_budget(data, budget=1500, tuning=300)
    assert again == data  # the files follow the same rule as the scales


def test_a_small_benchmark_gives_the_table_and_no_verdict(tmp_path):
    """Two targets, two replicates, 60 evaluations per chain: every row present, status 'ran'.

    SR-MALA joins when quadriga-srmc is installed (its rows are checked for presence only).
    """
    from quadriga import api

    reg = get_registry()
    name, data = benchmark_pipeline(reg)
    samplers = ("rwm", "mala", "hmc", "srmala") if name.endswith("srmc") else ("rwm", "mala", "hmc")
    keep = ("es", "banana")
    data["task"] = {k: v for k, v in data["task"].items() if k in keep}
    data["stage"] = {k: v for k, v in data["stage"].items() if k.rsplit("-", 1)[-1] in keep}
    data = apply_budget(data, budget=60, tuning=30, replicates=2)
    result = api.run(data, out=tmp_path / "run", registry=reg)
    assert result.status == "finished", result.error
    table, numbers = benchmark_table(result.results["stages"])
    rows = [line for line in table.splitlines()[2:]]
    assert len(rows) == 2 * len(samplers) and all(
        r.startswith("| eight schools") or r.startswith("| banana") for r in rows
    )
    assert "exact g.t." in table  # banana's ground truth is analytic
    for sampler in samplers[:3]:
        assert math.isfinite(numbers[f"{sampler}-es/standardized_error_rms"])
        assert numbers[f"{sampler}-banana/ess_per_grad"] > 0
    from quadriga.claims import Observations

    record = evaluate_claim(TABLE, Observations(values={}, table=table, numbers=numbers), "smoke")
    assert record["status"] == "ran" and record["comparisons"] == []


def test_the_scales_set_budgets_and_replicates():
    assert TABLE.scales["paper"] == Scale(replicates=10, options={"budget": 1500, "tuning": 300})
    assert TABLE.scales["smoke"].replicates == 2
    assert set(TABLE.tuning) == set(TABLE.arms)
