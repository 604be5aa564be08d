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
    ("learner", "flow-matching"),
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


@pytest.mark.parametrize("claim", ["CONSISTENCY", "BEATS_IS", "BEATS_GUIDANCE"])
def test_claim_runs_at_smoke_scale(registry, tmp_path, claim):
    claims_mod = pytest.importorskip("quadriga.claims")
    if not hasattr(claims_mod, "Claim") or not hasattr(claims_mod, "run_claim"):
        pytest.skip("the v2 claim protocol (quadriga.claims.Claim) is not available in this core")
    from quadriga_fm_smc import claims

    record = claims_mod.run_claim(getattr(claims), "smoke", registry=registry, out_dir=tmp_path)
    assert record.status == "ran"
    for values in record.observations.values():
        assert values and all(v == v for v in values)
