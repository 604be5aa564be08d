"""Replication in the pipeline language: repeat, matrix, name[*], replicate-wise binding, seeds."""

from __future__ import annotations

import json
import sys

import pytest
import torch

from quadriga.api import check, run
from quadriga.errors import ConfigError
from quadriga.runs import stage_dir_name
from quadriga.seeding import derive_seed
from quadriga.stage_names import format_point, replicate_base, replicate_groups

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def base(**stages):
    return {
        "pipeline": {"name": "rep", "seed": 7},
        "task": {"normal": {"use": "toy-normal", "dimension": 2, "mean": 1.5}},
        "stage": stages,
    }


DRAW = {"use": "toy-iid", "inputs": {"target": "normal"}, "num_samples": 50, "repeat": 3}
VARY = {"use": "toy-iid", "inputs": {"target": "normal"}}


def test_repeat_expands_binds_replicate_wise_and_selects_with_star(registry, tmp_path):
    data = base(
        draw=dict(DRAW),
        est={"use": "toy-mean", "kind": "estimator", "inputs": {"data": "draw"}, "repeat": 3},
        check={
            "use": "toy-mean",
            "kind": "evaluator",
            "inputs": {"subject": "draw[*]", "reference": "normal"},
        },
    )
    p = check(data, registry=registry)
    assert list(p.stages) == [
        "draw[0]",
        "draw[1]",
        "draw[2]",
        "est[0]",
        "est[1]",
        "est[2]",
        "check",
    ]
    assert [p.stages[f"est[{i}]"].inputs["data"] for i in range(3)] == ["draw[0]", "draw[1]", "draw[2]"]
    assert p.stages["check"].inputs["subject"] == ["draw[0]", "draw[1]", "draw[2]"]
    result = run(data, registry=registry, out=tmp_path / "r")
    assert result.status == "finished"
    for i in range(3):
        x0 = result.artifacts[f"draw[{i}]"].x[:, 0]
        assert result.artifacts[f"est[{i}]"].value == pytest.approx(float(x0.mean()))
        err = result.results["stages"]["check"]["values"][f"draw[{i}]/mean_error"]
        assert err == pytest.approx(abs(float(x0.mean()) - 1.5))
    assert not torch.equal(result.artifacts["draw[0]"].x, result.artifacts["draw[1]"].x)
    manifest = json.loads((result.dir / "manifest.json").read_text())
    assert manifest["seeds"]["stage.draw[1]"] == derive_seed(7, "stage.sampler[1]")
    assert manifest["seeds"]["stage.check"] == derive_seed(7, "stage.check")
    assert manifest["seeds"]["task.normal"] == derive_seed(7, "task.normal")


def test_replicate_i_of_every_repeated_stage_of_one_kind_shares_its_seed(registry, tmp_path):
    data = base(draw=dict(DRAW), other=dict(DRAW, num_samples=50), plain=dict(DRAW))
    del data["stage"]["plain"]["repeat"]
    result = run(data, registry=registry, out=tmp_path / "r")
    for i in range(3):  # common random numbers: the arms of one replicate are paired
        assert torch.equal(result.artifacts[f"draw[{i}]"].x, result.artifacts[f"other[{i}]"].x)
    assert not torch.equal(result.artifacts["draw[0]"].x, result.artifacts["plain"].x)
    # a different root seed changes every replicate
    again = run(data, registry=registry, out=tmp_path / "s", seed=8)
    assert not torch.equal(again.artifacts["draw[0]"].x, result.artifacts["draw[0]"].x)


def test_matrix_with_repeat_names_points_and_pools_by_configuration(registry, tmp_path):
    draw = dict(DRAW, repeat=2, matrix={"num_samples": [20, 40]})
    del draw["num_samples"]
    data = base(
        draw=draw,
        check={
            "use": "toy-mean",
            "kind": "evaluator",
            "inputs": {
                "subject": ["draw[num_samples=40][*]", "draw[num_samples=20][1]"],
                "reference": "normal",
            },
        },
    )
    result = run(data, registry=registry, out=tmp_path / "m")
    names = [n for n in result.artifacts if n.startswith("draw")]
    assert names == [
        "draw[num_samples=20][0]",
        "draw[num_samples=20][1]",
        "draw[num_samples=40][0]",
        "draw[num_samples=40][1]",
    ]
    assert result.artifacts["draw[num_samples=40][1]"].num_samples == 40
    assert result.artifacts["draw[num_samples=20][0]"].num_samples == 20
    values = result.results["stages"]["check"]["values"]
    assert sorted(values) == sorted(
        f"{n}/mean_error"
        for n in ("draw[num_samples=40][0]", "draw[num_samples=40][1]", "draw[num_samples=20][1]")
    )
    groups = replicate_groups({n: result.artifacts[n] for n in names})
    assert list(groups) == ["draw[num_samples=20]", "draw[num_samples=40]"]
    assert list(groups["draw[num_samples=40]"]) == ["draw[num_samples=40][0]", "draw[num_samples=40][1]"]
    # the saved pipeline.toml holds the expanded form and reruns to the same numbers
    saved = tomllib.loads((result.dir / "pipeline.toml").read_text())
    assert saved["stage"]["draw[num_samples=40][1]"]["replicate"] == 1
    assert saved["stage"]["draw[num_samples=40][1]"]["source"] == "draw"
    assert "repeat" not in saved["stage"]["draw[num_samples=40][1]"]
    again = run(result.dir / "pipeline.toml", registry=registry, out=tmp_path / "m2")
    assert (again.dir / "results.json").read_text() == (result.dir / "results.json").read_text()
    # distinct stage directories for every expanded name
    dirs = {p.name for p in (result.dir / "stages").iterdir()}
    assert stage_dir_name("draw[num_samples=40][1]") in dirs and len(dirs) == 5


