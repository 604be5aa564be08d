"""Opting out of saving large artifacts: ``save = false`` and ``save_thin = N`` per stage."""

from __future__ import annotations

import json
import shutil

import pytest
import tomllib
import torch

from quadriga.api import run
from quadriga.artifacts import Samples, same_numbers
from quadriga.errors import ConfigError
from quadriga.runs import resume_plan

BASE = {
    "pipeline": {"name": "toy-save", "seed": 3},
    "task": {"normal": {"use": "toy-normal", "dimension": 2, "mean": 1.5}},
    "stage": {
        "draw": {"use": "toy-iid", "inputs": {"target": "normal"}, "num_samples": 300},
        "est": {"use": "toy-mean", "kind": "estimator", "inputs": {"data": "draw"}},
    },
}


def pipeline(**draw: object) -> dict:
    data = json.loads(json.dumps(BASE))
    data["stage"]["draw"].update(draw)
    return data


def test_save_false_writes_no_samples_and_gives_the_same_results(registry, tmp_path):
    saved = run(pipeline(), registry=registry, out=tmp_path / "saved")
    unsaved = run(pipeline(save=False), registry=registry, out=tmp_path / "unsaved")
    assert (saved.dir / "stages" / "draw" / "artifact.pt").is_file()
    assert not (unsaved.dir / "stages" / "draw" / "artifact.pt").exists()
    assert (unsaved.dir / "stages" / "est" / "artifact.pt").is_file()  # other stages still saved
    a, b = (
        json.loads((saved.dir / "results.json").read_text()),
        json.loads((unsaved.dir / "results.json").read_text()),
    )
    assert a["stages"] == b["stages"]
    x = unsaved.artifacts["draw"].x
    assert torch.equal(x, saved.artifacts["draw"].x)
    assert b["stages"]["est"]["value"] == pytest.approx(float(x[:, 0].mean()))
    resolved = tomllib.loads((unsaved.dir / "pipeline.toml").read_text())
    assert resolved["stage"]["draw"]["save"] is False and "save" not in resolved["stage"]["est"]
    status = json.loads((unsaved.dir / "status.json").read_text())
    assert status["stages"]["draw"]["resumable"] is False
    assert not (unsaved.dir / ".resume").exists()  # a finished run keeps no full copy


def test_resume_recomputes_an_unsaved_stage_that_a_stage_left_to_run_needs(registry, tmp_path):
    """Without its full copy in .resume/ (removed here), an unsaved stage runs again."""
    bad = pipeline(save=False)
    bad["stage"]["est"]["fail_once"] = str(tmp_path / "m")  # est needs draw's samples
    first = run(bad, registry=registry, out=tmp_path / "r", raise_on_failure=False)
    assert first.status == "failed"
    shutil.rmtree(first.dir / ".resume")
    plan = resume_plan(first.dir)
    assert plan.rerun == ["draw"] and plan.kept == [] and plan.reasons == {"draw": "save = false"}
    resumed = run(tmp_path / "r" / "pipeline.toml", registry=registry, resume=first.dir)
    status = json.loads((first.dir / "status.json").read_text())
    assert resumed.status == "finished"
    assert "resumed" not in status["stages"]["draw"]
    assert torch.equal(resumed.artifacts["draw"].x, first.artifacts["draw"].x)  # same seed, same draws
    assert resumed.artifacts["est"].value == pytest.approx(float(first.artifacts["draw"].x[:, 0].mean()))
    assert not (first.dir / "stages" / "draw" / "artifact.pt").exists()


def test_resume_keeps_a_thinned_stage_whose_consumers_finished(registry, tmp_path):
    bad = pipeline(save_thin=7)
    bad["stage"]["boom"] = {  # fails once and needs nothing of draw
        "use": "toy-iid",
        "inputs": {"target": "normal"},
        "fail_once": str(tmp_path / "m"),
    }
    first = run(bad, registry=registry, out=tmp_path / "r", raise_on_failure=False)
    assert first.status == "failed"
    shutil.rmtree(first.dir / ".resume")  # without its full copy
    plan = resume_plan(first.dir)
    assert plan.kept == ["draw"] and plan.rerun == [] and plan.reloaded == ["est"]
    assert plan.reasons["draw"].startswith("save_thin = 7")
    before = json.loads((first.dir / "results.json").read_text())["stages"]["draw"]
    resumed = run(tmp_path / "r" / "pipeline.toml", registry=registry, resume=first.dir)
    assert resumed.status == "finished" and "draw" not in resumed.artifacts  # not run again
    status = json.loads((first.dir / "status.json").read_text())
    assert status["stages"]["draw"]["resumed"] is True and status["stages"]["est"]["resumed"] is True
    assert "resumed" not in status["stages"]["boom"]
    # draw's results (its summary) are the first attempt's, kept as they were
    assert json.loads((first.dir / "results.json").read_text())["stages"]["draw"] == before
    assert Samples.load(first.dir / "stages" / "draw").x.shape == (43, 2)  # thinned file left alone


