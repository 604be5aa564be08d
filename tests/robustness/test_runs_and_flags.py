"""Malformed run directories and flags of ``run --resume`` and ``sweep``: exit 2, one paragraph, the
file or flag named, the run directory left as it was; and inputs that must be accepted."""

from __future__ import annotations

import json
import os

import pytest
from robust_helpers import GOOD, assert_clean


@pytest.fixture
def finished(cli, tmp_path):
    """A finished run of the good pipeline in ``tmp_path/r1``."""
    (tmp_path / "p.toml").write_text(GOOD)
    o = cli("run", "p.toml", "--out", "r1", "--quiet")
    assert o.rc == 0, o.text
    return tmp_path / "r1"


#: (id, file in the run directory, its new content, text the message must contain)
CORRUPT = [
    ("status-empty", "status.json", "", ["status.json", "option --resume"]),
    ("status-truncated", "status.json", '{"status": "fin', ["status.json", "option --resume"]),
    ("status-list", "status.json", "[1, 2]", ["status.json", "option --resume"]),
    ("status-stages-list", "status.json", '{"status": "finished", "stages": [1]}', ["status.json"]),
    (
        "status-stage-not-object",
        "status.json",
        '{"status": "finished", "stages": {"draw": 5}}',
        ["status.json"],
    ),
    ("status-bad-state", "status.json", '{"status": 7, "stages": {}}', ["status.json"]),
    ("status-not-utf8", "status.json", b"\xff\xfe", ["status.json"]),
    ("results-truncated", "results.json", '{"stages": {', ["results.json", "option --resume"]),
    ("results-list", "results.json", "[]", ["results.json"]),
    ("results-stages-int", "results.json", '{"stages": 5}', ["results.json"]),
    ("pipeline-toml-corrupt", "pipeline.toml", "[pipeline\n", ["pipeline.toml"]),
    ("pipeline-toml-not-utf8", "pipeline.toml", b"\xff", ["pipeline.toml", "UTF-8"]),
]


@pytest.mark.parametrize(
    ("name", "content", "needles"), [c[1:] for c in CORRUPT], ids=[c[0] for c in CORRUPT]
)
def test_corrupt_run_directory_on_resume(cli, finished, name, content, needles):
    path = finished / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    before = {p.name: p.read_bytes() for p in finished.iterdir() if p.is_file()}
    o = cli("run", "--resume", "r1")
    assert_clean(o, 2, *needles)
    after = {p.name: p.read_bytes() for p in finished.iterdir() if p.is_file()}
    assert after == before, "a refused resume must not touch the run directory"


#: (id, argv after ``sweep p.toml``, text the message must contain)
SWEEP = [
    ("grid-replicate", ["--grid", "stage.draw.replicate=0,1"], ["[stage.draw]", "key 'replicate'", "seed"]),
    ("grid-source", ["--grid", "stage.draw.source=a,b"], ["[stage.draw]", "key 'source'"]),
    ("set-replicate", ["--set", "stage.draw.replicate=2"], ["[stage.draw]", "key 'replicate'"]),
    ("workers-negative", ["--workers", "-1"], ["option --workers", "-1"]),
    ("workers-zero", ["--workers", "0"], ["option --workers"]),
    ("workers-text", ["--workers", "x"], ["--workers"]),
    ("seeds-huge-range", ["--seeds", "0:100000000"], ["option --seeds", "100000000"]),
    ("seeds-empty-range", ["--seeds", "5:2"], ["option --seeds"]),
    ("seeds-text", ["--seeds", "a:b"], ["option --seeds"]),
    ("seeds-huge-value", ["--seeds", str(2**70)], ["option --seeds", "64-bit"]),
    ("seeds-many-listed", ["--seeds", ",".join(map(str, range(20000)))], ["option --seeds"]),
    ("seeds-twice", ["--seeds", "0:2", "--seeds", "3"], ["--seeds given twice", "0:2", "3"]),
    ("grid-no-equals", ["--grid", "stage.draw.num_samples"], ["option --grid"]),
    (
        "grid-bad-value",
        ["--grid", "stage.draw.num_samples=abc,2"],
        ["command line (--set/--grid)", "num_samples"],
    ),
    ("grid-unknown-table", ["--grid", "stage.nope.x=1,2"], ["command line (--set/--grid)", "stage.nope"]),
    (
        "grid-too-large",
        ["--grid", "stage.draw.num_samples=" + ",".join(map(str, range(1, 2001))), "--seeds", "0:100"],
        ["option --grid", "runs"],
    ),
    ("out-is-file", ["--out", "afile"], ["option --out", "afile"]),
    ("out-below-file", ["--out", "afile/s"], ["option --out", "afile"]),
    ("backend-unknown", ["--backend", "dask"], ["--backend"]),
]


