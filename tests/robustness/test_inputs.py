"""Malformed inputs: each one exit 2 with one paragraph naming the file, table and key (or the flag),
no traceback, and nothing run or written (no ``runs/`` directory afterwards)."""

from __future__ import annotations

import pytest
from robust_helpers import GOOD, assert_clean

STD = """\
[pipeline]
name = "std"
[task.gauss]
use = "gaussian"
dim = 2
[stage.mcmc]
use = "{sampler}"
inputs = {{ target = "gauss" }}
num_samples = 20
burn_in = 0
{extra}
"""

GYM = """\
[pipeline]
name = "gym"
[task.env]
use = "gym-env"
env_id = "CartPole-v1"
{extra}
[stage.draw]
use = "toy-iid"
inputs = {{ target = "normal" }}
[task.normal]
use = "toy-normal"
"""


def edit(old: str, new: str, text: str = GOOD) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def wrap(depth: int) -> str:
    inner = '{ use = "toy-iid" }'
    for _ in range(depth):
        inner = f'{{ use = "toy-wrap", inner = {inner} }}'
    return edit(
        "[stage.check]",
        f'[stage.deep]\nuse = "toy-wrap"\ninputs = {{ target = "normal" }}\ninner = {inner}\n\n[stage.check]',
    )


CYCLE = """
[stage.a]
use = "toy-mean"
kind = "evaluator"
inputs = { subject = ["b"], reference = "normal" }
[stage.b]
use = "toy-mean"
kind = "evaluator"
inputs = { subject = ["a"], reference = "normal" }
"""
BIG = 2**70
#: (id, pipeline file content (str or bytes; None: no file), extra argv, text the message must contain)
CASES = [
    # ---- encoding and syntax
    ("not-utf8", b"\xff\xfe[pipeline]\n", [], ["p.toml", "UTF-8"]),
    ("latin1-in-string", GOOD.replace('"good"', '"caf\xe9"').encode("latin-1"), [], ["p.toml", "UTF-8"]),
    ("nested-arrays-5000", "x = " + "[" * 5000 + "]" * 5000 + "\n", [], ["p.toml", "nested"]),
    ("nested-inline-3000", "x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n", [], ["p.toml", "nested"]),
    ("component-nested-300", wrap(300), [], ["p.toml", "stage.deep", "nested"]),
    ("bad-syntax", "[pipeline\nname = 1\n", [], ["p.toml", "invalid TOML"]),
    ("byte-order-mark", "\ufeff" + GOOD, [], ["p.toml", "byte-order mark", "without a BOM"]),
    (
        "cyrillic-look-alike-in-key",
        edit('use = "toy-iid"', 'u\u0455e = "toy-iid"'),
        [],
        ["p.toml", "line 9, column 2", "U+0455 CYRILLIC SMALL LETTER DZE", "look-alike"],
    ),
    ("uppercase-component", edit('use = "toy-iid"', 'use = "TOY-IID"'), [], ["p.toml", "'toy-iid'"]),
    ("empty", "", [], ["p.toml", "empty"]),
    ("comments-only", "# nothing\n\n", [], ["p.toml", "[pipeline]"]),
    ("duplicate-table", GOOD + '\n[stage.draw]\nuse = "toy-iid"\n', [], ["p.toml", "defined twice"]),
    ("no-such-file", None, ["missing.toml"], ["missing.toml", "does not exist"]),
    ("a-directory", None, ["adir/"], ["adir", "not a file"]),
    # ---- structure
    (
        "no-pipeline-table",
        GOOD.split("[task.normal]", 1)[1].join(["[task.normal]", ""]),
        [],
        ["p.toml", "[pipeline]"],
    ),
    ("pipeline-not-table", "pipeline = 5\n" + GOOD.split("seed = 1\n", 1)[1], [], ["p.toml", "pipeline"]),
    ("description-int", edit("seed = 1", "seed = 1\ndescription = 5"), [], ["p.toml", "description"]),
    (
        "description-table",
        edit("seed = 1", "seed = 1\ndescription = { a = 1 }"),
        [],
        ["p.toml", "description"],
    ),
    ("name-int", edit('name = "good"', "name = 5"), [], ["p.toml", "name"]),
    ("name-slash", edit('name = "good"', 'name = "../x"'), [], ["p.toml", "name"]),
    ("seed-string", edit("seed = 1", 'seed = "x"'), [], ["p.toml", "seed"]),
    ("seed-huge", edit("seed = 1", f"seed = {BIG}"), [], ["p.toml", "seed", "64-bit"]),
    ("stage-not-table", 'stage = 5\n[pipeline]\nname = "x"\n', [], ["p.toml", "stage"]),
    ("task-list", edit("[task.normal]", "task = [1, 2]\n[task0.normal]"), [], ["p.toml", "task"]),
    ("missing-use", edit('use = "toy-iid"\n', ""), [], ["p.toml", "stage.draw", "use"]),
    (
        "unknown-component",
        edit('use = "toy-iid"', 'use = "toy-iidd"'),
        [],
        ["p.toml", "stage.draw", "toy-iid"],
    ),
    ("unknown-top", GOOD + "\n[stages.x]\nuse = 1\n", [], ["p.toml", "stages"]),
    ("unknown-meta", edit("seed = 1", "seed = 1\nsed = 2"), [], ["p.toml", "pipeline", "sed"]),
    ("bad-kind", edit('kind = "evaluator"', 'kind = "evaluatr"'), [], ["p.toml", "stage.check", "kind"]),
    (
        "stage-name-too-long",
        edit("[stage.draw]", f"[stage.{'d' * 120}]").replace('["draw"]', f'["{"d" * 120}"]'),
        [],
        ["p.toml", "120 characters long", "at most 64"],
    ),
    (
        "pipeline-name-too-long",
        edit('name = "good"', f'name = "{"g" * 100}"'),
        [],
        ["p.toml", "100 characters", "64"],
    ),
    ("name-with-space", edit("[stage.draw]", '[stage."dr aw"]'), [], ["p.toml", "dr aw"]),
    # ---- values
    (
        "int-beyond-int64",
        edit("num_samples = 50", f"num_samples = {BIG}"),
        [],
        ["p.toml", "stage.draw", "num_samples", "64-bit"],
    ),
    (
        "int-below-int64",
        edit("num_samples = 50", f"num_samples = -{BIG}"),
        [],
        ["p.toml", "num_samples", "64-bit"],
    ),
    (
        "int-in-list-beyond",
        edit("num_samples = 50", f"num_samples = 50\nx = [{BIG}]"),
        [],
        ["p.toml", "64-bit"],
    ),
    ("float-for-int", edit("num_samples = 50", "num_samples = 1.5"), [], ["p.toml", "num_samples"]),
    ("bool-for-int", edit("num_samples = 50", "num_samples = true"), [], ["p.toml", "num_samples"]),
    ("string-for-int", edit("num_samples = 50", 'num_samples = "50"'), [], ["p.toml", "num_samples"]),
    ("zero-count", edit("num_samples = 50", "num_samples = 0"), [], ["p.toml", "num_samples"]),
    ("param-typo", edit("num_samples = 50", "num_sample = 50"), [], ["p.toml", "num_sample", "num_samples"]),
    (
        "rwm-step-inf",
        STD.format(sampler="rwm", extra="step_size = inf"),
        [],
        ["p.toml", "stage.mcmc", "step_size", "finite"],
    ),
    ("ula-step-nan", STD.format(sampler="ula", extra="step_size = nan"), [], ["p.toml", "step_size"]),
    ("mala-step-neg", STD.format(sampler="mala", extra="step_size = -1.0"), [], ["p.toml", "step_size"]),
    (
        "hmc-step-inf",
        STD.format(sampler="hmc", extra="step_size = inf"),
        [],
        ["p.toml", "step_size", "finite"],
    ),
    (
        "rwm-init-scale-inf",
        STD.format(sampler="rwm", extra="init_scale = inf"),
        [],
        ["p.toml", "init_scale", "finite"],
    ),
    (
        "rwm-chains-beyond-int64",
        STD.format(sampler="rwm", extra=f"num_chains = {BIG}"),
        [],
        ["p.toml", "num_chains", "64-bit"],
    ),
    (
        "inputs-string",
        edit('inputs = { target = "normal" }', 'inputs = "normal"'),
        [],
        ["p.toml", "stage.draw", "inputs"],
    ),
    (
        "input-int",
        edit('inputs = { target = "normal" }', "inputs = { target = 5 }"),
        [],
        ["p.toml", "inputs.target"],
    ),
    (
        "list-for-one-input",
        edit('inputs = { target = "normal" }', 'inputs = { target = ["normal", "normal"] }'),
        [],
        ["p.toml", "stage.draw", "inputs.target", "one"],
    ),
    (
        "list-of-one-for-one-input",
        edit('inputs = { target = "normal" }', 'inputs = { target = ["normal"] }'),
        [],
        ["p.toml", "inputs.target", "one"],
    ),
    (
        "input-unknown-node",
        edit('inputs = { target = "normal" }', 'inputs = { target = "norml" }'),
        [],
        ["p.toml", "inputs.target", "normal"],
    ),
    (
        "input-unknown-arg",
        edit('inputs = { target = "normal" }', 'inputs = { targt = "normal" }'),
        [],
        ["p.toml", "inputs.targt"],
    ),
    ("input-missing", edit('inputs = { target = "normal" }\n', ""), [], ["p.toml", "stage.draw", "target"]),
    (
        "evaluator-missing-reference",
        STD.format(
            sampler="rwm", extra='[stage.ed]\nuse = "energy-distance"\ninputs = { subject = ["mcmc"] }'
        ),
        [],
        ["p.toml", "stage.ed", "reference"],
    ),
    (
        "input-self",
        edit('inputs = { target = "normal" }', 'inputs = { target = "draw" }'),
        [],
        ["p.toml", "draw"],
    ),
    (
        "input-cycle",
        GOOD + CYCLE,
        [],
        ["p.toml", "cycle"],
    ),
    (
        "input-wrong-type",
        GOOD + '\n[stage.draw2]\nuse = "toy-iid"\ninputs = { target = "check" }\n',
        [],
        ["p.toml", "stage.draw2", "inputs.target"],
    ),
    (
        "gym-kwargs-typo",
        GYM.format(extra='kwargs = { render_mod = "rgb_array" }'),
        [],
        ["p.toml", "task.env", "render_mod", "render_mode"],
    ),
    (
        "gym-kwargs-unknown",
        GYM.format(extra="kwargs = { gravity = 9.8 }"),
        [],
        ["p.toml", "task.env", "gravity"],
    ),
    ("gym-kwargs-not-table", GYM.format(extra="kwargs = 5"), [], ["p.toml", "task.env", "kwargs"]),
    (
        "gym-unknown-id",
        GYM.format(extra="").replace("CartPole-v1", "CartPol-v1"),
        [],
        ["p.toml", "env_id", "CartPole-v1"],
    ),
    # ---- --set overrides: errors attributed to the flag
    (
        "set-bad-value",
        GOOD,
        ["--set", "stage.draw.num_samples=abc"],
        ["command line (--set/--grid)", "num_samples"],
    ),
    ("set-seed-bad", GOOD, ["--set", "pipeline.seed=x"], ["command line (--set/--grid)", "seed"]),
    ("set-unknown-table", GOOD, ["--set", "stage.nope.x=1"], ["command line (--set/--grid)", "stage.nope"]),
    ("set-no-equals", GOOD, ["--set", "nonsense"], ["command line (--set/--grid)", "KEY=VALUE"]),
    ("set-too-short", GOOD, ["--set", "stage.draw=5"], ["command line (--set/--grid)", "stage.NAME.KEY"]),
    ("set-bad-top", GOOD, ["--set", "stag.draw.x=1"], ["command line (--set/--grid)", "stage"]),
    ("set-empty-key", GOOD, ["--set", "=3"], ["command line (--set/--grid)", "KEY=VALUE"]),
    (
        "set-into-stage-scalar",
        'stage = 5\n[pipeline]\nname = "x"\n',
        ["--set", "stage.x.y=1"],
        ["p.toml", "stage", "table"],
    ),
    (
        "set-into-pipeline-scalar",
        "pipeline = 5\n" + GOOD.split("seed = 1\n", 1)[1],
        ["--set", "pipeline.seed=1"],
        ["p.toml", "pipeline", "table"],
    ),
    (
        "set-into-param-scalar",
        GOOD,
        ["--set", "stage.draw.num_samples.x=1"],
        ["command line (--set/--grid)", "num_samples"],
    ),
    (
        "set-huge-int",
        GOOD,
        ["--set", f"stage.draw.num_samples={BIG}"],
        ["command line (--set/--grid)", "64-bit"],
    ),
    (
        "set-description-int",
        GOOD,
        ["--set", "pipeline.description=5"],
        ["command line (--set/--grid)", "description"],
    ),
    ("set-pipeline-deep", GOOD, ["--set", "pipeline.a.b=1"], ["command line (--set/--grid)", "pipeline.KEY"]),
    (
        "set-unknown-input",
        GOOD,
        ["--set", "stage.draw.inputs.target=nope"],
        ["command line (--set/--grid)", "inputs.target"],
    ),
    (
        "set-value-past-newline",
        GOOD,
        ["--set", "stage.draw.num_samples=10\nnum_chains = 7"],
        ["command line (--set/--grid)", "option --set", "num_samples", "num_chains", "more than one line"],
    ),
    (
        "set-bare-word-past-newline",
        GOOD,
        ["--set", "stage.draw.label=abc\ndef"],
        ["option --set", "more than one line"],
    ),
    (
        "set-source",
        GOOD,
        ["--set", "stage.draw.source=mala"],
        ["command line (--set/--grid)", "[stage.draw]", "key 'source'", "seed"],
    ),
    (
        "set-replicate",
        GOOD,
        ["--set", "stage.draw.replicate=3"],
        ["command line (--set/--grid)", "[stage.draw]", "key 'replicate'", "repeat"],
    ),
    (
        "file-replicate",
        edit("num_samples = 50", "num_samples = 50\nreplicate = 3"),
        [],
        ["p.toml", "[stage.draw]", "key 'replicate'", "written by the expansion"],
    ),
    (
        "file-source",
        edit('kind = "evaluator"', 'kind = "evaluator"\nsource = "draw"'),
        [],
        ["p.toml", "[stage.check]", "key 'source'", "written by the expansion"],
    ),
    # ---- expansion size: counted before anything is built
    (
        "set-repeat-billion",
        GOOD,
        ["--set", "stage.draw.repeat=1000000000", "--check"],
        [
            "command line (--set/--grid)",
            "[stage.draw]",
            "key 'repeat'",
            "1000000000 tables",
            "at most 100000",
        ],
    ),
    (
        "matrix-3000x3000",
        edit(
            "num_samples = 50",
            f"matrix = {{ num_samples = {list(range(1, 3001))}, burn = {list(range(3000))} }}",
        ),
        ["--check"],
        ["p.toml", "[stage.draw]", "key 'matrix'", "9000000 tables", "at most 100000"],
    ),
    (
        "repeat-total-over-cap",
        GOOD,
        ["--set", "stage.draw.repeat=60000", "--set", "stage.check.repeat=60000", "--check"],
        ["p.toml", "120001 tables", "at most 100000"],
    ),
    # ---- flags
    ("seed-flag-text", GOOD, ["--seed", "x"], ["--seed"]),
    ("seed-flag-huge", GOOD, ["--seed", str(BIG)], ["option --seed", "64-bit"]),
    ("out-is-file", GOOD, ["--out", "afile"], ["option --out", "afile", "file"]),
    ("out-below-file", GOOD, ["--out", "afile/run"], ["option --out", "afile"]),
    ("resume-missing", GOOD, ["--resume", "nowhere"], ["option --resume", "nowhere"]),
    ("resume-not-run", GOOD, ["--resume", "adir"], ["option --resume", "adir", "not a run directory"]),
    ("disable-unknown", GOOD, ["--disable", "quadriga-nonexist"], ["option --disable", "quadriga-nonexist"]),
    ("disable-unknown-similar", GOOD, ["--disable", "quadriga-tox"], ["option --disable", "quadriga-toy"]),
    ("run-unknown-name", None, ["toy-pipelin"], ["toy-pipeline"]),
]


@pytest.mark.parametrize(("content", "argv", "needles"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_input_is_a_clean_exit_2(cli, tmp_path, content, argv, needles):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    if content is not None:
        path = tmp_path / "p.toml"
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    target = [] if argv and not argv[0].startswith("-") else ["p.toml"]
    o = cli("run", *target, *argv)
    assert_clean(o, 2, *needles)
    assert not (tmp_path / "runs").exists(), "nothing may run or be written"
    assert (tmp_path / "afile").read_text() == "x" and list((tmp_path / "adir").iterdir()) == []


def test_corpus_size():
    assert len(CASES) >= 60


@pytest.mark.parametrize(
    ("name", "needles"), [("a" * 300, ["300 characters long", "at most 64"]), ("a" * 65, ["65"])]
)
def test_a_plugin_name_too_long_is_refused_with_its_length(cli, tmp_path, name, needles):
    o = cli("new", "plugin", name, "--dest", str(tmp_path / "out"), "--no-git")
    assert_clean(o, 2, "NAME", *needles)
    assert "Free disk space" not in o.text and "--resume" not in o.text
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []
