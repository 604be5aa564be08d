"""Runs: directory layout, atomic results, failures and resume, NaN detection, seeding, safety."""

from __future__ import annotations

import json
import math
import pickle

import pytest
import torch

from quadriga.api import check, run
from quadriga.errors import ConfigError, NonFiniteError, RunInterrupted, StageError
from quadriga.pipeline import parse_override
from quadriga.seeding import derive_seed

BASE = {
    "pipeline": {"name": "toy-run", "seed": 7},
    "task": {"normal": {"use": "toy-normal", "dimension": 2, "mean": 1.5}},
    "stage": {
        "draw": {"use": "toy-iid", "inputs": {"target": "normal"}, "num_samples": 400},
        "est": {"use": "toy-mean", "kind": "estimator", "inputs": {"data": "draw"}},
        "check": {
            "use": "toy-mean",
            "kind": "evaluator",
            "plot": True,
            "inputs": {"subject": ["draw"], "reference": "normal"},
        },
    },
}


def pipeline(**stage_updates):
    data = json.loads(json.dumps(BASE))
    for stage, values in stage_updates.items():
        data["stage"].setdefault(stage, {}).update(values)
    return data


def test_run_directory_holds_config_results_manifest_and_figures(registry, tmp_path):
    result = run(pipeline(), registry=registry, out=tmp_path / "r")
    d = result.dir
    assert result.status == "finished"
    for name in ("pipeline.toml", "results.json", "manifest.json", "status.json", "check-bars.png"):
        assert (d / name).is_file(), name
    manifest = json.loads((d / "manifest.json").read_text())
    assert manifest["seed"] == 7 and manifest["plugins"]["toy"]["distribution"] == "quadriga-toy"
    assert manifest["versions"]["torch"] == torch.__version__
    resolved = (d / "pipeline.toml").read_text()
    assert "num_samples = 400" in resolved and "scale = 1.0" in resolved  # defaults filled in
    res = json.loads((d / "results.json").read_text())
    est = result.artifacts["est"]
    x0 = result.artifacts["draw"].x[:, 0]
    assert res["stages"]["est"]["value"] == pytest.approx(float(x0.mean()))
    assert est.stderr == pytest.approx(float(x0.std() / 20))
    assert res["stages"]["check"]["values"]["draw/mean_error"] == pytest.approx(abs(float(x0.mean()) - 1.5))
    # the resolved config runs again and gives the same numbers
    again = run(d / "pipeline.toml", registry=registry, out=tmp_path / "r2")
    assert (again.dir / "results.json").read_text() == (d / "results.json").read_text()


def test_same_seed_same_results_and_stage_seeds_do_not_depend_on_other_stages(registry, tmp_path):
    a = run(pipeline(), registry=registry, out=tmp_path / "a")
    b = run(pipeline(), registry=registry, out=tmp_path / "b")
    assert (a.dir / "results.json").read_text() == (b.dir / "results.json").read_text()
    extra = pipeline(another={"use": "toy-iid", "inputs": {"target": "normal"}, "num_samples": 3})
    c = run(extra, registry=registry, out=tmp_path / "c")
    assert torch.equal(a.artifacts["draw"].x, c.artifacts["draw"].x)
    d = run(pipeline(), registry=registry, out=tmp_path / "d", seed=8)
    assert not torch.equal(a.artifacts["draw"].x, d.artifacts["draw"].x)
    assert derive_seed(7, "stage.draw") == derive_seed(7, "stage.draw") != derive_seed(7, "stage.other")


