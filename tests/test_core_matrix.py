"""Methods x tasks in one table: a matrix over ``use`` and ``inputs``, and ``--set stage.NAME.use=...``."""

from __future__ import annotations

import logging

import pytest
from qtest_helpers import run_cli

from quadriga.api import check, run
from quadriga.errors import ConfigError
from quadriga.pipeline_schema import NOT_VARIED, RESERVED, StageTable, TaskTable
from quadriga.stage_names import StageName, format_stage_name, parse_stage_name


def grid(**stage):
    """Two targets (means 1.5 and -3) and one matrix stage ``draw``."""
    return {
        "pipeline": {"name": "grid", "seed": 3},
        "task": {
            "near": {"use": "toy-normal", "dimension": 2, "mean": 1.5},
            "far": {"use": "toy-normal", "dimension": 2, "mean": -3.0},
        },
        "stage": {"draw": stage},
    }


METHODS_X_TASKS = {
    "matrix": {"use": ["toy-iid", "mala"], "inputs": {"target": ["near", "far"]}},
    "num_samples": 400,
}


def test_matrix_over_use_and_inputs_names_points_and_binds_each_input(registry, tmp_path):
    p = check(grid(**METHODS_X_TASKS), registry=registry)
    assert list(p.stages) == [
        "draw[use=toy-iid,inputs.target=near]",
        "draw[use=toy-iid,inputs.target=far]",
        "draw[use=mala,inputs.target=near]",
        "draw[use=mala,inputs.target=far]",
    ]
    uses = [(n.use, n.kind, n.inputs["target"], n.source) for n in p.stages.values()]
    assert uses == [
        ("toy-iid", "sampler", "near", "draw"),
        ("toy-iid", "sampler", "far", "draw"),
        ("mala", "sampler", "near", "draw"),
        ("mala", "sampler", "far", "draw"),
    ]
    # the shared parameter reaches both components; each keeps its own defaults
    assert p.stages["draw[use=mala,inputs.target=far]"].config["num_samples"] == 400
    assert p.stages["draw[use=mala,inputs.target=far]"].config["burn_in"] == 500
    result = run(grid(**METHODS_X_TASKS), registry=registry, out=tmp_path / "r")
    assert result.status == "finished"
    # exact draws: the mean over 400 x 2 coordinates lies within 6 standard errors (0.035) of the target's
    near = result.artifacts["draw[use=toy-iid,inputs.target=near]"].x.mean().item()
    far = result.artifacts["draw[use=toy-iid,inputs.target=far]"].x.mean().item()
    assert abs(near - 1.5) < 0.22 and abs(far + 3.0) < 0.22


def test_a_leading_part_of_a_point_selects_its_expansions_in_order(registry):
    data = grid(**METHODS_X_TASKS, repeat=2)
    data["stage"]["draw"]["matrix"] = {"inputs": {"target": ["near", "far"]}, "use": ["toy-iid", "mala"]}
    data["stage"]["check"] = {
        "use": "toy-mean",
        "kind": "evaluator",
        "inputs": {"subject": "draw[inputs.target=far][*]", "reference": "far"},
    }
    p = check(data, registry=registry)
    assert p.stages["check"].inputs["subject"] == [
        "draw[inputs.target=far,use=toy-iid][0]",
        "draw[inputs.target=far,use=toy-iid][1]",
        "draw[inputs.target=far,use=mala][0]",
        "draw[inputs.target=far,use=mala][1]",
    ]


def test_matrix_names_read_back_as_their_parts_and_nodes_carry_the_point(registry):
    data = grid(**METHODS_X_TASKS, repeat=2)
    data["task"]["far"]["repeat"] = 2  # inputs.target = "far" binds replicate-wise to far[i]
    p = check(data, registry=registry)
    node = p.stages["draw[use=mala,inputs.target=far][1]"]
    assert parse_stage_name(node.name) == StageName("draw", (("use", "mala"), ("inputs.target", "far")), 1)
    assert node.stage_name == parse_stage_name(node.name)
    assert (node.inputs["target"], node.point) == ("far[1]", (("use", "mala"), ("inputs.target", "far")))
    assert all(format_stage_name(parse_stage_name(n)) == n for n in p.stages)


def test_a_leading_part_of_a_point_is_compared_as_parsed_values(registry):
    data = grid(use="toy-iid", inputs={"target": "near"}, matrix={"num_samples": [5, 6], "nan": [False]})
    data["stage"]["check"] = {
        "use": "toy-mean",
        "kind": "evaluator",
        # 5 and 6 are the integers the names hold; "5.0" and "draw[num" select nothing
        "inputs": {"subject": "draw[num_samples=5][*]", "reference": "near"},
    }
    assert check(data, registry=registry).stages["check"].inputs["subject"] == [
        "draw[num_samples=5,nan=false]"
    ]
    for bad in ("draw[num_samples=5.0][*]", "draw[num[*]", "draw[num_samples=5][0][*]"):
        data["stage"]["check"]["inputs"]["subject"] = bad
        with pytest.raises(ConfigError, match="selects nothing"):
            check(data, registry=registry)


def test_an_axis_of_component_tables_is_named_by_their_use(registry):
    wrap = {
        "use": "toy-wrap",
        "inputs": {"target": "near"},
        "matrix": {"inner": [{"use": "toy-iid", "num_samples": 5}, {"use": "mala", "num_samples": 5}]},
    }
    p = check(grid(**wrap), registry=registry)
    assert list(p.stages) == ["draw[inner=toy-iid]", "draw[inner=mala]"]
    assert p.stages["draw[inner=mala]"].point == (("inner", "mala"),)  # the point as the name writes it
    # two tables with one use: their full values tell them apart
    wrap["matrix"] = {"inner": [{"use": "toy-iid", "num_samples": 5}, {"use": "toy-iid", "num_samples": 6}]}
    assert list(check(grid(**wrap), registry=registry).stages) == [
        'draw[inner={"num_samples":5,"use":"toy-iid"}]',
        'draw[inner={"num_samples":6,"use":"toy-iid"}]',
    ]


@pytest.mark.parametrize(
    ("matrix", "key", "message"),
    [
        (
            {"use": ["toy-iid", "toy-iidd"]},
            "matrix.use",
            r"toy-iidd.*Did you mean 'toy-iid'.*expansion 'draw\[use=toy-iidd",
        ),
        ({"inputs": {"target": ["near", "farr"]}}, "matrix.inputs.target", r"'farr'.*Did you mean 'far'"),
        ({"inputs.target": ["near", "near"]}, "matrix", "same point twice"),
        ({"inputs": {"target": "near"}}, "matrix.inputs.target", "non-empty list"),
        ({"replicate": [0, 1]}, "matrix.replicate", "cannot vary"),
    ],
)
def test_matrix_errors_name_the_source_table_and_the_matrix_key(registry, matrix, key, message):
    stage = {"use": "toy-iid", "num_samples": 5, "matrix": matrix}
    if "use" in matrix:
        del stage["use"]
        stage["inputs"] = {"target": "near"}
    with pytest.raises(ConfigError, match=message) as info:
        check(grid(**stage), registry=registry)
    assert (info.value.table, info.value.key, info.value.file) == ("stage.draw", key, "<dict>")


def test_set_use_swaps_the_component_drops_what_it_does_not_take_and_says_so(registry, caplog):
    data = grid(use="mala", inputs={"target": "near"}, num_samples=30, burn_in=7, step_size=0.2)
    with caplog.at_level(logging.INFO, logger="quadriga.pipeline_source"):
        p = check(data, registry=registry, overrides=["stage.draw.use=toy-iid"])
    node = p.stages["draw"]
    assert (node.use, node.config["num_samples"]) == ("toy-iid", 30)
    assert "burn_in" not in node.config and "step_size" not in node.config
    assert p.notes == [
        "--set stage.draw.use=toy-iid: [stage.draw] uses 'toy-iid' instead of 'mala'; "
        "dropped burn_in, step_size, which 'toy-iid' does not take."
    ]
    assert p.notes[0] in caplog.text
    # no swap, no note; an unknown name is the usual error naming the key
    assert check(data, registry=registry, overrides=["stage.draw.use=mala"]).notes == []
    with pytest.raises(ConfigError, match="Did you mean 'toy-iid'") as info:
        check(data, registry=registry, overrides=["stage.draw.use=toy-iidd"])
    assert (info.value.table, info.value.key) == ("stage.draw", "use")


def test_cli_check_prints_the_swap_note(plugin_path, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(
        '[pipeline]\nname = "swap"\n[task.near]\nuse = "toy-normal"\n'
        '[stage.draw]\nuse = "mala"\ninputs = { target = "near" }\nnum_samples = 20\nburn_in = 3\n'
    )
    proc = run_cli(["run", str(path), "--check", "--set", "stage.draw.use=toy-iid"], site=plugin_path)
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    assert (
        "note: --set stage.draw.use=toy-iid: [stage.draw] uses 'toy-iid' instead of 'mala'; dropped burn_in"
        in out
    )


def test_one_reserved_key_set():
    assert {"use", "kind", "inputs", "source", "replicate", "device", "save", "save_thin"} <= RESERVED
    assert {"repeat", "matrix"} <= RESERVED
    assert NOT_VARIED == RESERVED - {"use", "inputs", "device"}
    assert set(TaskTable.misplaced) == {"inputs", "save", "save_thin"}
    assert StageTable.kinds == ("sampler", "learner", "estimator", "evaluator")


@pytest.mark.parametrize(
    ("edit", "table", "key", "message"),
    [
        (lambda d: d["pipeline"].update(sed=2), "pipeline", "sed", r"Did you mean 'seed'.*takes name, seed"),
        (lambda d: d["pipeline"].update(device="gpu"), "pipeline", "device", '"cuda:N"'),
        (lambda d: d["task"]["near"].update(inputs={}), "task.near", "inputs", r"move this table to \[stage"),
        (lambda d: d["task"]["near"].update(save=False), "task.near", "save", "belongs in a"),
        (lambda d: d["stage"]["draw"].update(save="no"), "stage.draw", "save", "true or false"),
        (lambda d: d["stage"]["draw"].update(kind="sampelr"), "stage.draw", "kind", "Did you mean 'sampler'"),
        (
            lambda d: d["stage"]["draw"].update(inputs={"target": 3}),
            "stage.draw",
            "inputs.target",
            "name a task",
        ),
    ],
)
def test_schema_errors_name_table_and_key(registry, edit, table, key, message):
    data = grid(use="toy-iid", inputs={"target": "near"})
    edit(data)
    with pytest.raises(ConfigError, match=message) as info:
        check(data, registry=registry)
    assert (info.value.table, info.value.key) == (table, key)


def test_set_reaches_a_matrix_axis_and_creates_missing_inputs(registry):
    p = check(
        grid(**METHODS_X_TASKS), registry=registry, overrides=['stage.draw.matrix.inputs.target=["far"]']
    )
    assert list(p.stages) == ["draw[use=toy-iid,inputs.target=far]", "draw[use=mala,inputs.target=far]"]
    p = check(grid(use="toy-iid"), registry=registry, overrides=["stage.draw.inputs.target=far"])
    assert p.stages["draw"].inputs == {"target": "far"}