@pytest.mark.parametrize(("argv", "needles"), [c[1:] for c in SWEEP], ids=[c[0] for c in SWEEP])
def test_bad_sweep_flags(cli, tmp_path, argv, needles):
    (tmp_path / "p.toml").write_text(GOOD)
    (tmp_path / "afile").write_text("x")
    o = cli("sweep", "p.toml", *argv)
    assert_clean(o, 2, *needles)
    assert not (tmp_path / "sweeps").exists()
    assert (tmp_path / "afile").read_text() == "x"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_out_in_read_only_directory(cli, tmp_path):
    (tmp_path / "p.toml").write_text(GOOD)
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro").chmod(0o555)
    assert_clean(cli("run", "p.toml", "--out", "ro/run"), 2, "option --out", "ro/run")


def test_out_in_read_only_directory_simulated(cli, tmp_path, monkeypatch):
    """As root cannot be refused by permissions, a read-only file system is simulated."""
    import errno
    from pathlib import Path

    real = Path.mkdir

    def mkdir(self, *a, **k):
        if "ro" in self.parts:
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        return real(self, *a, **k)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    (tmp_path / "p.toml").write_text(GOOD)
    assert_clean(cli("run", "p.toml", "--out", "ro/run"), 2, "option --out", "Read-only file system")
    assert_clean(cli("sweep", "p.toml", "--out", "ro/s"), 2, "option --out", "Read-only file system")


@pytest.mark.parametrize("out", ["out[bold]", "[red]x[/red]", "a]b[", "[link=x]y"])
def test_out_with_markup_characters_is_printed_as_written(cli, tmp_path, out):
    (tmp_path / "p.toml").write_text(GOOD)
    o = cli("run", "p.toml", "--out", out, "--quiet")
    assert_clean(o, 0, out)
    assert json.loads((tmp_path / out / "status.json").read_text())["status"] == "finished"


def test_resume_without_name(cli, finished):
    o = cli("run", "--resume", "r1")
    assert_clean(o, 0, "reloading draw, check")
    assert json.loads((finished / "status.json").read_text())["status"] == "finished"


def test_no_name_and_no_resume(cli):
    assert_clean(cli("run"), 2, "NAME_OR_PATH")


def test_resume_with_another_name_is_refused(cli, finished):
    assert_clean(cli("run", "toy-pipeline", "--resume", "r1"), 2, "option --resume", "'good'")


def test_dotted_stage_name_can_be_overridden(cli, tmp_path):
    (tmp_path / "p.toml").write_text(
        GOOD.replace("[stage.draw]", '[stage."dr.aw"]').replace('["draw"]', '["dr.aw"]')
    )
    o = cli("run", "p.toml", "--set", "stage.dr.aw.num_samples=7", "--out", "r", "--quiet")
    assert_clean(o, 0)
    assert json.loads((tmp_path / "r" / "results.json").read_text())["stages"]["dr.aw"]["num_samples"] == 7


def test_ambiguous_dotted_override_is_refused(cli, tmp_path):
    text = GOOD + '\n[stage."draw.inner"]\nuse = "toy-iid"\ninputs = { target = "normal" }\n'
    (tmp_path / "p.toml").write_text(text)
    assert_clean(
        cli("run", "p.toml", "--set", "stage.draw.inner.num_samples=7"),
        2,
        "[stage.draw.inner]",
        "[stage.draw]",
    )


