"""The benchmark pipelines spend equal budgets, and a small run gives the table with no verdict."""

from __future__ import annotations

import math

import pytest
from quadriga_inference_gym.budget import (
    SAMPLERS,
    TARGETS,
    apply_budget,
    benchmark_pipeline,
    cost_per_transition,
)
from quadriga_inference_gym.claims import TABLE, benchmark_table, config_name

from quadriga.claims import Scale, evaluate_claim
from quadriga.registry import get_registry


@pytest.mark.parametrize("srmc", [False, True], ids=["std", "with-srmc"])
def test_every_sampler_gets_the_same_budget(srmc):
    """1500 evaluations per chain (within one transition) and a 300-evaluation pilot, in the shipped files."""
    if srmc:
        pytest.importorskip("quadriga_srmc", reason="quadriga-srmc is an optional companion plugin")
    _, data = benchmark_pipeline(get_registry(), srmc=srmc)
    samplers = {k: v for k, v in data["stage"].items() if v["use"] == "dual-averaging"}
    assert list(samplers) == ["sample"]  # one samplers x targets matrix
    table = samplers["sample"]
    assert table["matrix"]["inputs"]["target"] == list(TARGETS)
    axis = table["matrix"]["sampler"]
    assert [inner["use"] for inner in axis] == list(SAMPLERS.values())[: 4 if srmc else 3]
    for inner in axis:
        cost = cost_per_transition(inner)
        spent = cost * (inner["burn_in"] + inner.get("num_samples", inner.get("num_steps", 0)))
        assert 1500 - cost < spent <= 1500, inner["use"]
    assert table["tuning_budget"] == 300
    again = apply_budget(data, budget=1500, tuning=300)
    assert again == data  # the files follow the same rule as the scales


@pytest.mark.parametrize("srmc", [False, True], ids=["std", "with-srmc"])
def test_the_matrix_expands_to_the_benchmark_stages_each_evaluator_gets_its_target(srmc):
    """One stage per (target, sampler, replicate), tuned to the sampler's acceptance; error-T scores T's."""
    if srmc:
        pytest.importorskip("quadriga_srmc", reason="quadriga-srmc is an optional companion plugin")
    from quadriga.api import check

    reg = get_registry()
    _, data = benchmark_pipeline(reg, srmc=srmc)
    pipe = check(data, registry=reg)
    uses = list(SAMPLERS.values())[: 4 if srmc else 3]
    accept = {"rwm": 0.234, "mala": 0.574, "hmc": 0.65, "srmc": 0.574}
    for target in TARGETS:
        names = [f"{config_name(target, use)}[{i}]" for use in uses for i in range(3)]
        assert pipe.stages[f"error-{target}"].inputs == {"subject": names, "reference": target}
        for name in names:
            node = pipe.stages[name]
            assert node.inputs == {"target": target} and node.replicate == int(name[-2])
            use = node.config["sampler"]["use"]
            assert (
                name.startswith(config_name(target, use)) and node.config["target_acceptance"] == accept[use]
            )
    assert len(pipe.stages) == len(TARGETS) * (3 * len(uses) + 1)


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
    data["stage"] = {k: v for k, v in data["stage"].items() if k == "sample" or k.rsplit("-", 1)[-1] in keep}
    data["stage"]["sample"]["matrix"]["inputs"]["target"] = list(keep)
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
