"""Artifacts own their behaviour: lossless save/load, checks, summaries without timings; symlinks refused."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
import torch

from quadriga.api import run
from quadriga.artifacts import Estimate, Fitted, Metrics, Samples, same_numbers
from quadriga.errors import ConfigError, QuadrigaError

INFO = {
    "big": torch.arange(200.0).reshape(10, 20),  # over 64 elements: a string in results.json, whole on disk
    "array": np.linspace(0.0, 1.0, 100),
    "pair": (1, 2.5),
    "nan": float("nan"),
    "nested": {"inf": float("-inf"), "list": [1, "a", None]},
}


def _artifacts():
    x = torch.randn(12, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    return [
        Samples(x=x, log_weights=torch.zeros(12), chains=x.reshape(3, 4, 3), info=dict(INFO)),
        Estimate(
            value=torch.tensor([1.0, 2.0]),
            stderr=torch.tensor([0.1, 0.2]),
            interval=(0.5, 2.5),
            info=dict(INFO),
        ),
        Estimate(value=1.25, stderr=0.5, interval=(torch.tensor(0.1), torch.tensor(2.0))),
        Metrics(values={"a/x": 1.5, "a/y": 2.0}, tables={"t": [{"a": 1, "b": "z"}]}, info=dict(INFO)),
        Fitted(model=None, history={"loss": [1.0, 0.5]}, info={"steps": 2, "w": torch.ones(70)}),
    ]


@pytest.mark.parametrize("artifact", _artifacts(), ids=lambda a: type(a).__name__)
def test_save_load_round_trip_is_lossless(artifact, tmp_path):
    assert artifact.save(tmp_path) is True
    loaded = type(artifact).load(tmp_path)
    assert type(loaded) is type(artifact)
    assert same_numbers(loaded.numbers(), artifact.numbers())
    for field in type(artifact).saved_fields:
        assert same_numbers(getattr(loaded, field), getattr(artifact, field)), field
    if isinstance(artifact, Estimate):
        assert loaded.interval is not None and isinstance(loaded.interval, tuple)
    if "pair" in artifact.info:
        assert loaded.info["pair"] == (1, 2.5) and math.isnan(loaded.info["nan"])
        assert isinstance(loaded.info["array"], np.ndarray) and loaded.info["big"].shape == (10, 20)


def test_load_checks_the_type_and_unsaveable_artifacts_say_so(tmp_path):
    Samples(x=torch.zeros(2, 1)).save(tmp_path / "s")
    with pytest.raises(QuadrigaError, match="holds a Samples, not a Estimate"):
        Estimate.load(tmp_path / "s")
    assert Estimate.load(tmp_path / "nothing") is None
    assert Estimate(value=1.0, predict=lambda x: x).save(tmp_path / "e") is False
    assert Metrics(values={"a": 1.0}, info={"obj": object()}).save(tmp_path / "m") is False


def test_problems_and_summaries():
    bad = Samples(x=torch.tensor([[0.0], [float("nan")]]), log_weights=torch.zeros(3))
    assert bad.non_finite() == ["Samples.x"]
    assert any("log_weights has shape (3,)" in p for p in bad.problems())
    assert any("non-finite" in p for p in bad.problems())
    assert Estimate(value="x").problems() == ["Estimate.value must be a number or a tensor/array, got str"]
    assert Metrics().problems() == ["Metrics is empty"]
    m = Metrics(values={"a/ess": 10.0, "a/ess_min_per_second": 3.0}, info={"seconds": 1.0, "n": 2})
    s = m.summary()
    assert s["values"] == {"a/ess": 10.0} and s["info"] == {"n": 2}
    rows = [{"subject": "a", "ess": 10.0, "ess_min_per_second": 3.0}, {"subject": "b", "ess": 9.0}]
    m = Metrics(values={"a/ess": 10.0}, tables={"summary": rows, "other": "kept"})
    assert m.summary()["tables"] == {"summary": [{"subject": "a", "ess": 10.0}, rows[1]], "other": "kept"}
    quicker = [{**rows[0], "ess_min_per_second": 4.0}, rows[1]]
    faster = Metrics(values={"a/ess": 10.0}, tables={"summary": quicker})
    assert same_numbers(m.numbers()["tables"]["summary"], faster.numbers()["tables"]["summary"])
    assert m.tables["summary"][0]["ess_min_per_second"] == 3.0  # the artifact itself keeps it
    assert Samples(x=torch.zeros(4, 2), info={"wall_time": 3}).summary() == {
        "type": "Samples",
        "num_samples": 4,
        "dim": 2,
        "info": {},
    }


def _pipe():
    return {
        "pipeline": {"name": "links", "seed": 1},
        "task": {"normal": {"use": "toy-normal"}},
        "stage": {"draw": {"use": "toy-iid", "inputs": {"target": "normal"}, "num_samples": 10}},
    }


def test_symlinks_in_a_run_directory_are_refused(registry, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "link")
    with pytest.raises(ConfigError, match="symbolic link"):
        run(_pipe(), registry=registry, out=tmp_path / "link")
    first = run(_pipe(), registry=registry, out=tmp_path / "r")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    stages = first.dir / "stages"
    for child in stages.iterdir():
        for f in child.iterdir():
            f.unlink()
        child.rmdir()
    stages.rmdir()
    os.symlink(elsewhere, stages)
    status = first.dir / "status.json"
    status.write_text(status.read_text().replace('"finished"', '"failed"'))
    with pytest.raises(ConfigError, match="symbolic link"):  # refused before anything runs
        run(_pipe(), registry=registry, resume=first.dir, raise_on_failure=False)
    assert not any(elsewhere.iterdir())


def test_stage_names_that_used_to_collide_resume_their_own_artifacts(registry, tmp_path):
    data = _pipe()
    data["stage"]["draw_"] = {"use": "toy-iid", "inputs": {"target": "normal"}, "num_samples": 7}
    data["stage"]["est"] = {"use": "toy-mean", "kind": "estimator", "inputs": {"data": "draw_"}}
    first = run(data, registry=registry, out=tmp_path / "r")
    assert {p.name for p in (first.dir / "stages").iterdir()} == {"draw", "draw_", "est"}
    resumed = run(data, registry=registry, resume=first.dir)
    assert resumed.artifacts["draw"].num_samples == 10 and resumed.artifacts["draw_"].num_samples == 7
    assert torch.equal(resumed.artifacts["draw_"].x, first.artifacts["draw_"].x)
    assert resumed.artifacts["est"].value == first.artifacts["est"].value


def test_resume_keeps_the_first_manifest_and_appends_each_resume(registry, tmp_path):
    first = run(_pipe(), registry=registry, out=tmp_path / "r")
    path = first.dir / "manifest.json"
    original = json.loads(path.read_text())
    original["started_utc"] = "2000-01-01T00:00:00+00:00"  # mark the first attempt's record
    path.write_text(json.dumps(original))
    run(_pipe(), registry=registry, resume=first.dir)
    run(_pipe(), registry=registry, resume=first.dir)
    after = json.loads(path.read_text())
    assert after["started_utc"] == "2000-01-01T00:00:00+00:00"
    assert len(after["resumes"]) == 2 and all("started_utc" in r for r in after["resumes"])
