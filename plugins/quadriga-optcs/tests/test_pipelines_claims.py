"""The ready pipelines and the claims: every table builds now; the pipelines and claims run at smoke
scale once the core understands ``repeat`` and the claim protocol."""

from __future__ import annotations

import importlib.resources

import pytest
import tomllib

from quadriga.components import build_component
from quadriga.registry import Registry

PIPELINES = ("optcs-synthetic", "optcs-diabetes")
_SKIP = ("use", "inputs", "repeat")


def _pipeline(name: str) -> dict:
    path = importlib.resources.files("quadriga_optcs") / "pipelines" / f"{name}.toml"
    return tomllib.loads(path.read_text())


@pytest.mark.parametrize("name", PIPELINES)
def test_every_table_builds_and_arms_share_their_settings(name):
    data = _pipeline(name)
    registry = Registry()
    for section, kinds in (("task", ("dataset",)), ("stage", ("estimator", "evaluator"))):
        for table in data[section].values():
            params = {k: v for k, v in table.items() if k not in _SKIP}
            build_component(registry, table["use"], params, kinds=kinds)
    stages = data["stage"]
    arms = [s for s in stages.values() if s["use"] != "selection-fdr"]
    for key in ("models", "levels", "repeat"):  # the arms differ only in the procedure
        assert len({repr(a[key]) for a in arms}) == 1, key
    assert stages["fdr"]["levels"] == arms[0]["levels"]
    assert arms[0]["repeat"] == data["task"]["data"]["repeat"] >= 500


def _claims_protocol():
    claims = pytest.importorskip("quadriga.claims")
    if not hasattr(claims, "Claim"):
        pytest.skip("the v2 claim protocol (quadriga.claims.Claim) is not in this core yet")
    return claims


def test_claims_name_registered_pipeline_arms_and_metrics():
    _claims_protocol()
    from quadriga_optcs import claims

    for claim in (claims.FDR_CONTROL, claims.POWER, claims.NAIVE_VIOLATION):
        stages = _pipeline(claim.pipeline)["stage"]
        assert set(claim.arms) <= set(stages) and claim.metric[0] in stages
        q = float(claim.metric[1].rsplit("_q", 1)[1])
        assert q in stages[claim.metric[0]]["levels"]


def test_claims_run_at_smoke_scale(tmp_path):
    claims = _claims_protocol()
    rows, _ = claims.verify(Registry(), "quadriga-optcs", scale="smoke", out_dir=tmp_path)
    assert len(rows) == 3
    for row in rows:
        assert row.get("status") in ("ran", "passed", "refuted", "inconclusive"), row