def test_failure_keeps_finished_stages_and_resume_reruns_only_the_rest(registry, tmp_path):
    bad = pipeline(
        check={"use": "toy-mean", "kind": "evaluator", "inputs": {"subject": "boom", "reference": "normal"}},
        boom={"use": "toy-iid", "inputs": {"target": "normal"}, "fail_once": str(tmp_path / "m")},
    )
    result = run(bad, registry=registry, out=tmp_path / "r", raise_on_failure=False)
    assert result.status == "failed" and isinstance(result.error, StageError)
    status = json.loads((result.dir / "status.json").read_text())
    assert status["status"] == "failed" and "asked to fail" in status["error"]
    assert status["stages"]["draw"]["status"] == "finished" and status["stages"]["boom"]["status"] == "failed"
    assert "check" not in status["stages"]
    saved = json.loads((result.dir / "results.json").read_text())["stages"]
    assert set(saved) == {"draw", "est"}
    error_txt = (result.dir / "error.txt").read_text()
    assert "asked to fail" in error_txt and result.error.stage == "boom"
    assert result.error.details == error_txt and error_txt.startswith("Traceback (most recent call last)")
    # the saved configuration is what resumes; other settings or another pipeline are refused
    with pytest.raises(ConfigError, match="--set and --seed cannot change it"):
        run(bad, registry=registry, resume=result.dir, overrides=["stage.draw.num_samples=3"])
    other = json.loads(json.dumps(bad))
    other["pipeline"]["name"] = "another"
    with pytest.raises(ConfigError, match="is a run of pipeline 'toy-run', not 'another'"):
        run(other, registry=registry, resume=result.dir)
    with pytest.raises(ConfigError, match="already holds a run"):
        run(bad, registry=registry, out=result.dir)
    resumed = run(bad, registry=registry, resume=result.dir)
    status = json.loads((result.dir / "status.json").read_text())
    assert resumed.status == "finished" and status["stages"]["draw"].get("resumed") is True
    assert "resumed" not in status["stages"]["boom"]
    assert torch.equal(resumed.artifacts["draw"].x, result.artifacts["draw"].x)


