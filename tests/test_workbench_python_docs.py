"""The Python path as docs/workbench.md shows it: every snippet runs, reprs are one line, evaluators
take a list or a dict of subjects, and errors in ``overrides=[...]`` name that argument."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

import quadriga
from quadriga.errors import ConfigError
from quadriga.interfaces import named

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "workbench.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_every_python_snippet_of_the_workbench_page_runs(tmp_path, monkeypatch):
    blocks = _python_blocks()
    assert len(blocks) >= 3 and any(".evaluate(" in b for b in blocks)
    monkeypatch.chdir(tmp_path)
    # the run the page loads, at a smaller size (the page's own call takes under a minute)
    small = [f"stage.{s}.num_samples=300" for s in ("rwm", "mala", "hmc")]
    small += [f"stage.{s}.burn_in=50" for s in ("rwm", "mala", "hmc")]
    real_run = quadriga.api.run

    def run(source, **kw):
        if source == "gmm-mcmc-baselines":
            kw.setdefault("overrides", small)
        return real_run(source, **kw)

    monkeypatch.setattr(quadriga.api, "run", run)
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    metrics = namespace["metrics"]
    assert sorted(metrics.values) == ["mala/energy_distance", "mala/energy_distance_sqrt"]
    assert 0 < metrics.values["mala/energy_distance"] < 2
    df = namespace["df"]
    assert set(df[df.metric == "energy_distance"].subject) == {"rwm", "mala", "hmc"}
    assert (tmp_path / "runs" / "nb").is_dir()


def test_a_component_prints_its_public_parameters_on_one_line():
    gmm = quadriga.build("target", "gaussian-mixture", preset="4-mode-2d")
    text = repr(gmm)
    assert text.startswith("GaussianMixture(") and "preset='4-mode-2d'" in text and "dim=2" in text
    assert "\n" not in text and "_w=" not in text and "_evecs" not in text and "tensor(" not in text
    srmc = quadriga.build("sampler", "srmc", base_kernel={"use": "mala", "step_size": 0.05})
    assert "base_kernel=MALA(" in repr(srmc) and "step_size=0.05" in repr(srmc) and "\n" not in repr(srmc)


def test_an_evaluator_takes_a_list_or_a_dict_of_subjects():
    gmm = quadriga.build("target", "gaussian-mixture", preset="4-mode-2d")
    g = torch.Generator().manual_seed(0)
    samples = quadriga.build("sampler", "mala", step_size=0.3, num_samples=200, burn_in=50).sample(
        gmm, generator=g
    )
    exact = quadriga.Samples(x=gmm.sample(800, generator=torch.Generator().manual_seed(3)))
    energy = quadriga.build("evaluator", "energy-distance", num_reference_samples=500)

    def values(subject):
        return energy.evaluate(subject, reference=gmm, generator=torch.Generator().manual_seed(1)).values

    by_list = values([samples, exact])
    assert set(by_list) == {
        f"subject{i}/{m}" for i in (0, 1) for m in ("energy_distance", "energy_distance_sqrt")
    }
    by_dict = values({"mala": samples, "exact": exact})
    assert by_dict["mala/energy_distance"] == by_list["subject0/energy_distance"]
    assert by_dict["exact/energy_distance"] == by_list["subject1/energy_distance"]
    assert by_dict["exact/energy_distance"] < by_dict["mala/energy_distance"]  # exact draws are closer
    assert list(values(samples)) == ["subject/energy_distance", "subject/energy_distance_sqrt"]


def test_named_uses_stage_names_of_run_artifacts_and_indices_otherwise():
    a = quadriga.Samples(x=torch.zeros(2, 1), info={"stage": "mala"})
    b = quadriga.Samples(x=torch.ones(2, 1), info={"stage": "hmc"})
    c = quadriga.Samples(x=torch.ones(2, 1))
    assert list(named([a, b])) == ["mala", "hmc"]
    assert list(named((a, c))) == ["subject0", "subject1"]
    assert list(named([a, a])) == ["subject0", "subject1"]  # two of one stage: by position
    assert named(a) == {"mala": a} and named(c) == {"subject": c}


def test_override_errors_of_the_python_api_name_the_argument(tmp_path):
    with pytest.raises(ConfigError) as exc:
        quadriga.api.run("gmm-mcmc-baselines", overrides=['stage.rwm.num_samples="x"'], runs_root=tmp_path)
    assert str(exc.value).startswith("overrides=[...], [stage.rwm], key 'num_samples'")
    assert "--set" not in str(exc.value) and "command line" not in str(exc.value)
    with pytest.raises(
        ConfigError, match=r"^overrides=\[\.\.\.\]: 'nonsense' is not KEY=VALUE \(e\.g\. stage"
    ):
        quadriga.api.run("gmm-mcmc-baselines", overrides=["nonsense"], runs_root=tmp_path)


def test_the_tour_renames_the_printed_pipeline_and_info_says_to(tmp_path):
    import shlex
    import subprocess
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    exe = Path(sys.executable).with_name("quadriga")
    printed = subprocess.run(
        [str(exe), "info", "gmm-mcmc-baselines"], capture_output=True, text=True, check=True
    ).stdout
    assert "change [pipeline] name below first" in printed
    tour = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(ln for ln in tour.splitlines() if ln.startswith("quadriga info gmm-mcmc-baselines |"))
    sed = shlex.split(line.split("|", 1)[1].split(">", 1)[0])
    edited = subprocess.run(sed, input=printed, capture_output=True, text=True, check=True).stdout
    data = tomllib.loads(edited)
    assert data["pipeline"]["name"] == "my-pipeline"
    assert data["stage"] == tomllib.loads(printed)["stage"]
    (tmp_path / "my-pipeline.toml").write_text(edited, encoding="utf-8")
    assert quadriga.api.check(tmp_path / "my-pipeline.toml").name == "my-pipeline"


def test_an_evaluator_given_no_subjects_refuses():
    for empty in ([], {}, ()):
        with pytest.raises(ConfigError, match="no subjects given") as info:
            named(empty)
        assert info.value.key == "subject"


def test_the_readme_python_snippet_runs_as_pasted(tmp_path, monkeypatch):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.findall(r"```python\n(.*?)```", readme, flags=re.S)[0]  # the tour's, "From Python:"
    assert "MySampler" in block
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    try:
        exec(compile(block, "README.md", "exec"), namespace)
    finally:
        from quadriga.registry import reset_registry

        reset_registry()  # forget the notebook registration
    assert namespace["result"].status == "finished"
    df = namespace["df"]
    (energy,) = df[(df.subject == "mine") & (df.metric == "energy_distance")]["value"]
    # exact draws from the target: what remains is the estimate's finite-sample part, O(1/n)
    assert 0 <= energy < 0.05
    assert namespace["mala"].step_size == 0.1