def test_set_reaches_a_parameter_of_a_default_nested_component(cli, tmp_path):
    """``toy-wrap``'s ``inner`` has no default; srmc's ``base_kernel`` does: set its step size."""
    text = """
[pipeline]
name = "nested"
[task.gauss]
use = "gaussian"
dim = 2
[stage.srmc]
use = "srmc"
inputs = { target = "gauss" }
"""
    (tmp_path / "p.toml").write_text(text)
    o = cli("run", "p.toml", "--set", "stage.srmc.base_kernel.step_size=0.123", "--check")
    assert_clean(o, 0)
    from quadriga.pipeline import load_pipeline
    from quadriga.registry import get_registry

    p = load_pipeline(
        tmp_path / "p.toml", get_registry(), overrides=["stage.srmc.base_kernel.step_size=0.123"]
    )
    assert p.stages["srmc"].config["base_kernel"]["step_size"] == 0.123


def test_corpus_size():
    assert len(CORRUPT) + len(SWEEP) + 4 + 4 >= 30


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        *[("1", True), (" TRUE ", True), ("yes", True), ("on", True)],
        *[("0", False), ("false", False), ("No", False), ("off", False), ("", False)],
    ],
)
def test_one_parser_reads_every_boolean_environment_switch(monkeypatch, text, expected):
    from quadriga.registry.cache import enabled
    from quadriga.validators import env_flag

    monkeypatch.setenv("QUADRIGA_NO_CACHE", text)
    assert env_flag("QUADRIGA_NO_CACHE") is expected
    assert enabled() is (not expected)  # QUADRIGA_NO_CACHE=false keeps the cache