def test_resume_cli_names_each_stages_reason(registry, tmp_path, capsys):
    from quadriga.cli import main

    bad = pipeline(save=False)
    bad["stage"]["est"]["fail_once"] = str(tmp_path / "m")
    first = run(bad, registry=registry, out=tmp_path / "r", raise_on_failure=False)
    shutil.rmtree(first.dir / ".resume")  # without its full copy
    capsys.readouterr()
    assert main(["run", "--resume", str(first.dir)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "reloading no stage; re-running draw (save = false), whose artifacts a stage left to run" in out
    assert "save_thin" not in out and "trained" not in out  # only the reason that applies

    kept = pipeline(save_thin=7)
    kept["stage"]["boom"] = {
        "use": "toy-iid",
        "inputs": {"target": "normal"},
        "fail_once": str(tmp_path / "mk"),
    }
    second = run(kept, registry=registry, out=tmp_path / "k", raise_on_failure=False)
    shutil.rmtree(second.dir / ".resume")
    capsys.readouterr()
    assert main(["run", "--resume", str(second.dir)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "reloading est; keeping the results of draw (save_thin = 7: only every 7-th draw" in out
    assert "re-running" not in out


@pytest.mark.parametrize("save", [{"save_thin": 7}, {"save": False}], ids=["thin", "unsaved"])
def test_resume_reloads_a_thinned_or_unsaved_stage_from_its_full_copy(registry, tmp_path, monkeypatch, save):
    """An unfinished run keeps the full artifact of a thinned or unsaved stage in .resume/: --resume
    reloads it instead of running it, later stages get every draw, and the finished run drops it."""
    import quadriga.runner as runner

    marker = tmp_path / "m"
    data = pipeline(**save)
    data["stage"]["est"]["fail_once"] = str(marker)  # est needs every draw of draw
    first = run(data, registry=registry, out=tmp_path / "r", raise_on_failure=False)
    assert first.status == "failed"
    copy = Samples.load(first.dir / ".resume" / "draw")
    assert torch.equal(copy.x, first.artifacts["draw"].x) and copy.x.shape == (300, 2)
    assert sorted(p.name for p in (first.dir / ".resume").iterdir()) == ["draw"]  # only that stage
    on_disk = first.dir / "stages" / "draw" / "artifact.pt"
    assert Samples.load(on_disk.parent).x.shape == (43, 2) if "save_thin" in save else not on_disk.exists()
    plan = resume_plan(first.dir)
    assert plan.reloaded == ["draw"] and plan.from_copy == ["draw"] and plan.rerun == [] and plan.kept == []
    assert plan.describe() == (
        "reloading draw from its full copy in .resume/ (stages/ holds it thinned or not at all)"
    )

    ran: list[str] = []
    real = runner.run_stage
    monkeypatch.setattr(
        runner, "run_stage", lambda node, *a, **k: ran.append(node.name) or real(node, *a, **k)
    )
    resumed = run(tmp_path / "r" / "pipeline.toml", registry=registry, resume=first.dir)
    assert ran == ["est"]  # draw was reloaded, not run
    assert resumed.status == "finished"
    assert torch.equal(resumed.artifacts["draw"].x, first.artifacts["draw"].x)
    status = json.loads((first.dir / "status.json").read_text())
    assert status["stages"]["draw"]["resumed"] is True and status["stages"]["draw"]["resumable"] is False
    assert not (first.dir / ".resume").exists()  # finished: the full copies are gone

    # the same configuration run through without a failure writes the same results.json, byte for byte
    monkeypatch.setattr(runner, "run_stage", real)
    whole = run(data, registry=registry, out=tmp_path / "whole")  # the marker exists: est does not fail
    assert (whole.dir / "results.json").read_bytes() == (first.dir / "results.json").read_bytes()
    assert resumed.artifacts["est"].value == whole.artifacts["est"].value
    assert not (whole.dir / ".resume").exists()


def test_a_stage_saved_in_full_gets_no_copy_and_drops_an_earlier_one(registry, tmp_path):
    """Only thinned or unsaved stages are copied; a stage edited to save in full removes its old copy."""
    data = pipeline(save_thin=7)
    data["stage"]["est"]["fail_once"] = str(tmp_path / "m")
    first = run(data, registry=registry, out=tmp_path / "r", raise_on_failure=False)
    assert (first.dir / ".resume" / "draw" / "artifact.pt").is_file()
    assert not (first.dir / ".resume" / "est").exists()
    text = (first.dir / "pipeline.toml").read_text().replace("save_thin = 7\n", "")
    (first.dir / "pipeline.toml").write_text(text)
    plan = resume_plan(first.dir)
    assert plan.changed == ["draw"] and plan.from_copy == []  # edited: runs again, not reloaded
    boom = '\n[stage.boom]\nuse = "toy-iid"\ninputs = { target = "normal" }\nfail = true\n'
    (first.dir / "pipeline.toml").write_text(text + boom)
    again = run(first.dir / "pipeline.toml", registry=registry, resume=first.dir, raise_on_failure=False)
    assert again.status == "failed"  # unfinished, so .resume/ stays, but draw no longer has a copy
    assert not (first.dir / ".resume" / "draw").exists()
    assert Samples.load(first.dir / "stages" / "draw").x.shape == (300, 2)


def test_thin_keeps_every_nth_draw_on_disk_and_all_in_memory(registry, tmp_path):
    full = run(pipeline(), registry=registry, out=tmp_path / "full")
    thin = run(pipeline(save_thin=7), registry=registry, out=tmp_path / "thin")
    x = full.artifacts["draw"].x
    assert torch.equal(thin.artifacts["draw"].x, x)  # later stages get every draw
    assert thin.artifacts["est"].value == full.artifacts["est"].value
    on_disk = Samples.load(thin.dir / "stages" / "draw")
    assert on_disk.x.shape == (43, 2)  # ceil(300 / 7)
    assert torch.equal(on_disk.x, x[::7]) and on_disk.info["thin"] == 7
    assert tomllib.loads((thin.dir / "pipeline.toml").read_text())["stage"]["draw"]["save_thin"] == 7
    assert resume_plan(thin.dir).kept == ["draw"]  # a finished run: nothing left needs it


def test_thinning_chains_keeps_the_chain_major_view():
    chains = torch.arange(2 * 5 * 3, dtype=torch.float64).reshape(2, 5, 3)
    s = Samples(x=chains.reshape(10, 3), log_weights=torch.arange(10.0), chains=chains)
    t = s.thinned(2)
    assert t.chains.shape == (2, 3, 3) and t.problems() == []
    assert torch.equal(t.x, chains[:, ::2].reshape(6, 3))
    assert t.log_weights.tolist() == [0.0, 2.0, 4.0, 5.0, 7.0, 9.0]
    assert same_numbers(s.thinned(1).x, s.x)
    with pytest.raises(ValueError, match="thin must be an integer >= 1"):
        s.thinned(0)


def test_thinned_samples_are_smaller_on_disk(tmp_path):
    # a strided view would keep the whole storage, and torch.save writes all of it
    chains = torch.randn(4, 1000, 20, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    full, thin = tmp_path / "full", tmp_path / "thin"
    full.mkdir(), thin.mkdir()
    Samples(x=chains.reshape(-1, 20), chains=chains).save(full)
    Samples(x=chains.reshape(-1, 20), chains=chains).thinned(10).save(thin)
    size = {p.name: sum(f.stat().st_size for f in p.iterdir()) for p in (full, thin)}
    assert size["thin"] < size["full"] / 8, size


@pytest.mark.parametrize(
    ("stage", "key", "value", "message"),
    [
        ("draw", "save", "no", "save must be true or false, got 'no'"),
        ("draw", "save_thin", 0, "save_thin must be an integer >= 1"),
        ("draw", "save_thin", True, "save_thin must be an integer >= 1"),
        ("est", "save_thin", 2, "save_thin applies to the Samples of a sampler, not to a estimator"),
    ],
)
def test_bad_save_and_thin_name_the_table_and_key(registry, stage, key, value, message):
    data = json.loads(json.dumps(BASE))
    data["stage"][stage][key] = value
    with pytest.raises(ConfigError, match=message) as info:
        run(data, registry=registry)
    assert f"stage.{stage}" in str(info.value) and key in str(info.value)


def test_save_is_refused_in_a_task_and_in_a_matrix(registry):
    data = json.loads(json.dumps(BASE))
    data["task"]["normal"]["save"] = False
    with pytest.raises(ConfigError, match="tasks are not saved"):
        run(data, registry=registry)
    data = pipeline(matrix={"save": [True, False]})
    with pytest.raises(ConfigError, match="'save' cannot vary in a matrix"):
        run(data, registry=registry)


def test_save_thin_leaves_the_samplers_own_thin_parameter_alone(registry, tmp_path):
    data = {
        "pipeline": {"name": "mala-thin", "seed": 0},
        "task": {"g": {"use": "gaussian", "dim": 2}},
        "stage": {
            "mala": {
                "use": "mala",
                "inputs": {"target": "g"},
                "num_chains": 2,
                "num_samples": 30,
                "burn_in": 5,
                "thin": 2,  # the sampler's parameter: thins the chain it returns
                "save_thin": 3,  # the run's: thins what is written to disk
            }
        },
    }
    result = run(data, registry=registry, out=tmp_path / "r")
    s = result.artifacts["mala"]
    assert s.chains.shape == (2, 30, 2) and s.x.shape == (60, 2)
    on_disk = Samples.load(result.dir / "stages" / "mala")
    assert on_disk.chains.shape == (2, 10, 2) and torch.equal(on_disk.chains, s.chains[:, ::3])
    table = tomllib.loads((result.dir / "pipeline.toml").read_text())["stage"]["mala"]
    assert table["thin"] == 2 and table["save_thin"] == 3


def test_resume_reruns_a_stage_whose_settings_were_edited_and_everything_downstream(registry, tmp_path):
    """Editing the run's pipeline.toml before --resume: the edited stage and its consumers run again."""
    import tomli_w

    bad = pipeline()
    bad["stage"]["boom"] = {
        "use": "toy-iid",
        "inputs": {"target": "normal"},
        "fail_once": str(tmp_path / "m"),
    }
    first = run(bad, registry=registry, out=tmp_path / "r", raise_on_failure=False)
    assert first.status == "failed"
    status = json.loads((first.dir / "status.json").read_text())
    assert len(status["stages"]["draw"]["config"]) == 16
    assert resume_plan(first.dir).changed == [] and resume_plan(first.dir).reloaded == ["draw", "est"]
    saved = tomllib.loads((first.dir / "pipeline.toml").read_text())
    saved["stage"]["draw"]["num_samples"] = 40
    (first.dir / "pipeline.toml").write_text(tomli_w.dumps(saved))
    plan = resume_plan(first.dir)
    assert plan.changed == ["draw", "est"] and plan.rerun == ["draw", "est"] and plan.reloaded == []
    assert "re-running draw, est: their settings in pipeline.toml (or an input's) changed" in plan.describe()
    resumed = run(first.dir / "pipeline.toml", registry=registry, resume=first.dir)
    assert resumed.status == "finished" and resumed.artifacts["draw"].x.shape == (40, 2)
    assert resumed.artifacts["est"].value == pytest.approx(float(resumed.artifacts["draw"].x[:, 0].mean()))
    # a record from before digests were kept (no "config") is trusted as it is
    status = json.loads((first.dir / "status.json").read_text())
    for stage in status["stages"].values():
        stage.pop("config", None)
    (first.dir / "status.json").write_text(json.dumps(status))
    assert resume_plan(first.dir).changed == []


def test_resume_refuses_a_matrix_value_edited_behind_its_stage_name(registry, tmp_path):
    """A matrix stage's name is its point: editing that value in pipeline.toml and resuming would
    report the new numbers under the old label, so the resume is refused, naming key and values;
    editing a setting outside the matrix still resumes."""
    import tomli_w

    data = pipeline()
    data["stage"]["draw"]["matrix"] = {"num_samples": [300, 500]}
    del data["stage"]["draw"]["num_samples"]
    data["stage"]["est"]["inputs"] = {"data": "draw[num_samples=300]"}
    first = run(data, registry=registry, out=tmp_path / "r")
    name = "draw[num_samples=300]"
    saved = tomllib.loads((first.dir / "pipeline.toml").read_text())
    assert saved["stage"][name]["num_samples"] == 300
    saved["stage"][name]["num_samples"] = 40
    (first.dir / "pipeline.toml").write_text(tomli_w.dumps(saved))
    with pytest.raises(ConfigError) as info:
        run(first.dir / "pipeline.toml", registry=registry, resume=first.dir)
    message = str(info.value)
    assert f'[stage."{name}"]: num_samples is 40, but the name' in message
    assert "says num_samples=300" in message and "Set num_samples back to 300" in message
    saved["stage"][name]["num_samples"] = 300
    saved["stage"][name]["fail_once"] = str(tmp_path / "m")  # outside the matrix: it runs again
    (first.dir / "pipeline.toml").write_text(tomli_w.dumps(saved))
    assert resume_plan(first.dir).changed == [name, "est"]