def test_matrix_points_without_repeat_share_the_source_seed(registry, tmp_path):
    draw = {
        "use": "toy-iid",
        "inputs": {"target": "normal"},
        "matrix": {"nan": [False], "num_samples": [30, 31]},
    }
    p = check(base(draw=draw), registry=registry)
    seeds = p.seeds()
    assert seeds["stage.draw[nan=false,num_samples=30]"] == seeds["stage.draw[nan=false,num_samples=31]"]
    assert seeds["stage.draw[nan=false,num_samples=30]"] == derive_seed(7, "stage.draw")


def test_repeated_tasks_bind_replicate_wise_and_overrides_set_repeat(registry):
    data = base(draw={"use": "toy-iid", "inputs": {"target": "normal"}})
    data["task"]["normal"]["repeat"] = 2
    p = check(data, registry=registry, overrides=["stage.draw.repeat=2"])
    assert list(p.tasks) == ["normal[0]", "normal[1]"]
    assert [p.stages[f"draw[{i}]"].inputs["target"] for i in range(2)] == ["normal[0]", "normal[1]"]
    assert p.seeds()["task.normal[1]"] == derive_seed(7, "task.target[1]")


@pytest.mark.parametrize(
    ("stage", "table", "key", "message"),
    [
        (dict(DRAW, repeat=0), "stage.draw", "repeat", "repeat must be an integer >= 1"),
        (dict(DRAW, repeat=True), "stage.draw", "repeat", "repeat must be an integer >= 1"),
        (dict(DRAW, matrix={"num_samples": []}), "stage.draw", "matrix.num_samples", "non-empty list"),
        (dict(DRAW, matrix={"num_samples": [1, 2]}), "stage.draw", "matrix.num_samples", "both in the table"),
        (dict(DRAW, matrix=[1]), "stage.draw", "matrix", "matrix must be a table"),
        (dict(DRAW, matrix={"kind": ["sampler"]}), "stage.draw", "matrix.kind", "cannot vary"),
        (dict(DRAW, matrix={"save": [True, False]}), "stage.draw", "matrix.save", "cannot vary"),
        (dict(DRAW, matrix={"use": ["toy-iid"]}), "stage.draw", "matrix.use", "both in the table and in its"),
        (dict(DRAW, matrix={"inputs": ["normal"]}), "stage.draw", "matrix.inputs", "matrix = { inputs.ARG"),
        (
            dict(VARY, matrix={"num_sample": [1, 2]}),
            "stage.draw",
            "matrix.num_sample",
            r"expansion 'draw\[num",
        ),
        (
            dict(VARY, matrix={"num_samples": [3, 0]}),
            "stage.draw",
            "matrix.num_samples",
            r"'draw\[num_samples=0\]'",
        ),
        (dict(VARY, repeat=2, nan="x"), "stage.draw", "nan", r"in its expansion 'draw\[0\]'"),
    ],
)
def test_expansion_errors_name_the_source_table(registry, stage, table, key, message):
    with pytest.raises(ConfigError, match=message) as info:
        check(base(draw=stage), registry=registry)
    assert info.value.table == table and info.value.key == key


def test_ambiguous_or_empty_selections_are_refused(registry):
    est = {"use": "toy-mean", "kind": "estimator", "inputs": {"data": "draw"}}
    with pytest.raises(ConfigError, match=r"expanded into 3 tables.*'draw\[\*\]'.*repeat = 3") as info:
        check(base(draw=dict(DRAW), est=est), registry=registry)
    assert info.value.table == "stage.est" and info.value.key == "inputs.data"
    with pytest.raises(ConfigError, match="expanded into 3 tables") as info:  # repeat counts differ
        check(base(draw=dict(DRAW), est=dict(est, repeat=2)), registry=registry)
    assert info.value.table == "stage.est"
    star = dict(est, inputs={"data": "drw[*]"})
    with pytest.raises(ConfigError, match=r"selects nothing.*draw"):
        check(base(draw=dict(DRAW), est=star), registry=registry)
    one = dict(est, inputs={"data": "draw[2]"})
    assert check(base(draw=dict(DRAW), est=one), registry=registry).stages["est"].inputs["data"] == "draw[2]"


def test_names_helpers():
    assert replicate_base("mala[step_size=0.1][2]") == "mala[step_size=0.1]"
    assert replicate_base("mala[step_size=0.1]") == "mala[step_size=0.1]"
    assert replicate_base("dqn[10]") == "dqn" and replicate_base("dqn") == "dqn"
    assert (
        format_point({"a": 0.1, "b": "adam", "c": True, "d": "two words"})
        == 'a=0.1,b=adam,c=true,d="two words"'
    )
    assert stage_dir_name("mala") != stage_dir_name("mala_")
    assert stage_dir_name("dqn[0]") == "dqn%5B0%5D"
    long = "x" * 70 + "[" + "y=1," * 30 + "]"
    assert len(stage_dir_name(long)) <= 100 and stage_dir_name(long) != stage_dir_name(long + "[0]")
