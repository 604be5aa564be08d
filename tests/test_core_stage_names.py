"""The stage-name grammar: parse/format round trip over the expansion's own output, errors, records."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from quadriga.api import check, run
from quadriga.errors import ConfigError
from quadriga.expansion import expand_sections
from quadriga.notebook import to_pandas
from quadriga.stage_names import (
    StageName,
    format_stage_name,
    parse_stage_name,
    replicate_base,
    replicate_index,
)


def _err(message, table=None, key=None):
    return ConfigError(message, table=table, key=key)


_scalars = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
#: what a TOML matrix list may hold: scalars, arrays and tables of them
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
_sources = st.from_regex(r"[A-Za-z][A-Za-z0-9_.-]{0,63}", fullmatch=True)
_keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}(\.[A-Za-z_][A-Za-z0-9_]{0,8})?", fullmatch=True)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    source=_sources,
    matrix=st.one_of(
        st.none(),
        st.dictionaries(_keys, st.lists(_values, min_size=1, max_size=3), min_size=1, max_size=3).filter(
            lambda m: len({k.split(".")[0] for k in m}) == len(m)
        ),  # no key nested in another
    ),
    repeat=st.one_of(st.none(), st.integers(1, 3)),
)
def test_format_parse_round_trip_over_every_name_the_expansion_writes(source, matrix, repeat):
    assume(matrix is not None or repeat is not None)
    table = {"use": "x"}
    if matrix is not None:
        table["matrix"] = matrix
    if repeat is not None:
        table["repeat"] = repeat
    try:
        out = expand_sections({"stage": {source: table}}, _err)
    except ConfigError as exc:  # two values written alike ("1" and 1): refused, by design
        assume("same point twice" not in str(exc))
        raise
    names = list(out["stage"])
    assert len(names) == (repeat or 1) * math.prod(len(v) for v in (matrix or {}).values())
    for name, expanded in out["stage"].items():
        parsed = parse_stage_name(name)
        assert format_stage_name(parsed) == name == str(parsed)
        assert parsed.source == source == expanded["source"]
        assert parsed.replicate == expanded.get("replicate")
        assert [k for k, _ in parsed.point] == list(matrix or {})
        assert replicate_index(name) == parsed.replicate
        assert replicate_base(name) == format_stage_name(parsed.base)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mala", StageName("mala")),
        ("dqn[3]", StageName("dqn", (), 3)),
        ("mala[step_size=0.1]", StageName("mala", (("step_size", 0.1),))),
        ("fkc[num_particles=64][2]", StageName("fkc", (("num_particles", 64),), 2)),
        (
            'w[a=true,kernel.step_size=1e-05,b="two words",c=[1,2]][10]',
            StageName(
                "w",
                (
                    ("a", True),
                    ("kernel.step_size", 1e-05),
                    ("b", "two words"),
                    ("c", [1, 2]),
                ),
                10,
            ),
        ),
        ("s[opt=adam,lr=inf]", StageName("s", {"opt": "adam", "lr": math.inf})),
        ('t[d={"x":"]","y":[true,null]}]', StageName("t", {"d": {"x": "]", "y": [True, None]}})),
        ("s[tag=1e5,v=007,w=-0]", StageName("s", (("tag", "1e5"), ("v", "007"), ("w", "-0")))),
    ],
)
def test_parse_reads_each_part_with_its_type(text, expected):
    parsed = parse_stage_name(text)
    assert parsed == expected
    assert [type(v) for _, v in parsed.point] == [type(v) for _, v in expected.point]
    assert format_stage_name(parsed) == text


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "must start with a letter"),
        ("1abc", "must start with a letter"),
        ("mala[]", "expected key=value at position 5"),
        ("mala[step_size]", "expected key=value"),
        ("mala[step_size=0.1", r"expected ',' or '\]' at position 18"),
        ("mala[3][4]", r"unexpected '\[4\]' after 'mala\[3\]'"),
        ("mala[a=1][0]x", "unexpected 'x'"),
        ("mala[a=two words]", "expected ','"),
        ("mala[a=1,a=2]", "the key 'a' appears twice"),
        ('mala[a="open]', "not valid JSON"),
        ("mala[a=]", "missing or holds characters that need quoting"),
        ("mala/tv", "unexpected '/tv'"),
    ],
)
def test_malformed_names_raise_config_error_quoting_the_text(text, why):
    with pytest.raises(ConfigError, match=why) as info:
        parse_stage_name(text)
    assert repr(text) in str(info.value) and "NAME[k=v,...][i]" in str(info.value)
    assert replicate_index(text) is None and replicate_base(text) == text  # the lenient readers


def test_replicate_helpers_leave_names_that_are_not_stage_names_alone():
    assert replicate_base("model A[2]") == "model A[2]" and replicate_index("model A[2]") is None
    assert replicate_base("mala[step_size=0.1][2]") == "mala[step_size=0.1]"
    assert replicate_index("mala[step_size=0.1]") is None and replicate_index("dqn[12]") == 12


def test_matrix_keys_must_be_parameter_paths(registry):
    data = {
        "pipeline": {"name": "k", "seed": 0},
        "task": {"normal": {"use": "toy-normal", "dimension": 2}},
        "stage": {"draw": {"use": "toy-iid", "inputs": {"target": "normal"}, "matrix": {"a=b": [1]}}},
    }
    with pytest.raises(ConfigError, match="matrix key 'a=b' must be a parameter name") as info:
        check(data, registry=registry)
    assert info.value.table == "stage.draw" and info.value.key == "matrix"


def test_nodes_carry_their_point_and_the_run_records_source_point_replicate(registry, tmp_path):
    data = {
        "pipeline": {"name": "names", "seed": 3},
        "task": {"normal": {"use": "toy-normal", "dimension": 2}},
        "stage": {
            "draw": {
                "use": "toy-iid",
                "inputs": {"target": "normal"},
                "matrix": {"num_samples": [20, 40], "nan": [False]},
                "repeat": 2,
            },
            "one": {"use": "toy-iid", "inputs": {"target": "normal"}, "num_samples": 10},
        },
    }
    p = check(data, registry=registry)
    node = p.stages["draw[num_samples=40,nan=false][1]"]
    assert node.point == (("num_samples", 40), ("nan", False)) and node.replicate == 1
    assert node.stage_name == StageName("draw", {"num_samples": 40, "nan": False}, 1)
    assert p.stages["one"].point == () and p.stages["one"].stage_name == StageName("one")
    result = run(data, registry=registry, out=tmp_path / "r")
    stages = json.loads((result.dir / "results.json").read_text())["stages"]
    entry = stages["draw[num_samples=40,nan=false][1]"]
    assert (entry["source"], entry["point"], entry["replicate"]) == (
        "draw",
        {"num_samples": 40, "nan": False},
        1,
    )
    assert list(entry["point"]) == ["num_samples", "nan"]  # matrix order
    one = stages["one"]
    assert (one["source"], one["point"], one["replicate"]) == ("one", {}, None)
    info = result.artifacts["draw[num_samples=20,nan=false][0]"].info
    assert (info["source"], info["point"], info["replicate"]) == (
        "draw",
        {"num_samples": 20, "nan": False},
        0,
    )
    assert entry["info"]["point"] == {"num_samples": 40, "nan": False}
    metrics = set(to_pandas(result.dir)["metric"])  # the name's parts are not numbers of the stage
    assert "num_samples" in metrics and not metrics & {"source", "point", "replicate"}


def test_point_mismatches_compare_a_table_with_the_point_in_its_name():
    from quadriga.expansion import point_mismatches

    assert point_mismatches("m[step_size=0.1][2]", {"step_size": 0.1, "other": 3}) == []
    assert point_mismatches("m[step_size=0.1]", {"step_size": 0.2}) == [("step_size", 0.1, 0.2)]
    assert point_mismatches("m[n=1]", {"n": 1.0}) == []  # a float parameter resolved from 1
    assert point_mismatches("m[flag=true]", {"flag": 1}) == [("flag", True, 1)]
    assert point_mismatches("m[label=1]", {"label": "1"}) == []  # the name writes "1" and 1 alike
    # a component axis is written by its use; a nested key and an input are followed
    assert point_mismatches("m[sampler=hmc]", {"sampler": {"use": "hmc", "step": 0.1}}) == []
    assert point_mismatches("m[sampler=hmc]", {"sampler": {"use": "mala"}}) == [
        ("sampler", "hmc", {"use": "mala"})
    ]
    table = {"kernel": {"step_size": 0.3}, "inputs": {"target": "gmm"}}
    assert point_mismatches("m[kernel.step_size=0.3,inputs.target=gmm]", table) == []
    assert point_mismatches("m[kernel.step_size=0.5,inputs.target=funnel]", table) == [
        ("kernel.step_size", 0.5, 0.3),
        ("inputs.target", "funnel", "gmm"),
    ]
    assert point_mismatches("m", {"step_size": 1}) == [] and point_mismatches("m[q=1]", {}) == []


def test_split_subject_key_keeps_a_metric_holding_a_slash_whole():
    from quadriga.stage_names import split_subject_key

    stages = {"fit", "mala[step_size=0.1][0]", "a/b"}
    assert split_subject_key("fit/flowrl/mean_reward", stages) == ("fit", "flowrl/mean_reward")
    assert split_subject_key("mala[step_size=0.1][0]/tv", stages) == ("mala[step_size=0.1][0]", "tv")
    assert split_subject_key("a/b/tv", stages) == ("a/b", "tv")  # the longest stage name wins
    assert split_subject_key("x/y/tv") == ("x/y", "tv")  # no stage known: the last slash
    assert split_subject_key("tv", stages) == ("", "tv")