def test_an_unknown_boolean_word_is_refused_by_name(tmp_path):
    """A fresh process, as a command line is: the switch is read when the plugins load."""
    import subprocess
    import sys

    env = {**os.environ, "QUADRIGA_NO_CACHE": "flase", "COLUMNS": "200"}
    o = subprocess.run(
        [sys.executable, "-m", "quadriga", "list"], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert o.returncode == 2 and "Traceback" not in o.stderr, o.stderr
    assert "QUADRIGA_NO_CACHE='flase'" in o.stderr and "neither true nor false" in o.stderr, o.stderr


def test_verify_runs_twice_into_one_directory_and_keeps_what_it_did_not_write(cli, tmp_path):
    """A second (or killed and re-run) verify replaces its own claim directory; a foreign one is refused."""
    for _ in range(2):
        o = cli("verify", "toy-claim", "--out", "v")
        assert o.rc == 0 and "already holds a run" not in o.text, o.text
    assert (tmp_path / "v" / "report.json").is_file()
    (tmp_path / "w" / "toy-claim").mkdir(parents=True)
    (tmp_path / "w" / "toy-claim" / "notes.txt").write_text("mine")
    o = cli("verify", "toy-claim", "--out", "w")
    assert_clean(o, 2, "toy-claim", "not an earlier verify's output", "--out")
    assert (tmp_path / "w" / "toy-claim" / "notes.txt").read_text() == "mine"


def test_verify_killed_before_its_run_wrote_status_json_runs_again(cli, tmp_path):
    """SIGKILL while the claim's first run starts leaves only its lock and pipeline.toml."""
    run = tmp_path / "v" / "toy-claim" / "run"
    run.mkdir(parents=True)
    (run / ".lock").write_text("999999999")  # the pid of a process that no longer runs
    (run / "pipeline.toml").write_text("[pipeline]\nname = 'x'\n")
    o = cli("verify", "toy-claim", "--out", "v")
    assert o.rc == 0 and "did not write" not in o.text, o.text
    assert (tmp_path / "v" / "report.json").is_file()


@pytest.mark.parametrize("where", ["pipeline", "stage"])
def test_a_device_this_machine_lacks_is_refused_by_check_and_leaves_no_run(cli, tmp_path, where):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    text = (
        GOOD.replace("seed = 1\n", 'seed = 1\ndevice = "cuda"\n')
        if where == "pipeline"
        else GOOD.replace("num_samples = 50\n", 'num_samples = 50\ndevice = "cuda:0"\n')
    )
    (tmp_path / "p.toml").write_text(text)
    table = "[pipeline]" if where == "pipeline" else "[stage.draw]"
    assert_clean(cli("run", "p.toml", "--check"), 2, table, "key 'device'", "not available here")
    assert_clean(cli("run", "p.toml", "--out", "r"), 2, "not available here")
    assert not (tmp_path / "r").exists()  # no debris: refused before the run directory


def test_text_from_files_reaches_the_terminal_without_control_sequences(cli, tmp_path):
    """A name or value holding escape sequences is echoed in error messages as text only."""
    hostile = "\\u001b]0;pwned\\u0007\\u001b[2J\\u001b[31mred\\u0008"
    (tmp_path / "p.toml").write_text(GOOD.replace('use = "toy-iid"', f'use = "toy-iid{hostile}"'))
    (tmp_path / "q.toml").write_text(GOOD.replace("num_samples = 50", f'num_samples = "{hostile}"'))
    for o in (cli("run", "p.toml", "--check"), cli("run", "q.toml", "--check")):
        assert o.rc == 2 and "red" in o.err, o.err  # the error quotes the value ...
        assert not {"\x1b", "\x07", "\x08"} & set(o.out + o.err), repr(o.err)  # ... as text only


def test_stage_and_pipeline_names_in_a_run_s_results_reach_compare_s_tables_as_text(finished, cli):
    """A tampered or copied run directory: ``compare`` prints its names without control sequences."""
    path = finished / "results.json"
    results = json.loads(path.read_text())
    stages = results["stages"]
    stages["ev\x1b]0;pwned\x07\x1b[31mil"] = stages.pop(list(stages)[-1])  # the evaluator
    results["pipeline"] = "p\x1b[2Jq"
    path.write_text(json.dumps(results))
    o = cli("compare", str(finished), str(finished), "--out", "cmp")
    assert "ev]0;pwned[31mil" in o.out, o.out  # the name is shown, as text ...
    assert not {"\x1b", "\x07"} & set(o.out + o.err), repr(o.out)  # ... without its controls


@pytest.mark.parametrize(
    ("edit", "needles"),
    [
        ("num_samples = 50\nnum_samples = 60", ("Key 'num_samples' is given twice in [stage.draw]",)),
        ("num_samples = 50\nflag = False", ("TOML booleans are lowercase", "flag = false")),
        ("num_samples = 50\nflag = None", ("TOML has no None", "'flag'")),
    ],
    ids=["duplicate-key", "python-bool", "python-none"],
)
def test_toml_mistakes_name_the_key_and_the_fix(cli, tmp_path, edit, needles):
    (tmp_path / "p.toml").write_text(GOOD.replace("num_samples = 50", edit))
    assert_clean(cli("run", "p.toml", "--check"), 2, "p.toml", "invalid TOML", *needles)


def test_out_never_overwrites_the_source_pipeline_and_is_not_ignored_with_resume(cli, tmp_path):
    (tmp_path / "pipeline.toml").write_text(GOOD + "# mine\n")
    assert_clean(cli("run", "pipeline.toml", "--out", "."), 2, "already holds pipeline.toml", "--out")
    assert (tmp_path / "pipeline.toml").read_text().endswith("# mine\n")  # untouched
    assert not (tmp_path / "status.json").exists()
    assert cli("run", "pipeline.toml", "--out", "r", "--quiet").rc == 0
    o = cli("run", "--resume", "r", "--out", "elsewhere")
    assert_clean(o, 2, "--resume continues", "--out")
    assert not (tmp_path / "elsewhere").exists()


def test_check_refuses_a_size_the_machine_cannot_hold_in_plain_words(cli, tmp_path):
    """A 2e6-dimensional Gaussian needs a 29,802 GiB covariance: the allocator's words are not shown."""
    text = GOOD.replace('use = "toy-normal"', 'use = "gaussian"\ndim = 2000000').replace(
        'use = "toy-iid"', 'use = "rwm"'
    )
    (tmp_path / "p.toml").write_text(text)
    o = cli("run", "p.toml", "--check")
    assert_clean(o, 2, "[task.normal]", "needs more memory than this machine can give", "Lower the parameter")
    assert "enforce fail" not in o.text and "DefaultCPUAllocator" not in o.text


@pytest.mark.parametrize("entry", ["notes.txt", "data/", ".hidden"])
def test_out_that_holds_other_files_is_refused_and_left_as_it_was(cli, tmp_path, entry):
    """``run --out DIR`` into a directory that is not empty and not a run: refused, nothing written there."""
    (tmp_path / "p.toml").write_text(GOOD)
    d = tmp_path / "mine"
    d.mkdir()
    if entry.endswith("/"):
        (d / entry).mkdir()
    else:
        (d / entry).write_text("mine")
    before = sorted(p.name for p in d.iterdir())
    o = cli("run", "p.toml", "--out", "mine", "--quiet")
    assert_clean(o, 2, "option --out", "'mine'", "not empty", entry.rstrip("/"), "--resume", "new or empty")
    assert sorted(p.name for p in d.iterdir()) == before  # no status.json, no lock, nothing
    if not entry.endswith("/"):
        assert (d / entry).read_text() == "mine"


def test_out_that_is_empty_or_new_is_used(cli, tmp_path):
    """An empty existing --out directory and a new one both take the run."""
    (tmp_path / "p.toml").write_text(GOOD)
    (tmp_path / "empty").mkdir()
    for out in ("empty", "new/deeper"):
        o = cli("run", "p.toml", "--out", out, "--quiet")
        assert o.rc == 0, o.text
        assert json.loads((tmp_path / out / "status.json").read_text())["status"] == "finished"


@pytest.mark.parametrize("entry", ["notes.txt", "status.json"])
def test_sweep_out_that_holds_other_files_is_refused_and_left_as_it_was(cli, tmp_path, entry):
    """``sweep --out DIR`` into a directory that is not a sweep's (a user's files, a run): refused."""
    (tmp_path / "p.toml").write_text(GOOD)
    d = tmp_path / "mine"
    d.mkdir()
    (d / entry).write_text("mine")
    o = cli("sweep", "p.toml", "--seeds", "1", "--out", "mine")
    assert_clean(o, 2, "option --out", "'mine'", "not empty", entry, "not a sweep", "new or empty")
    assert sorted(p.name for p in d.iterdir()) == [entry]  # no runs/, sweep.json or summary
    assert (d / entry).read_text() == "mine"


def test_sweep_into_its_own_directory_is_continued(cli, tmp_path):
    """A sweep re-run into its own --out (it holds sweep.json and runs/) resumes, refusing nothing."""
    (tmp_path / "p.toml").write_text(GOOD)
    for _ in range(2):
        o = cli("sweep", "p.toml", "--seeds", "1", "--out", "s")
        assert o.rc == 0, o.text
    assert (tmp_path / "s" / "sweep.json").is_file()
    assert len(list((tmp_path / "s" / "runs").iterdir())) == 1


def test_compare_out_that_holds_other_files_is_refused(finished, cli, tmp_path):
    """``compare --out`` into a run directory or a user's directory: refused, nothing written there."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    before = sorted(p.name for p in finished.iterdir())
    o = cli("compare", str(finished), "--out", str(finished))
    assert_clean(o, 2, "option --out", "not empty", "pipeline.toml", "new or empty")
    assert sorted(p.name for p in finished.iterdir()) == before  # no summary.csv or summary.png
    o = cli("compare", str(finished), "--out", "mine")
    assert_clean(o, 2, "option --out", "'mine'", "notes.txt")
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]
    (tmp_path / "afile").write_text("x")
    assert_clean(cli("compare", str(finished), "--out", "afile"), 2, "'afile' is a file; give a directory.")


def test_compare_writes_over_its_own_output(finished, cli, tmp_path):
    """A second compare into the same --out replaces the first's files (and only those are there)."""
    for _ in range(2):
        o = cli("compare", str(finished), "--out", "cmp")
        assert o.rc == 0, o.text
    assert {p.name for p in (tmp_path / "cmp").iterdir()} >= {"summary.csv", "summary.png"}


def test_verify_out_that_is_a_run_a_user_s_directory_or_a_file_is_refused(finished, cli, tmp_path):
    """``verify --out`` writes report.md and claim directories only into its own (or a new) directory."""
    before = sorted(p.name for p in finished.iterdir())
    o = cli("verify", "toy-claim", "--out", str(finished))
    assert_clean(o, 2, "option --out", "not empty", "pipeline.toml", "not an earlier verify", "new or empty")
    assert sorted(p.name for p in finished.iterdir()) == before  # no report.md, no toy-claim/
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    assert_clean(cli("verify", "toy-claim", "--out", "mine"), 2, "'mine'", "notes.txt")
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]
    (tmp_path / "afile").write_text("x")
    o = cli("verify", "toy-claim", "--out", "afile")
    assert_clean(o, 2, "option --out", "'afile' is a file; give a directory.")
    assert "Free disk space" not in o.text and (tmp_path / "afile").read_text() == "x"


def test_interrupted_verify_reports_the_claim_as_interrupted_and_how_to_go_on(tmp_path):
    """Ctrl-C during a claim's run: exit 130, the report marks it interrupted (no numbers), stderr says
    the command that runs it again; that command then runs it into the same directory."""
    import signal
    import subprocess
    import sys
    import time

    pytest.importorskip("quadriga_value_mapping")
    claim = "value-mapping-tabular-convergence"
    argv = [sys.executable, "-m", "quadriga", "verify", claim, "--out", "v"]
    env = {**os.environ, "COLUMNS": "500"}
    p = subprocess.Popen(
        argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lock = tmp_path / "v" / claim / "run" / ".lock"
    while not lock.exists() and p.poll() is None:  # the claim's run has started
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert "Traceback" not in err, err
    assert "interrupted" in err and f"quadriga verify {claim} --out v" in err, err
    assert "from its start" in err and "replaced" in err, err
    report = (tmp_path / "v" / "report.md").read_text()
    assert f"| {claim} | interrupted | interrupted before it finished; no numbers | - |" in report, report
    assert "**Interrupted** before 1 of 1 claims finished" in report and "; status **ran**" not in report
    (record,) = json.loads((tmp_path / "v" / "report.json").read_text())
    assert (record["name"], record["status"], record["numbers"], record["comparisons"]) == (
        claim,
        "interrupted",
        {},
        [],
    )
    again = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    (record,) = json.loads((tmp_path / "v" / "report.json").read_text())
    assert record["status"] == "ran" and record["numbers"], record


def test_a_stage_key_misspelled_as_a_parameter_is_answered_with_the_stage_key(cli, tmp_path):
    """``input = ...`` in a stage: the close stage key ``inputs`` is suggested, with the stage keys."""
    (tmp_path / "p.toml").write_text(GOOD.replace("num_samples = 50", 'input = { target = "normal" }'))
    o = cli("run", "p.toml", "--check")
    assert_clean(o, 2, "[stage.draw]", "key 'input'", "Did you mean 'inputs'", "stage keys: use, kind")
    (tmp_path / "p.toml").write_text(GOOD.replace("num_samples", "num_sample"))  # a parameter's typo
    o = cli("run", "p.toml", "--check")
    assert_clean(o, 2, "Did you mean 'num_samples'")
    assert "stage keys" not in o.text


def test_a_python_boolean_given_to_set_gets_the_toml_spelling(cli, tmp_path):
    (tmp_path / "p.toml").write_text(GOOD)
    o = cli("run", "p.toml", "--check", "--set", "stage.draw.nan=False")
    assert_clean(o, 2, "key 'nan'", "expected bool", "TOML's booleans are lower case: write false")


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["list", "--kind", "samplr"], ["argument --kind: 'samplr' is not one of sampler,", "'sampler'?"]),
        (["rn"], ["'rn' is not one of list, info, run", "Did you mean 'run'?"]),
        (["sweep", "p.toml", "--backend", "rayy"], ["'rayy' is not one of local, ray, submitit"]),
    ],
    ids=["list-kind", "command", "sweep-backend"],
)
def test_a_mistyped_choice_is_named_with_a_close_match_within_80_columns(cli, argv, needles):
    o = cli(*argv)
    assert o.rc == 2 and "Traceback" not in o.text, o.text
    for needle in needles:
        assert needle in " ".join(o.err.split()), (needle, o.err)
    error = o.err[o.err.index("error:") - len("quadriga") - 1 :].splitlines()
    assert error and max(len(line) for line in error) <= 80, o.err