def test_non_finite_artifact_and_logged_metric_name_the_stage_and_step(registry, tmp_path):
    with pytest.raises(NonFiniteError, match=r"stage 'draw'.*Samples\.x"):
        run(pipeline(draw={"nan": True}), registry=registry, out=tmp_path / "n1")
    learn = {
        "pipeline": {"name": "learn"},
        "task": {"normal": {"use": "toy-normal"}},
        "stage": {"count": {"use": "toy-counter", "inputs": {"task": "normal"}, "nan_at": 3}},
    }
    result = run(learn, registry=registry, out=tmp_path / "n2", raise_on_failure=False)
    assert isinstance(result.error, NonFiniteError) and result.error.step == 3
    assert "at step 3" in str(result.error) and str(result.error).endswith(NonFiniteError.ADVICE)
    own = NonFiniteError("sgrpo", "the rollout rewards", step=2, advice="Check the reward table.")
    assert str(own).endswith("kept in the run directory. Check the reward table.") and own.step == 2
    lines = [json.loads(line) for line in (result.dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in lines] == [0, 1, 2, 3] and lines[1]["loss"] == pytest.approx(0.5)
    assert lines[3]["loss"] == "nan" or (isinstance(lines[3]["loss"], float) and math.isnan(lines[3]["loss"]))


def test_interrupt_marks_the_run_and_keeps_finished_stages(registry, tmp_path, monkeypatch):
    import quadriga_toy.components as comps

    def interrupted(self, target, *, generator):
        raise KeyboardInterrupt

    monkeypatch.setattr(comps.ToyWrap, "sample", interrupted)
    data = pipeline(
        wrap={
            "use": "toy-wrap",
            "inner": {"use": "toy-iid", "num_samples": 5},
            "inputs": {"target": "normal"},
        }
    )
    with pytest.raises(RunInterrupted) as info:  # a KeyboardInterrupt that carries its run directory
        run(data, registry=registry, out=tmp_path / "i")
    assert isinstance(info.value, KeyboardInterrupt) and info.value.run_dir == tmp_path / "i"
    assert info.value.exit_code == 130 and type(info.value.__cause__) is KeyboardInterrupt
    again = pickle.loads(pickle.dumps(info.value))
    assert (again.run_dir, again.exit_code) == (tmp_path / "i", 130)
    status = json.loads((tmp_path / "i" / "status.json").read_text())
    assert status["status"] == "interrupted" and status["stages"]["wrap"]["status"] == "interrupted"
    assert status["stages"]["draw"]["status"] == "finished"


def test_nested_components_are_built_by_name_and_validated(registry, tmp_path):
    data = pipeline(
        wrap={
            "use": "toy-wrap",
            "factor": 2.0,
            "inner": {"use": "toy-iid", "num_samples": 10},
            "inputs": {"target": "normal"},
        }
    )
    result = run(data, registry=registry, out=tmp_path / "w")
    assert result.artifacts["wrap"].x.shape == (10, 2)
    assert '[stage.wrap.inner]\nuse = "toy-iid"' in (result.dir / "pipeline.toml").read_text()
    short = pipeline(wrap={"use": "toy-wrap", "inner": "toy-iid", "inputs": {"target": "normal"}})
    assert check(short, registry=registry).stages["wrap"].component.inner.num_samples == 100
    with pytest.raises(ConfigError, match=r"key 'inner.num_smples'.*Did you mean 'num_samples'"):
        check(
            pipeline(
                wrap={
                    "use": "toy-wrap",
                    "inner": {"use": "toy-iid", "num_smples": 1},
                    "inputs": {"target": "normal"},
                }
            ),
            registry=registry,
        )
    with pytest.raises(ConfigError, match="Did you mean 'toy-iid'"):
        check(
            pipeline(wrap={"use": "toy-wrap", "inner": "toy-idd", "inputs": {"target": "normal"}}),
            registry=registry,
        )


def test_overrides_are_parsed_as_toml_and_applied(registry):
    assert parse_override("stage.a.alpha=2") == (["stage", "a", "alpha"], 2)
    assert parse_override("stage.a.grid=[1, 2.5]") == (["stage", "a", "grid"], [1, 2.5])
    assert parse_override("task.g.preset=8-ring") == (["task", "g", "preset"], "8-ring")
    p = check(
        pipeline(),
        registry=registry,
        overrides=["stage.draw.num_samples=12", "pipeline.seed=3", "task.normal.mean=-1.0"],
    )
    assert (
        p.stages["draw"].component.num_samples == 12
        and p.seed == 3
        and p.tasks["normal"].component.mean == -1
    )
    with pytest.raises(ConfigError, match=r"\(--set/--grid\), \[stage.drwa\].*Did you mean .draw."):
        check(pipeline(), registry=registry, overrides=["stage.drwa.num_samples=1"])
    with pytest.raises(ConfigError, match=r"key .num_samples.: num_samples must be an integer >= 1, got 0"):
        check(pipeline(), registry=registry, overrides=["stage.draw.num_samples=0"])


def test_run_directory_never_escapes_the_output_root(registry, tmp_path):
    data = pipeline()
    data["pipeline"]["name"] = "../../escape"
    with pytest.raises(ConfigError, match="name"):
        check(data, registry=registry)
    from quadriga.runs import new_run_dir, safe_name

    assert safe_name("../../etc/passwd") == "etc_passwd"
    d = new_run_dir(tmp_path, "a/../../b")
    assert tmp_path in d.parents


def test_checkpoints_load_without_pickle(tmp_path):
    from quadriga.artifacts import Fitted

    model = torch.nn.Linear(3, 2)
    assert Fitted(model=model).save(tmp_path / "s") is False
    state = torch.load(tmp_path / "s" / "model.pt", weights_only=True)
    assert torch.equal(state["weight"], model.weight.detach())


def test_verify_writes_a_report_with_numbers(registry, tmp_path):
    from quadriga.claims import verify

    records, report = verify(registry, "quadriga-toy", scale="smoke", out_dir=tmp_path / "v")
    assert records[0]["name"] == "toy-claim" and records[0]["status"] == "ran"
    text = report.read_text()
    assert "toy-claim" in text and "| mean |" in text
    (comparison,) = json.loads((tmp_path / "v" / "report.json").read_text())[0]["comparisons"]
    assert comparison["n"] == 3 and comparison["estimate"] > 0
