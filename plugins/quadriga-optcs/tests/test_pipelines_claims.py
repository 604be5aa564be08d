"""The ready pipelines and the claims: every table builds, and the claims run at smoke scale."""

from __future__ import annotations

import importlib.resources
import time

import numpy as np
import pytest
import tomllib

from quadriga.claims import Claim, verify
from quadriga.components import build_component
from quadriga.registry import Registry

PIPELINES = ("optcs-synthetic", "optcs-diabetes", "optcs-full-synthetic")
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
    for key in ("levels", "repeat"):  # the arms differ only in the procedure (and its candidates)
        assert len({repr(a[key]) for a in arms}) == 1, key
    assert len({repr(a["models"]) for a in arms if "models" in a}) == 1
    assert sorted(stages["fdr"]["inputs"]["subject"]) == sorted(f"{n}[*]" for n in stages if n != "fdr")
    assert stages["fdr"]["levels"] == arms[0]["levels"]
    assert arms[0]["repeat"] == data["task"]["data"]["repeat"] >= 500


def test_claims_name_registered_pipeline_arms_and_metrics():
    from quadriga_optcs import claims

    registry = Registry()
    stages = _pipeline(claims.PIPELINE)["stage"]
    assert set(claims.ARMS) <= set(stages)
    for name in ("optcs-fdr-control", "optcs-power", "optcs-naive-violation"):
        claim = registry.load_claim(next(c for c in registry.claims() if c.name == name))
        assert isinstance(claim, Claim) and claim.pipeline == claims.PIPELINE
        assert set(claim.arms) <= set(claims.ARMS)
        q = float(claim.observe.keywords["metric"].rsplit("_q", 1)[1])
        assert q in stages["fdr"]["levels"]
        assert claim.scales["paper"].replicates >= 500 and claim.scales["smoke"].replicates == 3


def test_claims_run_at_smoke_scale_share_one_run_and_give_numbers(tmp_path):
    start = time.perf_counter()
    rows, report = verify(Registry(), "quadriga-optcs", scale="smoke", out_dir=tmp_path)
    seconds = time.perf_counter() - start
    assert sorted(r["name"] for r in rows) == ["optcs-fdr-control", "optcs-naive-violation", "optcs-power"]
    assert seconds < 120, seconds  # seconds on an idle core; generous for a shared machine
    runs = {r["numbers"]["run"] for r in rows}
    assert len(runs) == 1  # the three claims observe one run
    for row in rows:
        assert row["status"] == "ran", (row["status"], row["summary"], row.get("traceback"))
        for c in row["comparisons"]:
            assert c["n"] == 3 and c["low"] <= c["estimate"] <= c["high"]
        obs = row["observations"][""]
        assert all(len(v) == 3 and all(0.0 <= x <= 1.0 for x in v) for v in obs.values())
    fdr = next(r for r in rows if r["name"] == "optcs-fdr-control")
    # the observations are the evaluator's per-replicate FDPs: their mean is its pooled FDR
    assert np.mean(fdr["observations"][""]["optcs"]) == pytest.approx(fdr["numbers"]["optcs/fdr_q0.1"])
    assert "not verdicts" in report.read_text()