def test_run_json_check_prints_the_checked_plan_as_json(cli, tmp_path):
    (tmp_path / "p.toml").write_text(GOOD)
    o = cli("run", "p.toml", "--check", "--json")
    assert o.rc == 0, o.text
    plan = json.loads(o.out)
    assert plan["pipeline"] == "good" and plan["seed"] == 1 and plan["valid"] is True
    assert plan["tables"] == [
        {"table": "task.normal", "component": "toy-normal", "kind": "target", "inputs": {}},
        {"table": "stage.draw", "component": "toy-iid", "kind": "sampler", "inputs": {"target": "normal"}},
        {
            "table": "stage.check",
            "component": "toy-mean",
            "kind": "evaluator",
            "inputs": {"subject": ["draw"], "reference": "normal"},
        },
    ]
    assert not (tmp_path / "runs").exists()


def test_a_run_records_its_command_as_typed(cli, tmp_path):
    from quadriga.provenance import command_line

    assert command_line(["/x/lib/quadriga/__main__.py", "run", "p"]) == ["quadriga", "run", "p"]
    assert command_line(["/venv/bin/quadriga", "sweep"]) == ["quadriga", "sweep"]
    assert command_line(["train.py", "--x"]) == ["train.py", "--x"]


def test_a_mistyped_flag_is_named_by_its_command_with_the_close_flag(cli, tmp_path):
    o = cli("run", "p.toml", "--chek")
    expected = "quadriga run: error: unrecognized arguments: --chek. Did you mean '--check'?"
    assert o.rc == 2 and expected in o.err, o.err
    assert "Usage: quadriga run" in o.err  # the subcommand's usage, not the top level's
    o = cli("compare", "x", "--zzz")
    assert "`quadriga compare --help` lists its options." in " ".join(o.err.split())


