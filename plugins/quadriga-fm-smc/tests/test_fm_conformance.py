"""Conformance of every component, the shipped pipelines and the claims at smoke scale."""

from __future__ import annotations

from importlib import resources

import pytest
import tomllib

from quadriga.registry import Registry
from quadriga.testing import check_component

COMPONENTS = [
    ("sampler", "fm-smc"),
    ("sampler", "fm-is"),
    ("sampler", "fm-guidance"),
    ("target", "linear-gaussian-posterior"),
    ("learner", "prior-flow-matching"),
    ("evaluator", "posterior-diagnostics"),
]
PIPELINES = ("fm-smc-gmm2d", "fm-smc-gmm16d", "fm-smc-learned")


@pytest.fixture(scope="module")
def registry():
    reg = Registry()
    reg.load()
    if not any(c.name == "fm-smc" for c in reg.components()):
        pytest.skip("quadriga-fm-smc is not installed (pip install -e plugins/quadriga-fm-smc)")
    return reg


@pytest.mark.parametrize(("kind", "name"), COMPONENTS)
def test_component_conforms(registry, kind, name):
    check_component(kind, name)


@pytest.mark.parametrize("name", PIPELINES)
def test_pipeline_uses_registered_components(registry, name):
    data = tomllib.loads(resources.files("quadriga_fm_smc").joinpath(f"pipelines/{name}.toml").read_text())
    have = {c.name for c in registry.components()}
    for table in ("task", "stage"):
        for stage, spec in data.get(table, {}).items():
            assert spec["use"] in have, f"{name}: {table}.{stage} uses unknown '{spec['use']}'"
    for stage in ("fm-smc", "fm-is", "fm-guidance"):
        spec = data["stage"][stage]
        assert spec["matrix"] == {"num_particles": [64, 256, 1024]} and spec["num_steps"] == 50


def test_expanded_names_are_parsed_with_the_core_helper():
    from quadriga_fm_smc.claims import parse_name

    assert parse_name("fm-smc[num_particles=1024][3]") == ("fm-smc", {"num_particles": "1024"}, 3)
    assert parse_name("fm-is[0]") == ("fm-is", {}, 0)
    assert parse_name("fm-smc[num_particles=64]") is None  # a matrix point without a replicate
    assert parse_name("posterior") is None


@pytest.mark.parametrize("claim", ["fm-smc-consistency", "fm-smc-beats-is", "fm-smc-beats-guidance"])
def test_claim_runs_at_smoke_scale(registry, tmp_path, claim):
    """Each claim runs through ``quadriga verify`` at smoke scale: status "ran", 2 paired replicates."""
    from quadriga.claims import Claim, verify

    assert isinstance(registry.load_claim(next(c for c in registry.claims() if c.name == claim)), Claim)
    (record,), report = verify(registry, claim, scale="smoke", out_dir=tmp_path)
    assert record["status"] == "ran", record.get("traceback", record["summary"])
    observations = record["observations"][""]
    assert set(observations) == (
        {"fm-smc"} if claim == "fm-smc-consistency" else {"fm-smc", "fm-" + claim.rsplit("-", 1)[1]}
    )
    for values in observations.values():
        assert len(values) == 2 and all(v == v and abs(v) < 1e6 for v in values)
    # smoke scale: K in {32, 64, 128}; every sampler's ESS is reported at every K
    numbers = record["numbers"]
    assert {
        f"{s} ess_fraction K={k}" for s in ("fm-smc", "fm-is", "fm-guidance") for k in (32, 64, 128)
    } <= set(numbers)
    assert 0 < numbers["fm-is ess_fraction K=128"] <= 1 and numbers["fm-guidance ess_fraction K=32"] == 1.0
    # smoke scale gives numbers, not verdicts: the sign of a 3-point slope on 2 replicates is not asserted
    if claim != "fm-smc-consistency":
        assert numbers["K"] == 128
    assert "not verdicts" in report.read_text()