def test_one_key_set_twice_is_refused(cli, tmp_path):
    (tmp_path / "p.toml").write_text(GOOD)
    twice = ["--set", "stage.draw.num_samples=3"] * 2
    o = cli("run", "p.toml", "--check", *twice)
    assert_clean(o, 2, "--set", "'stage.draw.num_samples' is set twice", "give it once")


def test_a_missing_directory_is_named_without_a_key(cli):
    for command in ("compare", "report"):
        o = cli(command, "runs/nope")
        assert_clean(o, 2, "'runs/nope' does not exist")
        assert "key '" not in o.err, o.err


def test_info_of_a_path_points_to_the_command_that_reads_it(cli, tmp_path):
    (tmp_path / "p.toml").write_text(GOOD)
    assert_clean(cli("info", "p.toml"), 2, "'p.toml' is a path", "quadriga run p.toml --check")
    (tmp_path / "runs").mkdir()
    assert_clean(cli("info", "runs"), 2, "'runs' is a path", "quadriga compare runs")


def test_compare_wraps_long_labels_and_says_when_it_replaced_earlier_output(cli, tmp_path, monkeypatch):
    (tmp_path / "p.toml").write_text(GOOD)
    assert cli("run", "p.toml", "--out", "a", "--quiet").rc == 0
    assert cli("run", "p.toml", "--out", "b", "--quiet", "--set", "stage.draw.num_samples=60").rc == 0
    monkeypatch.setenv("COLUMNS", "80")
    o = cli("compare", "a", "b")
    assert o.rc == 0, o.text
    assert "(draw.num_samples=50)" in o.out and "(draw.num_samples=60)" in o.out, o.out  # what differs
    assert max(len(line) for line in o.out.splitlines()) <= 80
    assert not any(title.endswith("(2/2)") for title in o.out.splitlines()), o.out  # not split in parts
    assert "replaced an earlier compare" not in o.out
    o = cli("compare", "a", "b")
    assert "note: replaced an earlier compare's files in compare" in " ".join(o.out.split())


@pytest.mark.parametrize("command", ["compare", "report"])
def test_a_symlinked_run_directory_inside_a_sweep_is_not_followed(cli, tmp_path, command):
    import shutil

    (tmp_path / "p.toml").write_text(GOOD)
    o = cli("sweep", "p.toml", "--seeds", "0:2", "--out", "s", "--workers", "1")
    assert o.rc == 0, o.text
    runs = sorted(p.name for p in (tmp_path / "s" / "runs").iterdir())
    assert len(runs) == 2, runs
    outside = tmp_path / "elsewhere"
    shutil.copytree(tmp_path / "s" / "runs" / runs[1], outside)
    shutil.rmtree(tmp_path / "s" / "runs" / runs[1])
    (tmp_path / "s" / "runs" / runs[1]).symlink_to(outside, target_is_directory=True)
    argv = ["report", "s", "--out", "page.html"] if command == "report" else ["compare", "s"]
    o = cli(*argv)
    assert_clean(o, 2, "symbolic link", runs[1], "elsewhere")
    assert not (tmp_path / "page.html").exists()
